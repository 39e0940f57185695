"""The query router: decides, with no model call, what kind of question a query is.

* **temporal** — the query names a time ("yesterday", "last week", "in May",
  "two weeks ago", "since March", "on Monday", "when did …", "before / after …");
  the time is resolved to an epoch range against the memory's clock.
* **procedural** — "how do I …", "how to …", "steps to …".
* **entity** — "what do you know about X", "who is X", "tell me about X".
* **hybrid** — everything else.

Independently of the kind, the router picks out a speaker ("what did Caroline
say …", "according to Bob …") and, for "before / after <event>", the event text
so the retriever can anchor the range on the matching memory.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from enum import Enum

from ucma_core.timezones import zone

__all__ = ["Route", "RouteKind", "route"]

_DAY = 86_400.0


class RouteKind(str, Enum):
    TEMPORAL = "temporal"
    PROCEDURAL = "procedural"
    ENTITY = "entity"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Route:
    """The router's decision, attached to every result for debugging.

    ``time_range`` is ``(start, end)`` in epoch seconds when the query names a time;
    ``anchor`` is the event text of "before / after <event>" with ``anchor_side``
    ``"before"`` or ``"after"``; ``entity`` and ``speaker`` are names found in the query.
    """

    kind: RouteKind
    time_range: tuple[float, float] | None = None
    anchor: str | None = None
    anchor_side: str | None = None
    entity: str | None = None
    speaker: str | None = None
    reason: str = ""
    #: The query without its time expression or event anchor: what to search for.
    topic: str = ""


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
_NUM = r"(\d+|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(day|week|month|year)s?"
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_RE = "|".join(_WEEKDAYS)

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
_TIME_PHRASES = re.compile(
    r"\b(?:(?:in the )?(?:last|past|this|previous) (?:"
    + _NUM
    + r" )?"
    + _UNIT
    + r"|"
    + _NUM
    + r" "
    + _UNIT
    + r" ago"
    + r"|today|yesterday|tonight|last night|this (?:morning|afternoon|evening)|recently|lately"
    + r"|(?:on |last )?(?:"
    + _WEEKDAY_RE
    + r")"
    + r"|(?:(?:in|during|since|before|after|from|on) )?(?:the )?(?:\d{1,2}(?:st|nd|rd|th)? )?(?:"
    + _MONTH_RE
    + r")(?: \d{1,2}(?:st|nd|rd|th)?)?(?:,? \d{4})?"
    + r"|(?:in|during|since|before|after) \d{4}|(?:on )?\d{4}-\d{2}-\d{2})\b",
    re.I,
)
_ANCHOR = re.compile(
    r"\b(?P<side>before|after|since)\s+(?P<event>(?:the|my|our|his|her|their|we|i)\b[^?.,;]*)", re.I
)


_tz = zone


def _day_start(d: date, tz: tzinfo) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=tz).timestamp()


def _month_range(year: int, month: int, tz: tzinfo) -> tuple[float, float]:
    start = datetime(year, month, 1, tzinfo=tz)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
    return start.timestamp(), end.timestamp() - 1e-3


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _time_range(q: str, now: float, tz: tzinfo) -> tuple[tuple[float, float] | None, str]:
    """Resolve the first time expression in ``q`` (lower-cased) to an epoch range."""
    today = datetime.fromtimestamp(now, tz).date()
    today_start = _day_start(today, tz)
    if re.search(r"\btoday\b|\bthis morning\b|\btonight\b|\bthis evening\b", q):
        return (today_start, now), "today"
    if re.search(r"\blast night\b", q):
        return (today_start - 6 * 3600, today_start + 6 * 3600), "last night"
    if re.search(r"\byesterday\b", q):
        return (today_start - _DAY, today_start - 1e-3), "yesterday"
    if m := re.search(r"\b(?:in the )?(?:last|past) " + _NUM + r" " + _UNIT + r"\b", q):
        n, unit = _number(m.group(1)), m.group(2)
        return (now - n * _unit_seconds(unit), now), f"last {n} {unit}s"
    if m := re.search(r"\b" + _NUM + r" " + _UNIT + r" ago\b", q):
        n, unit = _number(m.group(1)), m.group(2)
        span = _unit_seconds(unit)
        if unit == "day":
            start = _day_start(today - timedelta(days=n), tz)
            return (start, start + _DAY - 1e-3), f"{n} days ago"
        return (now - (n + 0.5) * span, now - (n - 0.5) * span), f"{n} {unit}s ago"
    if m := re.search(r"\b(this|last|previous) (week|month|year)\b", q):
        which, unit = m.group(1), m.group(2)
        if unit == "week":
            monday = today - timedelta(days=today.weekday())
            start = _day_start(monday, tz)
            return ((start, now) if which == "this" else (start - 7 * _DAY, start - 1e-3)), f"{which} week"
        if unit == "month":
            year, month = today.year, today.month
            if which != "this":
                year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            start, end = _month_range(year, month, tz)
            return (start, min(end, now)), f"{which} month"
        year = today.year if which == "this" else today.year - 1
        start = datetime(year, 1, 1, tzinfo=tz).timestamp()
        end = datetime(year + 1, 1, 1, tzinfo=tz).timestamp() - 1e-3
        return (start, min(end, now)), f"{which} year"
    if re.search(r"\b(?:recently|lately)\b", q):
        return (now - 14 * _DAY, now), "recently"
    if m := re.search(r"\b(?:on|last) (" + _WEEKDAY_RE + r")\b", q):
        delta = (today.weekday() - _WEEKDAYS[m.group(1)]) % 7 or 7
        start = _day_start(today - timedelta(days=delta), tz)
        return (start, start + _DAY - 1e-3), f"on {m.group(1)}"
    if m := re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", q):
        start = _day_start(date(int(m.group(1)), int(m.group(2)), int(m.group(3))), tz)
        return (start, start + _DAY - 1e-3), m.group(0)
    if m := re.search(
        r"\b(?:(\d{1,2})(?:st|nd|rd|th)? (" + _MONTH_RE + r")|(" + _MONTH_RE + r") (\d{1,2})"
        r"(?:st|nd|rd|th)?)\b(?:,? (\d{4}))?",
        q,
    ):
        day = int(m.group(1) or m.group(4))
        month = _MONTHS[(m.group(2) or m.group(3))]
        year = int(m.group(5)) if m.group(5) else _latest_year(today, month, day)
        if 1 <= day <= calendar.monthrange(year, month)[1]:
            start = _day_start(date(year, month, day), tz)
            return (start, start + _DAY - 1e-3), m.group(0)
    if m := re.search(r"\b(since|before|after|in|during|from) (" + _MONTH_RE + r")\b(?: (\d{4}))?", q):
        prep, month = m.group(1), _MONTHS[m.group(2)]
        year = int(m.group(3)) if m.group(3) else _latest_year(today, month, 1)
        start, end = _month_range(year, month, tz)
        if prep == "since" or prep == "after":
            return ((start if prep == "since" else end), now), f"{prep} {m.group(2)}"
        if prep == "before":
            return (0.0, start), f"before {m.group(2)}"
        return (start, min(end, now)), f"in {m.group(2)}"
    if m := re.search(r"\b(in|during|since|before|after) (\d{4})\b", q):
        year = int(m.group(2))
        start = datetime(year, 1, 1, tzinfo=tz).timestamp()
        end = datetime(year + 1, 1, 1, tzinfo=tz).timestamp() - 1e-3
        prep = m.group(1)
        if prep == "since":
            return (start, now), f"since {year}"
        if prep == "before":
            return (0.0, start), f"before {year}"
        if prep == "after":
            return (end, now), f"after {year}"
        return (start, end), f"in {year}"
    return None, ""


def _latest_year(today: date, month: int, day: int) -> int:
    """The year in which ``month``/``day`` most recently fell (this year unless still ahead)."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _unit_seconds(unit: str) -> float:
    return {"day": _DAY, "week": 7 * _DAY, "month": 30.44 * _DAY, "year": 365.25 * _DAY}[unit]


