"""How well each candidate fits the time a question asks about: evidence, not a filter.

:class:`TimeAsk` is what retrieval prefers once the router's phrase (or an event anchor)
is resolved: a :class:`~ucma_core.retrieval.timesignal.Span` with graded edges, optionally
a moment inside it to be near (the anchor of "before / after <event>"), or no span at all
for vague recency ("lately": the most recent of the matching memories). :func:`fit` scores
candidates in [0, 1] from their timestamps and from what their own text says about time
("we took that road trip last summer"); :func:`modulate` folds the fit into relevance as
a bounded multiplier, so a right time lifts the matching memories well above the rest while
a misread one cannot carry memories that match nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import tzinfo

from ucma_core.retrieval.timesignal import DAY, Span, mentions

__all__ = ["TimeAsk", "fit", "modulate", "recency_fit"]

#: Half-life of the preference for the newest matching memory ("lately"), in seconds.
RECENCY_HALF_LIFE = 30.0 * DAY
#: Inside a "before / after <event>" range, how fast the preference for being near the event fades.
NEAR_HALF_LIFE = 10.0 * DAY


@dataclass(frozen=True)
class TimeAsk:
    """The time retrieval prefers: a span (``None`` for recency), the words that named it and,
    for event anchors, the moment to be near and the memory that told of the event (which
    gets no lift: the question asks about what happened around it)."""

    span: Span | None
    words: str = ""
    near: float | None = None
    event: str | None = None

    @property
    def recency(self) -> bool:
        return self.span is None


def fit(
    ask: TimeAsk,
    timestamps: Mapping[str, float],
    texts: Mapping[str, str],
    tz: tzinfo,
) -> dict[str, float]:
    """The fit in [0, 1] of each candidate in ``timestamps`` to a span ``ask``.

    A candidate fits by its timestamp (graded at the span's edges; for an event anchor,
    more the nearer it is) or by a time its own text mentions (resolved against its
    timestamp), whichever fits better. ``texts`` holds the text of the candidates worth
    reading (others are judged by their timestamp alone).
    """
    span = ask.span
    if span is None:
        raise ValueError("fit needs a span; use recency_fit for vague recency")
    words = ask.words.lower()
    out: dict[str, float] = {}
    for memory_id, at in timestamps.items():
        score = span.membership(at)
        if ask.near is not None and score > 0:
            score *= 0.6 + 0.4 * 0.5 ** (abs(at - ask.near) / NEAR_HALF_LIFE)
        text = texts.get(memory_id)
        if text and score < 1.0:
            for phrase in mentions(text, at, tz):
                assert phrase.span is not None
                score = max(score, span.overlap(phrase.span))
            if len(words) > 6 and words in text.lower():
                score = max(score, 0.8)
        out[memory_id] = score
    if ask.event is not None and ask.event in out:
        out[ask.event] = 0.0
    return out


def recency_fit(timestamps: Mapping[str, float], plausible: Mapping[str, float]) -> dict[str, float]:
    """Vague recency: 1.0 for the newest of the ``plausible`` candidates (those that match the
    topic) and anything newer, halving every 30 days before it."""
    if not plausible:
        return {}
    newest = max(timestamps[i] for i in plausible if i in timestamps)
    return {i: 0.5 ** (max(0.0, newest - at) / RECENCY_HALF_LIFE) for i, at in timestamps.items()}


def modulate(relevance: Mapping[str, float], fits: Mapping[str, float], weight: float) -> dict[str, float]:
    """``relevance × (1 + weight × fit)``, rescaled so the best possible lift is 1.

    A memory that fits the time gains up to ``1 + weight`` times the relevance of one that
    does not; one that matches nothing else stays low however well it fits.
    """
    if weight <= 0 or not fits:
        return dict(relevance)
    top = 1.0 + weight * max(fits.values(), default=0.0)
    return {i: r * (1.0 + weight * fits.get(i, 0.0)) / top for i, r in relevance.items()}
