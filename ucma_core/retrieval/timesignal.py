"""Time as people say it: phrases resolved to spans with graded edges, in questions and in memories.

A time phrase ("yesterday", "last week", "in March", "two years ago", "last summer",
"last Christmas", "the weekend before 12 June", "2025-02-14") resolves, against a moment and
a time zone, to a :class:`Span`: a core range and a ``margin`` over which membership fades
outside it, because dates in conversation are loose ("in March" for something told on
1 April). Vague counts are read loosely: "a couple of", "a few" and "several" weeks (days,
months, years) ago span one to three, two to five and three to seven of them. Vague
phrases ("recently", "lately", "these days", "now") resolve to no range: they ask for the
most recent of the matching memories.

The same reader runs over a memory's own text against the memory's timestamp, so a memory
that says "I took up pottery back in 2023" matches "what did she take up two years ago?"
(:func:`mentions`). Everything here is a pure function of its arguments.

Every reading is total: any text, read at any moment UCMA accepts
(:data:`~ucma_core.validation.EPOCH_MIN` .. :data:`~ucma_core.validation.EPOCH_MAX`), gives
phrases or nothing, never an exception. A phrase whose time the calendar cannot hold
("the pyramids were built about 4000 years ago", "99999999999 days ago") names no time; a
span that runs past those bounds ("the last 9000 years") is cut at them.

Examples:
    >>> from datetime import datetime, timezone
    >>> now = datetime(2025, 6, 18, 15, tzinfo=timezone.utc).timestamp()
    >>> found = read("what did Ana say last week?", now, timezone.utc)
    >>> found.label, found.words
    ('last week', 'last week')
    >>> datetime.fromtimestamp(found.span.start, timezone.utc).date().isoformat()
    '2025-06-09'
"""

from __future__ import annotations

import bisect
import calendar
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import NamedTuple

from ucma_core.validation import EPOCH_MAX, EPOCH_MIN

__all__ = ["DAY", "Span", "TimePhrase", "local_day", "mentions", "read", "strip"]

DAY = 86_400.0
_HOUR = 3_600.0


@dataclass(frozen=True)
class Span:
    """``[start, end]`` in epoch seconds; membership fades over ``margin`` seconds outside it."""

    start: float
    end: float
    margin: float

    def membership(self, at: float) -> float:
        """1.0 inside the span, 0.5 at ``margin`` outside it, about 0.06 at twice that."""
        if self.start <= at <= self.end:
            return 1.0
        distance = self.start - at if at < self.start else at - self.end
        return float(0.5 ** ((distance / max(self.margin, 1.0)) ** 2))

    def widened(self, margins: float = 2.0) -> tuple[float, float]:
        """The span with ``margins`` margins added on both sides (where membership is still felt)."""
        return (self.start - margins * self.margin, self.end + margins * self.margin)

    def overlap(self, other: Span) -> float:
        """How much of ``other`` lies within this span (0..1): a memory about ``other`` fits a
        question about this span when what it is about falls inside it."""
        inter = min(self.end, other.end) - max(self.start, other.start)
        return max(0.0, min(1.0, inter / max(other.end - other.start, 1.0)))


@dataclass(frozen=True)
class TimePhrase:
    """A time phrase read in a text: its ``words`` and position, and what they resolve to.

    ``span`` is ``None`` for vague recency ("recently"). ``label`` names the time in
    reasons ("last week", "3 March 2025"). ``anchored`` says that a date written in the
    same text fixed a relative phrase ("last Monday, on 3 March").
    """

    words: str
    begin: int
    end: int
    span: Span | None
    label: str
    anchored: bool = False

    @property
    def recency(self) -> bool:
        return self.span is None


