"""Combine retrieval signals into one relevance per candidate (pure functions).

Each candidate carries raw signals: ``dense`` (cosine similarity), ``keyword``
(BM25), and the structured ones in [0, 1] — ``entity``, ``time``, ``speaker``,
``kind`` (matches the routed kind) and ``graph`` (spreading activation). Dense
and keyword are normalised per query by the best score among the candidates, so
each lies in [0, 1] whatever the embedder or corpus. The weighted sum is divided
by the weights of the signals in play, which keeps relevance in [0, 1].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ucma_core.config import FusionConfig

__all__ = ["SIGNALS", "fuse"]

SIGNALS = ("dense", "keyword", "entity", "time", "speaker", "kind", "graph")


def _weight(config: FusionConfig, signal: str) -> float:
    return float(getattr(config, signal))


def fuse(
    signals: Mapping[str, Mapping[str, float]], config: FusionConfig, active: Iterable[str]
) -> dict[str, float]:
    """Relevance in [0, 1] for each candidate id in ``signals``.

    ``active`` names the signals that apply to this query (dense always does); a
    signal not in play adds neither to the score nor to the divisor.
    """
    in_play = [s for s in SIGNALS if s in set(active) | {"dense"} and _weight(config, s) > 0]
    best = {s: max((c.get(s, 0.0) for c in signals.values()), default=0.0) for s in ("dense", "keyword")}
    total = sum(_weight(config, s) for s in in_play) or 1.0
    fused: dict[str, float] = {}
    for memory_id, sig in signals.items():
        score = 0.0
        for s in in_play:
            value = max(0.0, sig.get(s, 0.0))
            if s in best:
                value = value / best[s] if best[s] > 0 else 0.0
            score += _weight(config, s) * min(1.0, value)
        fused[memory_id] = score / total
    return fused
