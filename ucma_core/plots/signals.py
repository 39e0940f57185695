"""Why a memory was recalled: each result's score split into what its factors contributed.

:meth:`Memory.remember <ucma_core.Memory.remember>` ranks by
``score = g × (w_rel·relevance + w_imp·importance + w_rec·recency + w_ret·retention) / Σw``
(weights from :class:`~ucma_core.config.RankingConfig`; ``g`` is ``generated_weight``
for assistant, system and consolidation text, else 1, times the result's ``demoted``
signal when the sleep cycle demoted it). :func:`score_contributions`
gives each term; :func:`plot_signals` draws them next to the raw retrieval signals
behind ``relevance`` (dense, keyword, entity, time, speaker, kind, graph).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ucma_core.config import RankingConfig
from ucma_core.errors import InvalidInputError
from ucma_core.plots.figure import new_figure, save, short
from ucma_core.records import RetrievalResult, Source

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FACTORS", "SIGNALS", "plot_signals", "score_contributions"]

#: The factors of the final rank, in the order they are drawn.
FACTORS = ("relevance", "importance", "recency", "retention")
#: The retrieval signals behind relevance, in the order they are drawn.
SIGNALS = ("dense", "keyword", "entity", "time", "speaker", "kind", "graph")
_FACTOR_COLOURS = ("#4C78A8", "#F58518", "#54A24B", "#B279A2")
_SIGNAL_COLOURS = {
    "dense": "#2E86AB",
    "keyword": "#A23B72",
    "entity": "#F18F01",
    "time": "#C73E1D",
    "speaker": "#3B1F2B",
    "kind": "#6A994E",
    "graph": "#8D99AE",
}


def score_contributions(result: RetrievalResult, ranking: RankingConfig | None = None) -> dict[str, float]:
    """What each factor added to ``result.score``: ``{relevance, importance, recency,
    retention}``, summing to the score (up to its rounding to 6 places).

    Examples:
        >>> from ucma_core import RankingConfig
        >>> from ucma_core.records import Episode, MemoryType, RetrievalResult
        >>> ep = Episode("e1", MemoryType.EPISODIC, "hi", 0.0, None, None, None, 0.5, "user", (), {}, (),
        ...              stability=1.0, last_access=0.0, access_count=0)
        >>> r = RetrievalResult("e1", MemoryType.EPISODIC, "hi", 0.0, 0.0, {}, (), relevance=1.0,
        ...                     importance=0.5, recency=1.0, retention=1.0, record=ep)
        >>> weights = RankingConfig(relevance=0.6, importance=0.1, recency=0.1, retention=0.2)
        >>> {k: round(v, 4) for k, v in score_contributions(r, weights).items()}
        {'relevance': 0.6, 'importance': 0.05, 'recency': 0.1, 'retention': 0.2}
    """
    weights = ranking or RankingConfig()
    total = weights.relevance + weights.importance + weights.recency + weights.retention
    try:
        observed = Source.parse(result.record.source).observed
    except InvalidInputError:
        observed = True
    factor = (1.0 if observed else weights.generated_weight) * result.signals.get("demoted", 1.0)
    return {name: factor * getattr(weights, name) * getattr(result, name) / total for name in FACTORS}


def plot_signals(
    results: Sequence[RetrievalResult],
    path: str | os.PathLike[str] | None = None,
    *,
    ranking: RankingConfig | None = None,
    title: str | None = None,
) -> Figure:
    """Two panels for the results of one ``remember`` call, best first: the score split into
    its factors' contributions, and the retrieval signals behind relevance (dense and
    graph as returned, keyword divided by the best keyword score among the results, the
    structured signals 0..1).

    Pass ``ranking=memory.config.ranking`` when the memory does not use the default weights.
    """
    shown = list(results)[:15]
    if not shown:
        raise InvalidInputError("plot_signals needs at least one result")
    labels = [f"{n}. {short(r.content, 36)}" for n, r in enumerate(shown, 1)]
    rows = list(range(len(shown)))[::-1]
    figure = new_figure(11.0, 1.2 + 0.45 * len(shown))
    left, right = figure.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [1.1, 1.0]})
    starts = [0.0] * len(shown)
    parts = [score_contributions(r, ranking) for r in shown]
    for name, colour in zip(FACTORS, _FACTOR_COLOURS, strict=True):
        widths = [p[name] for p in parts]
        left.barh(rows, widths, left=starts, color=colour, label=name, height=0.6)
        starts = [s + w for s, w in zip(starts, widths, strict=True)]
    for row, r in zip(rows, shown, strict=True):
        left.text(r.score, row, f" {r.score:.3f}", va="center", fontsize=7)
    left.set_yticks(rows, labels, fontsize=7)
    left.set_xlabel("contribution to the score")
    left.legend(loc="lower right", fontsize=7, frameon=False)
    left.set_xlim(0.0, max(r.score for r in shown) * 1.2 or 1.0)
    present = [s for s in SIGNALS if any(s in r.signals for r in shown)]
    best_keyword = max((r.signals.get("keyword", 0.0) for r in shown), default=0.0)
    height = 0.8 / max(len(present), 1)
    for n, name in enumerate(present):
        values = [r.signals.get(name, 0.0) for r in shown]
        if name == "keyword" and best_keyword > 0:
            values = [v / best_keyword for v in values]
        offsets = [row + 0.4 - height * (n + 0.5) for row in rows]
        label = name if name != "keyword" else "keyword (÷ best)"
        right.barh(offsets, values, height=height, label=label, color=_SIGNAL_COLOURS[name])
    right.set_xlabel("retrieval signal")
    right.set_xlim(0.0, 1.05)
    right.legend(loc="lower right", fontsize=7, frameon=False)
    route = shown[0].route
    figure.suptitle(title or f"Why these memories (route: {route})", fontsize=10)
    save(figure, path)
    return figure