# ------------------------------------------------------------------ vocabulary
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
#: Vague counts are read loosely: "a few years ago" is any time two to five years ago.
_VAGUE = {"a couple of": (1, 3), "a few": (2, 5), "several": (3, 7)}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month
_NUM = r"(\d+|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(day|week|month|year)s?"
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = "(" + "|".join(_WEEKDAYS) + ")"
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_DATE = (  # 2025-03-04 | (the) 4(th) (of) March(, 2025) | March 4(th)(, 2025): nine groups
    rf"(?:{_YEAR}-(\d\d)-(\d\d)"
    rf"|(?:the )?{_ORD}(?: of)? {_MONTH}(?:,? {_YEAR})?"
    rf"|{_MONTH} {_ORD}(?:,? {_YEAR})?)"
)
# margins: how loosely each kind of time is meant
_M_DAY = 1.0 * DAY
_M_WEEK = 2.0 * DAY
_M_MONTH = 4.0 * DAY
_M_SEASON = 10.0 * DAY
_M_YEAR = 30.0 * DAY


@dataclass(frozen=True)
class _Clock:
    now: float
    tz: tzinfo
    today: date
    #: reading a memory's own text: unqualified seasons and holidays are the nearest ones
    in_memory: bool = False

    def at(self, d: date) -> float:
        return datetime(d.year, d.month, d.day, tzinfo=self.tz).timestamp()

    def days(self, first: date, last: date, margin: float = _M_DAY) -> Span:
        """The calendar days ``first`` .. ``last`` (inclusive)."""
        return Span(self.at(first), self.at(last + timedelta(days=1)) - 1e-3, margin)


def local_day(at: float, tz: tzinfo) -> date | None:
    """The date in ``tz`` at epoch seconds ``at``; ``None`` when the calendar cannot hold it
    (the first hours of the year 1 west of UTC, or a time that is not finite).

    Examples:
        >>> from datetime import timedelta, timezone
        >>> local_day(0.0, timezone.utc).isoformat()
        '1970-01-01'
        >>> local_day(-62_135_596_800.0, timezone(timedelta(hours=-5))) is None
        True
    """
    if not math.isfinite(at):
        return None
    try:
        return datetime.fromtimestamp(at, tz).date()
    except (OverflowError, ValueError, OSError):
        return None


def _clock(now: float, tz: tzinfo, *, in_memory: bool = False) -> _Clock | None:
    today = local_day(now, tz)
    return None if today is None else _Clock(now, tz, today, in_memory)


def _count(n: int, unit: str) -> str:
    """``"1 day"``, ``"3 weeks"``."""
    return f"{n} {unit}{'' if n == 1 else 's'}"


#: More digits than any count of days between the years 1 and 9999 needs: such a count names no time.
_MAX_DIGITS = 7


def _number(word: str) -> int | None:
    """The count a word says ("3", "٣", "three", "a few"); ``None`` for one too long to be a time."""
    if word.isdecimal():
        return int(word) if len(word) <= _MAX_DIGITS else None
    return _NUMBERS.get(word.lower())


def _shift(d: date, days: int) -> date | None:
    """``d`` moved by ``days``; ``None`` past the calendar's first or last day."""
    ordinal = d.toordinal() + days
    return date.fromordinal(ordinal) if date.min.toordinal() <= ordinal <= date.max.toordinal() else None


def _bounded(span: Span) -> Span | None:
    """``span`` cut to the times UCMA accepts; ``None`` when it lies wholly outside them."""
    start, end = max(span.start, EPOCH_MIN), min(span.end, EPOCH_MAX)
    if not (math.isfinite(start) and math.isfinite(end) and math.isfinite(span.margin)) or start > end:
        return None
    return span if (start, end) == (span.start, span.end) else Span(start, end, span.margin)


def _unit_seconds(unit: str) -> float:
    return {"day": DAY, "week": 7 * DAY, "month": 30.44 * DAY, "year": 365.25 * DAY}[unit]


