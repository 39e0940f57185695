"""A time line: ``(timestamp, id)`` pairs kept in time order, for the episode indexes.

The pairs are held in two parallel arrays (the timestamps as C doubles, the ids as a list of
the graph's own id strings): 16 bytes a pair, where a list of tuples costs 72 (the tuple and
its slot). Reading it gives tuples, made when asked for.

>>> line = TimeLine()
>>> for stamp, memory_id in [(2.0, "b"), (1.0, "z"), (2.0, "a")]:
...     line.insert(stamp, memory_id)
>>> list(line)
[(1.0, 'z'), (2.0, 'a'), (2.0, 'b')]
>>> line.between(2.0, 5.0), line.position(2.0, "b"), line[-1]
(['a', 'b'], 2, (2.0, 'b'))
>>> line.remove(2.0, "a"), line.remove(2.0, "a"), line.ids()
(True, False, ['z', 'b'])
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

__all__ = ["TimeLine"]


class TimeLine(Sequence[tuple[float, str]]):
    """``(timestamp, id)`` pairs in ascending order (ids break ties), without a tuple each."""

    __slots__ = ("_ids", "_stamps")

    def __init__(self) -> None:
        self._stamps = array("d")
        self._ids: list[str] = []

    def position(self, stamp: float, memory_id: str) -> int:
        """Where ``(stamp, memory_id)`` is or would go (the first index not before it)."""
        lo = bisect.bisect_left(self._stamps, stamp)
        hi = bisect.bisect_right(self._stamps, stamp, lo)
        return bisect.bisect_left(self._ids, memory_id, lo, hi)

    def insert(self, stamp: float, memory_id: str) -> None:
        """Add the pair at its place in time order."""
        i = self.position(stamp, memory_id)
        self._stamps.insert(i, stamp)
        self._ids.insert(i, memory_id)

    def remove(self, stamp: float, memory_id: str) -> bool:
        """Take the pair out; whether it was there."""
        i = self.position(stamp, memory_id)
        if i < len(self._ids) and self._ids[i] == memory_id and self._stamps[i] == stamp:
            del self._stamps[i]
            del self._ids[i]
            return True
        return False

    def between(self, start: float, end: float) -> list[str]:
        """Ids with ``start <= timestamp <= end``, in time order."""
        lo = bisect.bisect_left(self._stamps, start)
        return self._ids[lo : bisect.bisect_right(self._stamps, end, lo)]

    def ids(self) -> list[str]:
        """Every id, in time order (a new list)."""
        return list(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[tuple[float, str]]:
        return zip(self._stamps, self._ids, strict=True)

    @overload
    def __getitem__(self, index: int) -> tuple[float, str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[float, str]]: ...

    def __getitem__(self, index: int | slice) -> tuple[float, str] | list[tuple[float, str]]:
        if isinstance(index, slice):
            return list(zip(self._stamps[index], self._ids[index], strict=True))
        return (self._stamps[index], self._ids[index])

    def __repr__(self) -> str:
        return f"TimeLine({list(self)!r})"
