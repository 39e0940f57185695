"""Combine retrieval signals into one relevance per candidate (pure functions).

Each candidate carries raw signals: ``dense`` (cosine similarity), ``keyword`` (BM25) and
the structured ones in [0, 1] — ``entity`` (the entity index), ``speaker``, ``kind``
(matches the routed kind), ``graph`` (spreading activation), ``context`` (the session
turn it answers matched) and ``hop`` (it mentions a name the best matches mention).

Dense and keyword scores are calibrated per query before they are weighed:

* keyword (BM25) is divided by the best score among the candidates;
* dense is spread between a floor and the best: cosine similarities of short, generic
  texts bunch up just below the best, so dividing by the best alone lets them tie with
  the one memory that shares the question's rare words. The floor is a quantile of the
  candidates' similarities (``FusionConfig.dense_floor``), so only clearly closer
  memories keep a high dense score;
* a reciprocal-rank term (``FusionConfig.rank_fusion``) adds the two rankings' order,
  which no score scale can distort.

The weighted sum is divided by the weights of the signals in play, which keeps relevance in
[0, 1]. Time is not a signal here: :func:`ucma_core.retrieval.timefit.modulate` lifts the
relevance of memories that fit the time asked about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from ucma_core.config import FusionConfig

__all__ = ["SIGNALS", "calibrated", "fuse"]

SIGNALS = ("dense", "keyword", "entity", "speaker", "kind", "graph", "hop")
#: Fewest candidates with a dense score for the dense floor to apply.
MIN_POOL = 10
#: The constant of reciprocal-rank fusion (rank r scores 1 / (RRF_K + r)).
RRF_K = 60


def _weight(config: FusionConfig, signal: str) -> float:
    return float(getattr(config, signal))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def calibrated(
    signals: Mapping[str, Mapping[str, float]], config: FusionConfig
) -> dict[str, dict[str, float]]:
    """Dense and keyword scores mapped to [0, 1] for this query (see the module docstring);
    the structured signals as they are."""
    # ``x if x > 0.0 else 0.0`` is ``max(0.0, x)`` (NaN too), without a call per candidate
    dense = [d if (d := s.get("dense", 0.0)) > 0.0 else 0.0 for s in signals.values()]
    best_dense = max(dense, default=0.0)
    # the floor needs a pool to be a floor: with few candidates every one may be relevant
    floor = _quantile(dense, config.dense_floor) if config.dense_floor > 0 and len(dense) >= MIN_POOL else 0.0
    if best_dense - floor < 1e-6:
        floor = 0.0
    best_keyword = max((s.get("keyword", 0.0) for s in signals.values()), default=0.0)
    out: dict[str, dict[str, float]] = {}
    spread = best_dense - floor if best_dense > floor else 0.0
    for (memory_id, sig), d in zip(signals.items(), dense, strict=True):
        # ``min(1.0, max(0.0, v))``, spelled out
        values = {
            k: (v if v < 1.0 else 1.0) if v > 0.0 else 0.0
            for k, v in sig.items()
            if k != "dense" and k != "keyword"
        }
        values["dense"] = max(0.0, d - floor) / spread if spread else 0.0
        k = sig.get("keyword", 0.0)
        values["keyword"] = k / best_keyword if best_keyword > 0 and k > 0 else 0.0
        out[memory_id] = values
    return out


@lru_cache(maxsize=1024)
def _six(value: float) -> float:
    """``value`` to 6 significant digits. Cached: a retrieval fuses twice, the second time
    mostly over the same scores, and the decimal round trip is the dearest step of a rank."""
    return float(f"{value:.6g}")


def _ranks(signals: Mapping[str, Mapping[str, float]], signal: str) -> dict[str, int]:
    """1-based ranks by ``signal``; equal scores (to 6 significant digits: index statistics
    leave float noise) share a rank, so the order of ties cannot move a score."""
    scores = {i: _six(s[signal]) for i, s in signals.items() if s.get(signal, 0.0) > 0}
    counts: dict[float, int] = {}
    for value in scores.values():
        counts[value] = counts.get(value, 0) + 1
    rank_of: dict[float, int] = {}
    seen = 0
    for value in sorted(counts, reverse=True):
        rank_of[value] = seen + 1
        seen += counts[value]
    return {i: rank_of[v] for i, v in scores.items()}


def fuse(
    signals: Mapping[str, Mapping[str, float]], config: FusionConfig, active: Iterable[str]
) -> dict[str, float]:
    """Relevance in [0, 1] for each candidate id in ``signals``.

    ``active`` names the signals that apply to this query (dense always does); a
    signal not in play adds neither to the score nor to the divisor.
    """
    playing = set(active) | {"dense"}
    in_play = [s for s in SIGNALS if s in playing and _weight(config, s) > 0]
    weighted = [(s, _weight(config, s)) for s in in_play]
    total = sum(w for _, w in weighted) or 1.0
    values = calibrated(signals, config)
    fused: dict[str, float] = {}
    for memory_id, sig in values.items():
        value = 0.0  # summed in ``weighted``'s order, as ``sum`` would
        for s, w in weighted:
            if s in sig:
                value += w * sig[s]
        fused[memory_id] = value / total
    share = config.rank_fusion
    if share > 0:
        ranks = [_ranks(signals, s) for s in ("dense", "keyword") if s in in_play]
        rrf: dict[str, float] = {}
        for i in signals:
            term: float = 0  # as ``sum`` adds: from the integer 0, in ``ranks``' order
            for r in ranks:
                if i in r:
                    term += 1.0 / (RRF_K + r[i])
            rrf[i] = term
        best = max(rrf.values(), default=0.0)
        if best > 0:
            fused = {i: (1 - share) * fused[i] + share * rrf[i] / best for i in fused}
    if "context" in playing and config.context > 0:
        # context closes part of the gap to the best match: a reply with no words of its own rises
        # to ``context`` of the best when the turn it answers is the best; among replies saying the
        # same thing, the one whose context matches comes first
        top = max(fused.values(), default=0.0)
        fused = {
            i: v + config.context * values[i].get("context", 0.0) * max(0.0, top - v)
            for i, v in fused.items()
        }
    return fused
