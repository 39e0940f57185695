"""Recalled memories as one block of prompt text, within a token budget.

Every adapter that puts memories into a prompt (agent middleware, chat memory,
memory blocks) renders them here, so they all read the same:

.. code-block:: text

    Relevant memories:
    - [2026-03-04, 2 days ago] (user: Ana) I moved to Lisbon in May.
    - [2026-03-05] (fact) Ana lives in Lisbon

Results keep the order they arrive in (``remember`` ranks them, most useful
first). Each line carries the memory's date (ISO, in ``timezone``), its age when
``now`` is given, and a label: for an episode its source and speaker, otherwise
its kind (``fact``, ``procedure``, ``lesson``, ``reminder``; ``summary`` for
consolidation output). Line breaks inside a memory become spaces, so one memory
is one line. Lines are added while the whole block fits ``max_tokens``; the first
line that does not fit is shortened to the room left (ending in "…") and the
block ends there.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, tzinfo
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ucma_core.errors import InvalidInputError
from ucma_core.records import Episode, MemoryType, RetrievalResult
from ucma_core.retrieval.timesignal import local_day
from ucma_core.tokens import TiktokenCounter, TokenCounter
from ucma_core.validation import to_epoch

__all__ = ["render_memories"]

_DAY = 86_400.0
#: A shortened line keeps at least this many tokens of content, or is left out.
_MIN_CUT_TOKENS = 8
_ELLIPSIS = "…"
_KIND_LABELS = {
    MemoryType.SEMANTIC: "fact",
    MemoryType.PROCEDURAL: "procedure",
    MemoryType.LEARNING: "lesson",
    MemoryType.PROSPECTIVE: "reminder",
}


def render_memories(
    results: Sequence[RetrievalResult],
    *,
    max_tokens: int = 800,
    token_counter: TokenCounter | None = None,
    now: datetime | float | None = None,
    header: str = "Relevant memories:",
    timezone: str | tzinfo = "UTC",
) -> str:
    """One context block from recalled memories, most useful first, within ``max_tokens``.

    A pure function: it reads no clock and no memory.

    Args:
        results: what ``Memory.remember`` returned, in its order.
        max_tokens: the budget for the whole block, header included (at least 1).
        token_counter: counts tokens (any object with ``count(text) -> int``);
            default: tiktoken ``cl100k_base``, shipped with ``ucma_core``.
        now: when given (``memory.now()``), each date also says how long ago it was.
        header: the first line; ``""`` for none.
        timezone: the time zone dates are shown in (an IANA name or a ``tzinfo``);
            pass ``memory.config.timezone`` to match the router.

    Returns:
        The block, lines separated by ``"\\n"``; ``""`` when there are no results or
        not even one memory fits the budget.

    Raises:
        InvalidInputError: a result that is not a ``RetrievalResult``, a budget that
            is not a positive int, a bad ``now`` or an unknown time zone.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> march_4 = 1_772_618_400.0  # 2026-03-04 10:00 UTC
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder(), clock=lambda: march_4) as mem:
        ...     _ = mem.observe("I moved to Lisbon in May.", user_id="ana", participants=["Ana"],
        ...                     importance=0.9)
        ...     _ = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
        ...     hits = mem.remember("Where does Ana live? Lisbon", user_id="ana")
        ...     print(render_memories(hits, now=march_4 + 2 * 86_400))
        Relevant memories:
        - [2026-03-04, 2 days ago] (fact) Ana lives in Lisbon
        - [2026-03-04, 2 days ago] (user: Ana) I moved to Lisbon in May.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInputError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if not isinstance(header, str):
        raise InvalidInputError(f"header must be a str, not {type(header).__name__}")
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise InvalidInputError(f"results must be a list of RetrievalResult, not {type(results).__name__}")
    for n, result in enumerate(results):
        if not isinstance(result, RetrievalResult):
            raise InvalidInputError(f"result {n} must be a RetrievalResult, not {type(result).__name__}")
    if not results:
        return ""
    zone = _zone(timezone)
    at = None if now is None else to_epoch(now, "now")
    counter = token_counter if token_counter is not None else TiktokenCounter()

    head = _one_line(header)
    lines = [head] if head else []
    used = counter.count(head) if head else 0
    for result in results:
        line = _line(result, zone, at)
        cost = counter.count(f"\n{line}" if lines else line)
        if used + cost <= max_tokens:
            lines.append(line)
            used += cost
            continue
        cut = _shorten(line, max_tokens - used, counter, first=not lines)
        if cut is not None:
            lines.append(cut)
        break
    text = "\n".join(lines)
    # Counts of the parts may differ slightly from the count of the whole: make sure.
    while lines and counter.count(text) > max_tokens:
        lines.pop()
        text = "\n".join(lines)
    return text if len(lines) > (1 if head else 0) else ""


def _zone(timezone: str | tzinfo) -> tzinfo:
    if isinstance(timezone, tzinfo):
        return timezone
    if not isinstance(timezone, str):
        raise InvalidInputError(f"timezone must be an IANA name or a tzinfo, not {type(timezone).__name__}")
    if timezone.upper() == "UTC":
        return dt_timezone.utc
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise InvalidInputError(
            f"unknown time zone {timezone!r}; use an IANA name such as 'Europe/Lisbon'"
        ) from e


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _day(at: float, zone: tzinfo) -> date:
    """The date at ``at`` in ``zone``, or in UTC where the zone's date falls before the year 1."""
    return local_day(at, zone) or datetime.fromtimestamp(at, dt_timezone.utc).date()


def _age(then: date, now: date) -> str:
    days = (now - then).days
    if days < 0:
        return ""
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    if days < 14:
        return f"{days} days ago"
    if days < 60:
        return f"{days // 7} weeks ago"
    if days < 730:
        return f"{days // 30} months ago"
    return f"{days // 365} years ago"


def _label(result: RetrievalResult) -> str:
    record = result.record
    if result.memory_type is not MemoryType.EPISODIC:
        return _KIND_LABELS.get(result.memory_type, str(result.memory_type.value))
    if record.source == "consolidation":
        return "summary"
    speaker = record.participants[0] if isinstance(record, Episode) and record.participants else None
    return f"{record.source}: {speaker}" if speaker else record.source


def _line(result: RetrievalResult, zone: tzinfo, now: float | None) -> str:
    day = _day(result.timestamp, zone)
    shown = day.isoformat()
    if now is not None:
        age = _age(day, _day(now, zone))
        shown = f"{shown}, {age}" if age else shown
    return f"- [{shown}] ({_label(result)}) {_one_line(result.content)}"


def _shorten(line: str, room: int, counter: TokenCounter, *, first: bool) -> str | None:
    """The longest prefix of ``line`` (cut at a space when possible, plus "…") that costs at
    most ``room`` tokens, or ``None`` if too little of the line would be left."""
    sep = "" if first else "\n"
    if room < _MIN_CUT_TOKENS + counter.count(sep + line.split(") ", 1)[0] + ") "):
        return None
    lo, hi = 0, len(line)
    while lo < hi:  # the longest prefix length whose rendering fits
        mid = (lo + hi + 1) // 2
        if counter.count(sep + line[:mid].rstrip() + _ELLIPSIS) <= room:
            lo = mid
        else:
            hi = mid - 1
    prefix = line[:lo]
    space = prefix.rfind(" ")
    if space > len(prefix) * 2 // 3:
        prefix = prefix[:space]
    return prefix.rstrip() + _ELLIPSIS if prefix.strip() else None