def _topic(stripped: str, query: str) -> str:
    """``stripped`` tidied up, or the whole query when nothing of substance is left."""
    text = re.sub(r"\s+", " ", stripped).strip(" ,;?!.")
    return text if len(re.findall(r"\w+", text)) >= 2 else query


def route(query: str, now: float, *, timezone: str | None = None) -> Route:
    """Classify ``query`` and resolve its time expression against ``now`` (epoch seconds).

    Example:
        >>> r = route("what did Ana say last week about the bike?", now=1_750_000_000)
        >>> r.kind.value, r.speaker, r.time_range is not None
        ('temporal', 'Ana', True)
        >>> route("how do I reset my password?", now=0).kind.value
        'procedural'
    """
    tz = _tz(timezone)
    q = query.lower()
    speaker_match = _SPEAKER.search(query)
    speaker = None
    if speaker_match:
        speaker = speaker_match.group("name") or speaker_match.group("name2")
        if speaker and speaker.lower() in {"i", "you", "we", "they", "he", "she", "it"}:
            speaker = None
    time_range, why = _time_range(q, now, tz)
    if time_range is not None:
        return Route(
            RouteKind.TEMPORAL,
            time_range=time_range,
            speaker=speaker,
            reason=f"time: {why}",
            topic=_topic(_TIME_PHRASES.sub(" ", query), query),
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
    if re.search(r"^\s*when\b|\bwhat (?:time|day|date|year|month)\b|\bhow long ago\b", q):
        return Route(RouteKind.TEMPORAL, speaker=speaker, reason="asks when", topic=query)
    if _PROCEDURAL.search(query):
        return Route(RouteKind.PROCEDURAL, speaker=speaker, reason="asks how to", topic=query)
    if m := _ENTITY.search(query):
        name = re.sub(r"^(?:the|a|an)\s+", "", m.group("name").strip(), flags=re.I)
        return Route(
            RouteKind.ENTITY, entity=name, speaker=speaker, reason="asks about an entity", topic=query
        )
    return Route(RouteKind.HYBRID, speaker=speaker, reason="no special cue", topic=query)