def _latest_year(today: date, month: int, day: int) -> int:
    """The year in which ``month``/``day`` most recently fell (this year unless still ahead)."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _month_days(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _date_of(m: re.Match[str], first: int, today: date) -> date | None:
    """The date matched by the groups of :data:`_DATE` starting at group ``first``."""
    g = [m.group(first + i) for i in range(9)]
    try:
        if g[0]:
            return date(int(g[0]), int(g[1]), int(g[2]))
        if g[3]:
            day, month, year = int(g[3]), _MONTHS[g[4].lower()], g[5]
        else:
            month, day, year = _MONTHS[g[6].lower()], int(g[7]), g[8]
        return date(int(year) if year else _latest_year(today, month, day), month, day)
    except (ValueError, KeyError):
        return None


def _season(name: str, year: int) -> tuple[date, date]:
    first = _SEASONS[name]
    start = date(year, first, 1)
    end_month, end_year = (first + 2, year) if first != 12 else (2, year + 1)
    return start, _month_days(end_year, end_month)[1]


# ------------------------------------------------------------------ rules
# Each rule reads one kind of phrase; a resolver returns (span or None, label), or None when the
# words do not make a time after all. Rules earlier in the list win over later ones that overlap.
Resolver = Callable[[re.Match[str], _Clock], "tuple[Span | None, str] | None"]


def _relative_to_date(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    d = _date_of(m, 4, c.today)
    if d is None:
        return None
    amount, unit, side = m.group(1), m.group(2).lower(), m.group(3).lower()
    sign = -1 if side == "before" else 1
    if unit == "weekend":
        # the Saturday and Sunday before (or after) the date
        if sign < 0:
            saturday = d - timedelta(days=(d.weekday() - 5) % 7 or 7)
        else:
            saturday = d + timedelta(days=(5 - d.weekday()) % 7 or 7)
        return c.days(saturday, saturday + timedelta(days=1)), f"the weekend {side} {d.isoformat()}"
    n = _number(amount) if amount else 1
    if n is None:
        return None
    length = {"day": 1, "week": 7, "month": 30}[unit.rstrip("s")] * n
    if amount:  # "three days before 4 March": that day (or week)
        target = _shift(d, sign * length)
        if target is None:
            return None
        return c.days(target, target, _M_DAY if unit.startswith("day") else _M_WEEK), m.group(0)
    first, last = (_shift(d, -length), _shift(d, -1)) if sign < 0 else (_shift(d, 1), _shift(d, length))
    if first is None or last is None:
        return None
    return c.days(first, last, _M_DAY if length == 1 else _M_WEEK), f"the {unit} {side} {d.isoformat()}"


def _explicit_date(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    d = _date_of(m, 1, c.today)
    return None if d is None else (c.days(d, d), d.isoformat())


def _today(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    return Span(c.at(c.today), c.now, 6 * _HOUR), m.group(0).lower()


def _last_night(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    midnight = c.at(c.today)
    return Span(midnight - 6 * _HOUR, midnight + 6 * _HOUR, 3 * _HOUR), "last night"


def _yesterday(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    back = 2 if m.group(1) else 1
    d = c.today - timedelta(days=back)
    return c.days(d, d), "the day before yesterday" if back == 2 else "yesterday"


def _last_n(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    n, unit = _number(m.group(1)), m.group(2).lower()
    if n is None:
        return None
    length = n * _unit_seconds(unit)
    return Span(c.now - length, c.now, max(_M_DAY, length / 8)), f"last {_count(n, unit)}"


def _ago(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    if m.group(1).lower() in _VAGUE:
        return _vague_ago(m.group(1).lower(), m.group(2).lower(), c)
    n, unit = _number(m.group(1)), m.group(2).lower()
    if n is None:
        return None
    if unit == "day":
        d = _shift(c.today, -n)
        return None if d is None else (c.days(d, d), f"{_count(n, unit)} ago")
    if unit == "year":  # "two years ago" means that calendar year (none before the year 1)
        year = c.today.year - n
        if year < date.min.year:
            return None
        return c.days(date(year, 1, 1), date(year, 12, 31), _M_YEAR * 1.5), f"{_count(n, unit)} ago ({year})"
    span = _unit_seconds(unit)
    margin = _M_WEEK if unit == "week" else 7 * DAY
    return Span(c.now - (n + 0.5) * span, c.now - (n - 0.5) * span, margin), f"{_count(n, unit)} ago"


def _vague_ago(word: str, unit: str, c: _Clock) -> tuple[Span | None, str] | None:
    """ "A few weeks ago": every time from the fewest to the most units the words can mean."""
    fewest, most = _VAGUE[word]
    label = f"{word} {unit}s ago"
    if unit == "day":
        first, last = _shift(c.today, -most), _shift(c.today, -fewest)
        return None if first is None or last is None else (c.days(first, last, _M_DAY), label)
    if unit == "year":
        first_year, last_year = c.today.year - most, c.today.year - fewest
        if first_year < date.min.year:
            return None
        years = c.days(date(first_year, 1, 1), date(last_year, 12, 31), _M_YEAR * 1.5)
        return years, f"{label} ({first_year}..{last_year})"
    span = _unit_seconds(unit)
    margin = _M_WEEK if unit == "week" else 7 * DAY
    return Span(c.now - (most + 0.5) * span, c.now - (fewest - 0.5) * span, margin), label


def _this_last(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    which, unit = m.group(1).lower(), m.group(2).lower()
    which = "this" if which == "this" else "last"
    today = c.today
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        if unit == "weekend":
            saturday = monday + timedelta(days=5) if which == "this" else monday - timedelta(days=2)
            return c.days(saturday, saturday + timedelta(days=1)), f"{which} weekend"
        if which == "this":
            return Span(c.at(monday), c.now, _M_DAY), "this week"
        return c.days(monday - timedelta(days=7), monday - timedelta(days=1), _M_WEEK), "last week"
    if unit == "month":
        year, month = today.year, today.month
        if which != "this":
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        first, last = _month_days(year, month)
        span = c.days(first, last, _M_MONTH)
        return Span(span.start, min(span.end, c.now), span.margin), f"{which} month"
    year = today.year if which == "this" else today.year - 1
    span = c.days(date(year, 1, 1), date(year, 12, 31), _M_YEAR)
    return Span(span.start, min(span.end, c.now), span.margin), f"{which} year ({year})"


def _nearest(candidates: list[tuple[date, date]], today: date) -> tuple[date, date]:
    """The candidate span closest to ``today`` (past or coming)."""

    def distance(span: tuple[date, date]) -> int:
        first, last = span
        return 0 if first <= today <= last else min(abs((first - today).days), abs((today - last).days))

    return min(candidates, key=distance)


def _season_phrase(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    which = (m.group(1) or "").lower()
    name = m.group(2).lower()
    today = c.today
    if m.group(3):
        first, last = _season(name, int(m.group(3)))
    else:
        seasons = [_season(name, year) for year in (today.year - 1, today.year, today.year + 1)]
        begun = [s for s in seasons if s[0] <= today]
        if which == "this":
            first, last = _nearest(seasons, today)
        elif which in ("last", "past"):
            over = [s for s in seasons if s[1] < today]
            first, last = over[-1] if over else begun[-1]
        elif c.in_memory:
            first, last = _nearest(seasons, today)
        else:
            first, last = begun[-1]
    label = (
        f"{which + ' ' if which in ('this', 'last') else ''}{name} ({first.isoformat()}..{last.isoformat()})"
    )
    return c.days(first, last, _M_SEASON), label


def _holiday(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    which = m.group(1).lower()
    name = m.group(2).lower()
    today = c.today
    if name.startswith(("christmas", "xmas")):
        month, first_day, last_day = 12, 24, 26
    elif "eve" in name:
        month, first_day, last_day = 12, 31, 31
    else:  # new year, new year's day
        month, first_day, last_day = 1, 1, 1
    spans = [(date(y, month, first_day), date(y, month, last_day)) for y in (today.year - 1, today.year)]
    spans.append((date(today.year + 1, month, first_day), date(today.year + 1, month, last_day)))
    over = [s for s in spans if s[1] < today]
    if which == "this":
        first, last = _nearest(spans, today)
    elif which == "last" or not c.in_memory:
        first, last = over[-1]
    else:
        first, last = _nearest(spans, today)
    return c.days(
        first, last, 3 * DAY
    ), f"{which + ' ' if which in ('this', 'last') else ''}{name} {first.year}"


def _recent(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    return None, m.group(0).lower()


def _weekday(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    wanted = _WEEKDAYS[m.group(1).lower()]
    delta = (c.today.weekday() - wanted) % 7 or 7
    d = c.today - timedelta(days=delta)
    return c.days(d, d), f"{m.group(0).lower()} ({d.isoformat()})"


def _month_phrase(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    prep = (m.group(1) or "in").lower()
    prep = "in" if prep in ("back in", "during", "early", "late", "from") else prep
    month = _MONTHS[(m.group(2) or m.group(4)).lower()]
    written_year = m.group(3) or m.group(5)
    year = int(written_year) if written_year else _latest_year(c.today, month, 1)
    first, last = _month_days(year, month)
    name = f"{calendar.month_name[month]} {year}"
    if prep in ("since", "after"):
        start = c.at(first) if prep == "since" else c.at(last + timedelta(days=1))
        return Span(start, max(c.now, start), _M_MONTH), f"{prep} {name}"
    if prep == "before":
        return Span(EPOCH_MIN, c.at(first), _M_MONTH), f"before {name}"
    return c.days(first, last, _M_MONTH), f"in {name}"


def _year_phrase(m: re.Match[str], c: _Clock) -> tuple[Span | None, str] | None:
    prep = m.group(1).lower()
    year = int(m.group(2))
    span = c.days(date(year, 1, 1), date(year, 12, 31), _M_YEAR)
    if prep == "since":
        return Span(span.start, max(c.now, span.start), _M_YEAR), f"since {year}"
    if prep == "before":
        return Span(EPOCH_MIN, span.start, _M_YEAR), f"before {year}"
    if prep == "after":
        return Span(span.end, max(c.now, span.end), _M_YEAR), f"after {year}"
    return span, f"in {year}"


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    resolve: Resolver
    #: read in memories' own text too (not for "today" or "recently": the timestamp says as much)
    in_memories: bool = True
    #: names a calendar date, which anchors the relative phrases of the same question
    calendar: bool = False


def _rule(pattern: str, resolve: Resolver, *, in_memories: bool = True, calendar: bool = False) -> _Rule:
    return _Rule(re.compile(pattern, re.I), resolve, in_memories, calendar)


_RULES: list[_Rule] = [
    _rule(
        rf"\b(?:the )?(?:(?:{_NUM} )?(days?|weeks?|weekend|months?)) (before|after) {_DATE}",
        _relative_to_date,
        calendar=True,
    ),
    _rule(rf"\b(?:on |by |from |until )?{_DATE}\b", _explicit_date, calendar=True),
    _rule(r"\blast night\b", _last_night),
    _rule(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", _today, in_memories=False),
    _rule(r"\b(the day before )?yesterday\b", _yesterday),
    _rule(rf"\b(?:in |over |during )?(?:the )?(?:last|past) {_NUM} {_UNIT}\b", _last_n),
    _rule(rf"\b{_NUM} {_UNIT} ago\b", _ago),
    _rule(r"\b(this|last|previous|past) (week(?:end)?|month|year)\b", _this_last),
    _rule(
        rf"\b(?:(this|last|past) |in (?:the )?|during (?:the )?)(spring|summer|autumn|fall|winter)"
        rf"(?: (?:of )?{_YEAR})?\b",
        _season_phrase,
    ),
    _rule(
        r"\b(this|last|at|over|for|on) (christmas|xmas|new year'?s eve|new year'?s day|new year)\b", _holiday
    ),
    _rule(
        r"\b(?:recently|lately|of late|these days|nowadays|at the moment|currently|right now|"
        r"(?:the )?latest|(?:most )?recent|now)\b",
        _recent,
        in_memories=False,
    ),
    _rule(rf"\b(?:on|last|this past) {_WEEKDAY}\b", _weekday),
    _rule(
        rf"\b(?:(since|before|after|in|during|from|back in|early|late) {_MONTH}(?: {_YEAR})?"
        rf"|{_MONTH} {_YEAR})\b",
        _month_phrase,
    ),
    _rule(rf"\b(in|during|since|before|after|back in|from) {_YEAR}\b", _year_phrase),
]
# a cheap test that a memory's text may hold a time phrase at all
_MAYBE = re.compile(
    r"\d|ago\b|yesterday|last |this |past |christmas|xmas|new year|spring|summer|autumn|fall|winter|"
    + "|".join(sorted(_MONTHS, key=len, reverse=True)),
    re.I,
)


def _resolve(rule: _Rule, m: re.Match[str], clock: _Clock) -> tuple[Span | None, str] | None:
    """What ``rule`` makes of ``m``, its span cut to the times UCMA accepts; ``None`` when the
    words name no time the calendar can hold.

    The rules avoid stepping past the calendar's ends where text can push them (counts of
    days, weeks, years); near the ends of the calendar themselves (a clock in the year 1
    asked about "last Christmas"), ``datetime`` raises ``ValueError`` or ``OverflowError``
    and that phrase, too, names no time.
    """
    try:
        resolved = rule.resolve(m, clock)
    except (ValueError, OverflowError):
        return None
    if resolved is None or resolved[0] is None:
        return resolved
    span = _bounded(resolved[0])
    return None if span is None else (span, resolved[1])


def _find(text: str, clock: _Clock | None) -> list[tuple[TimePhrase, bool]]:
    """Every time phrase in ``text`` (earlier rules win overlaps), each with its rule's ``calendar``."""
    found: list[tuple[TimePhrase, bool]] = []
    taken: list[tuple[int, int]] = []  # disjoint, sorted: a lookup stays fast in long texts
    if clock is None:
        return found
    for rule in _RULES:
        if clock.in_memory and not rule.in_memories:
            continue
        for m in rule.pattern.finditer(text):
            begin, end = m.span()
            # the last phrase taken that starts before this one ends is the only one to check
            i = bisect.bisect_left(taken, (end, -1))
            if i and taken[i - 1][1] > begin:
                continue
            resolved = _resolve(rule, m, clock)
            if resolved is None:
                continue
            span, label = resolved
            found.append((TimePhrase(m.group(0).strip(), begin, end, span, label), rule.calendar))
            bisect.insort(taken, (begin, end))
    return sorted(found, key=lambda found_: found_[0].begin)


