"""Which rows of the keyword index each user owns, as one bitmap per user.

A keyword search within one user's memories asked SQLite to read the ``user_id`` of every
row its words match (a lookup of the row's stored columns each: about half the cost of a
search at 10k memories, where a query's words match ~500 rows of every user). The
:class:`~ucma_core.storage.keywords.KeywordIndex` instead tests each matching row's id
against the user's bitmap here, read once per user (one scan of the index's user column)
and kept current by the index's own writes: a row added sets its bit, a row deleted clears
it in every bitmap (SQLite may give a deleted row's id to the next row added). Another
connection's commit (``PRAGMA data_version`` moved) or a rollback drops them all. A bitmap
costs one bit per row id of the index (12.5 KiB at 100k rows); the bitmaps of at most
:data:`MAX_USERS` users are held, the least recently searched dropped first.

SQLite calls the test once per matching row. A Python function there costs about a
microsecond a call (a frame, a dict lookup, the bit arithmetic), so the searched user's rows
are also held as one set of row ids (:meth:`UserRows.choose`, written out from the bitmap when
the user changes and kept current by the same writes), and the function SQLite calls is that
set's own ``__contains__`` (:attr:`UserRows.chosen`): no Python frame per match.

Examples:
    >>> rows = UserRows()
    >>> rows.load("ana", [1, 3], version=0)
    >>> rows.owns("ana", 3), rows.owns("ana", 2), rows.known("bob")
    (True, False, False)
    >>> rows.added("ana", 9); rows.deleted([3]); rows.owns("ana", 9), rows.owns("ana", 3)
    (True, False)
    >>> rows.choose("ana"); rows.chosen(9), rows.chosen(3), rows.chosen(1)
    (True, False, True)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["MAX_USERS", "UserRows"]

#: Users whose bitmaps are held at once (about 0.8 MiB at 100k rows).
MAX_USERS = 64


class UserRows:
    """``{user: bitmap of the row ids they own}`` for the users searched so far (thread-safe)."""

    def __init__(self) -> None:
        self._bits: dict[str, bytearray] = {}
        self._version: int | None = None
        self.lock = threading.Lock()
        self._chosen: set[int] = set()
        self._chosen_user: str | None = None
        #: Whether a row id belongs to the user of the last :meth:`choose` (the function
        #: registered with SQLite: always this one set's ``__contains__``, never rebound).
        self.chosen: Callable[[int], bool] = self._chosen.__contains__

    def choose(self, user: str) -> None:
        """Make :attr:`chosen` test ``user``'s rows (whose bitmap is held)."""
        if user != self._chosen_user:
            self._unchoose()
            self._chosen.update(_rowids(self._bits[user]))
            self._chosen_user = user

    def _unchoose(self) -> None:
        self._chosen.clear()
        self._chosen_user = None

    def current(self, version: int) -> None:
        """Drop every bitmap if the database's ``data_version`` is not the one they were read at."""
        if version != self._version:
            self._bits.clear()
            self._unchoose()
            self._version = version

    def known(self, user: str) -> bool:
        """Whether ``user``'s bitmap is held (else :meth:`load` it first); a held one becomes
        the most recently searched."""
        bits = self._bits.pop(user, None)
        if bits is None:
            return False
        self._bits[user] = bits
        return True

    def load(self, user: str, rowids: Iterable[int], *, version: int) -> None:
        """Keep ``user``'s bitmap: the ``rowids`` they own, read at ``data_version`` ``version``."""
        self.current(version)
        if user == self._chosen_user:
            self._unchoose()
        while len(self._bits) >= MAX_USERS:
            dropped = next(iter(self._bits))  # the least recently searched
            del self._bits[dropped]
            if dropped == self._chosen_user:
                self._unchoose()
        bits = bytearray()
        for rowid in rowids:
            _set(bits, rowid)
        self._bits[user] = bits

    def owns(self, user: str, rowid: int) -> bool:
        """Whether row ``rowid`` belongs to ``user`` (whose bitmap is held)."""
        bits = self._bits[user]
        byte = rowid >> 3
        return byte < len(bits) and bool(bits[byte] >> (rowid & 7) & 1)

    def added(self, user: str, rowid: int) -> None:
        """Row ``rowid`` of ``user`` was added by the index's connection."""
        bits = self._bits.get(user)
        if bits is not None:
            _set(bits, rowid)
        if user == self._chosen_user:
            self._chosen.add(rowid)

    def deleted(self, rowids: Iterable[int]) -> None:
        """Rows deleted by the index's connection (their ids may be given to new rows)."""
        rowids = list(rowids)
        self._chosen.difference_update(rowids)
        for rowid in rowids:
            byte, mask = rowid >> 3, ~(1 << (rowid & 7)) & 0xFF
            for bits in self._bits.values():
                if byte < len(bits):
                    bits[byte] &= mask

    def clear(self) -> None:
        """Forget every bitmap (a rollback, a vacuum)."""
        self._bits.clear()
        self._unchoose()
        self._version = None


def _set(bits: bytearray, rowid: int) -> None:
    byte = rowid >> 3
    if byte >= len(bits):
        bits.extend(bytes(byte + 1 - len(bits) + len(bits) // 4))  # room to grow
    bits[byte] |= 1 << (rowid & 7)


def _rowids(bits: bytearray) -> list[int]:
    """The row ids whose bit is set in ``bits``, in order."""
    # as booleans: ``flatnonzero`` is several times faster on them than on bytes
    flags = np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little").view(np.bool_)
    found: list[int] = np.flatnonzero(flags).tolist()
    return found
