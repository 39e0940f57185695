"""Over-long chat turns, stored in parts and read back whole.

A turn longer than the memory's ``max_content_chars`` (a pasted 150,000-character
log) is not refused: :func:`split_text` cuts it into parts that each fit, at the
best boundary in the second half of each window (a blank line, a line end, a
sentence end, a space; a hard cut only when there is none), and
:func:`~ucma_core.conversation.observe_turns` stores each part as its own episode,
all in one write. So every part is found by ``remember`` on its own words, and
``history`` lists the parts in order, one after the other.

Each part's metadata says where it belongs (see :func:`part_metadata`):
``part`` (1-based), ``parts`` (how many) and ``part_of`` (the turn's message id,
or a random id for a turn without one). Part 1 is keyed by the message id itself,
part *i* by ``"<message id>#part<i>"``, so observing the turn again (after a
restart too) stores nothing new, and ``get_by_key(message_id)`` finds the turn's
first part, whose id is the id :func:`~ucma_core.conversation.observe_turns`
returns for the turn.

Reading back, :meth:`ChatTurn.from_records <ucma_core.conversation.ChatTurn.from_records>`
joins consecutive parts of one turn into one turn again (what chat-history
adapters show); ``"".join`` of the parts' texts is the stored text of the turn.
That text is the turn's text except that, for an over-long turn only, trailing
whitespace is dropped and runs of whitespace longer than a quarter of the limit
are shortened to that length (so that no part is blank); the first part's
``cleaned`` metadata says so when it happens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ucma_core.records import MemoryRecord

__all__ = ["PART_KEYS", "group_parts", "is_part", "part_key", "part_metadata", "split_text"]

#: Metadata keys of a part: its number, how many parts, and which turn it belongs to.
PART_KEYS = ("part", "parts", "part_of")

#: Where a part may end, best first (each is kept at the end of the part before the cut).
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", "\t")


def split_text(text: str, max_chars: int) -> tuple[list[str], list[str]]:
    """``text`` in parts of at most ``max_chars`` characters, and a note per change made.

    A text that fits is one part, unchanged. A longer one loses its trailing
    whitespace and has runs of whitespace longer than ``max_chars // 4`` shortened
    to that length; every part is then longer than ``max_chars // 2`` (but the last)
    and none is blank when ``max_chars`` is 8 or more.

    Examples:
        >>> split_text("short", 10)
        (['short'], [])
        >>> parts, notes = split_text("One sentence here. Another one here. A third.", 20)
        >>> parts
        ['One sentence here. ', 'Another one here. ', 'A third.']
        >>> "".join(parts) == "One sentence here. Another one here. A third."
        True
    """
    if len(text) <= max_chars:
        return [text], []
    notes: list[str] = []
    trimmed = text.rstrip()
    if len(trimmed) < len(text):
        notes.append(f"{len(text) - len(trimmed)} trailing whitespace characters dropped")
    run = max(1, max_chars // 4)
    shortened = re.sub(rf"\s{{{run + 1},}}", lambda m: m.group()[:run], trimmed)
    if len(shortened) < len(trimmed):
        notes.append(f"{len(trimmed) - len(shortened)} characters of long whitespace runs dropped")
    text = shortened
    parts: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        end, low = start + max_chars, start + max_chars // 2 + 1
        cut = end
        for sep in _BREAKS:
            at = text.rfind(sep, max(start, low - len(sep)), end)
            if at >= 0:
                cut = at + len(sep)
                break
        parts.append(text[start:cut])
        start = cut
    parts.append(text[start:])
    if len(parts) > 1:
        notes.append(f"stored in {len(parts)} parts of at most {max_chars:,} characters")
    return parts, notes


def part_key(message_id: str, part: int) -> str:
    """The idempotency key of part ``part`` (1-based) of the turn with ``message_id``.

    Examples:
        >>> part_key("m1", 1), part_key("m1", 2)
        ('m1', 'm1#part2')
    """
    return message_id if part == 1 else f"{message_id}#part{part}"


def part_metadata(part: int, parts: int, part_of: str) -> dict[str, Any]:
    """The metadata that marks part ``part`` of ``parts`` of the turn ``part_of``."""
    return {"part": part, "parts": parts, "part_of": part_of}


def is_part(metadata: Mapping[str, Any]) -> bool:
    """Whether a stored turn's metadata marks it as one part of a longer turn."""
    part, parts, part_of = (metadata.get(k) for k in PART_KEYS)
    return (
        isinstance(part, int)
        and isinstance(parts, int)
        and isinstance(part_of, str)
        and 1 <= part <= parts
        and parts > 1
    )


def group_parts(records: Iterable[MemoryRecord]) -> list[list[MemoryRecord]]:
    """``records`` (in history order) grouped by turn: consecutive parts of one turn form
    one group, sorted by part number; every other record is a group of its own.

    What :meth:`ChatTurn.from_records <ucma_core.conversation.ChatTurn.from_records>` and
    the adapters' read-back (one framework message per group) build on.
    """
    groups: list[list[MemoryRecord]] = []
    current: list[MemoryRecord] = []
    for record in records:
        meta = record.metadata
        if current and not (is_part(meta) and meta["part_of"] == current[0].metadata["part_of"]):
            groups.append(sorted(current, key=lambda r: int(r.metadata["part"])))
            current = []
        if is_part(meta):
            current.append(record)
        else:
            groups.append([record])
    if current:
        groups.append(sorted(current, key=lambda r: int(r.metadata["part"])))
    return groups