def read(text: str, now: float, tz: tzinfo) -> TimePhrase | None:
    """The time a question asks about, resolved against ``now``; ``None`` if it names none.

    A calendar date written in the question anchors its relative phrases ("what did she
    submit last Monday, on 3 March?" means 3 March); otherwise the first phrase that names
    a range wins over vague recency.
    """
    found = _find(text, _clock(now, tz))
    if not found:
        return None
    dated = [p for p, calendar_ in found if calendar_]
    if dated and len(found) > 1:
        best = dated[0]
        others = ", ".join(repr(p.words) for p, _ in found if p is not best)
        label = f"{best.label}, the date given anchoring {others}"
        return TimePhrase(best.words, best.begin, best.end, best.span, label, anchored=True)
    ranged = [p for p, _ in found if p.span is not None]
    return ranged[0] if ranged else found[0][0]


def mentions(text: str, at: float, tz: tzinfo) -> list[TimePhrase]:
    """The times a memory's own text refers to, resolved against the memory's timestamp ``at``.

    "Today", "tonight" and vague recency are left out: they say no more than the timestamp.
    A season or holiday named without "last" or "this" is the nearest one, past or coming.
    """
    if not _MAYBE.search(text):
        return []
    return [p for p, _ in _find(text, _clock(at, tz, in_memory=True)) if p.span is not None]


def strip(text: str, phrase: TimePhrase) -> str:
    """``text`` without ``phrase``'s words (what is left to search for)."""
    return text[: phrase.begin] + " " + text[phrase.end :]
