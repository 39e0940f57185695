"""The query router: decides, with no model call, what kind of question a query is.

* **temporal** — the query names a time ("yesterday", "last week", "in May",
  "two weeks ago", "since March", "on Monday", "last summer", "recently", "when did …",
  "before / after …"); :mod:`ucma_core.retrieval.timesignal` resolves it against the
  memory's clock to a span with graded edges, or to a preference for recent memories.
* **procedural** — "how do I …", "how to …", "steps to …".
* **entity** — "what do you know about X", "who is X", "tell me about X".
* **hybrid** — everything else.

Independently of the kind, the router picks out a speaker ("what did Caroline
say …", "according to Bob …") and, for "before / after <event>", the event text
so the retriever can anchor the range on the matching memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ucma_core.retrieval.timesignal import TimePhrase, read, strip
from ucma_core.timezones import zone
from ucma_core.validation import EPOCH_MIN

__all__ = ["Route", "RouteKind", "route"]


class RouteKind(str, Enum):
    TEMPORAL = "temporal"
    PROCEDURAL = "procedural"
    ENTITY = "entity"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Route:
    """The router's decision, attached to every result for debugging.

    ``time`` is the time phrase read in the query (its span has graded edges; no span
    means "more recent is more likely"), and ``time_range`` its core ``(start, end)``
    in epoch seconds (``(EPOCH_MIN, now)``, everything up to now, for vague recency);
    ``anchor`` is the event text of "before / after <event>" with ``anchor_side``
    ``"before"`` or ``"after"``;
    ``entity`` and ``speaker`` are names found in the query.
    """

    kind: RouteKind
    time_range: tuple[float, float] | None = None
    anchor: str | None = None
    anchor_side: str | None = None
    entity: str | None = None
    speaker: str | None = None
    reason: str = ""
    #: The query without its time expression or event anchor: what dense search looks for
    #: (keyword search keeps the time words, which memories may contain too).
    topic: str = ""
    time: TimePhrase | None = None


_PROCEDURAL = re.compile(
    r"^\s*(?:how (?:do|can|should|would) (?:i|we|you)|how to|what(?:'s| is| are) the steps|steps (?:to|for)|"
    r"what(?:'s| is) the (?:procedure|process|way) (?:to|for)|procedure (?:to|for)|walk me through)\b",
    re.I,
)
_ENTITY = re.compile(
    r"^\s*(?:what do (?:you|we) know about|what (?:is|are) known about|tell me about|who (?:is|was|are)|"
    r"what about|info(?:rmation)? (?:on|about))\s+(?P<name>.+?)[\s?.!]*$",
    re.I,
)
_SPEAKER = re.compile(
    r"\b(?:what|when|where|why|how|did|has|have)\b[^?]*?\b(?P<name>[A-Z][\w'-]+)\s+"
    r"(?:say|said|mention|mentioned|tell|told|talk|talked|ask|asked|share|shared|think|thought|feel|felt)\b"
    r"|\baccording to (?P<name2>[A-Z][\w'-]+)",
)
_ANCHOR = re.compile(
    r"\b(?P<side>before|after|since)\s+"
    r"(?P<event>(?:(?:the|my|our|his|her|their|we|i)\b|[A-Z][\w-]*(?:'s|’s)\s)[^?.,;]*)",
    re.I,
)


def _topic(stripped: str, query: str) -> str:
    """``stripped`` tidied up, or the whole query when nothing of substance is left."""
    text = re.sub(r"\s+", " ", stripped).strip(" ,;?!.")
    return text if len(re.findall(r"\w+", text)) >= 2 else query


def route(query: str, now: float, *, timezone: str | None = None) -> Route:
    """Classify ``query`` and resolve its time expression against ``now`` (epoch seconds).

    Examples:
        >>> r = route("what did Ana say last week about the bike?", now=1_750_000_000)
        >>> r.kind.value, r.speaker, r.time_range is not None
        ('temporal', 'Ana', True)
        >>> route("how do I reset my password?", now=0).kind.value
        'procedural'
    """
    speaker_match = _SPEAKER.search(query)
    speaker = None
    if speaker_match:
        speaker = speaker_match.group("name") or speaker_match.group("name2")
        if speaker and speaker.lower() in {"i", "you", "we", "they", "he", "she", "it"}:
            speaker = None
    time = read(query, now, zone(timezone))
    if time is not None:
        span = time.span
        return Route(
            RouteKind.TEMPORAL,
            time_range=(EPOCH_MIN, now) if span is None else (span.start, span.end),
            speaker=speaker,
            reason=f"time: {time.label}" if span is not None else f"recency: {time.label!r}",
            topic=_topic(strip(query, time), query),
            time=time,
        )
    if anchor := _ANCHOR.search(query):
        return Route(
            RouteKind.TEMPORAL,
            anchor=anchor.group("event").strip(),
            speaker=speaker,
            anchor_side="before" if anchor.group("side").lower() == "before" else "after",
            reason=f"relative to an event: {anchor.group(0).strip()}",
            topic=_topic(query[: anchor.start()] + " " + query[anchor.end() :], query),
        )
    if re.search(r"^\s*when\b|\bwhat (?:time|day|date|year|month)\b|\bhow long ago\b", query, re.I):
        return Route(RouteKind.TEMPORAL, speaker=speaker, reason="asks when", topic=query)
    if _PROCEDURAL.search(query):
        return Route(RouteKind.PROCEDURAL, speaker=speaker, reason="asks how to", topic=query)
    if m := _ENTITY.search(query):
        name = re.sub(r"^(?:the|a|an)\s+", "", m.group("name").strip(), flags=re.I)
        return Route(
            RouteKind.ENTITY, entity=name, speaker=speaker, reason="asks about an entity", topic=query
        )
    return Route(RouteKind.HYBRID, speaker=speaker, reason="no special cue", topic=query)
