"""The ``records`` rows a read of a shared memory needs, read once per hold of the lock.

One ``remember`` reads the text and stored fields of the same candidates at several
stages: the texts the name hop and the context read, the texts of the best ranked
(content-free turns go last), the full records it returns. On a folder each is a local
SQLite read; on PostgreSQL each is a round trip. Under the readers' shared hold of the
write lock no worker can change ``records`` (every write holds the lock exclusively, and
this process refuses to write under a shared hold), so a row read once stays true until
the hold ends.

:class:`HeldRows` keeps, for one shared hold, the rows read and the ids of the candidates
the hold's searches returned (:meth:`saw`: dense neighbours, keyword hits). A read
(:meth:`read`) returns kept rows and reads the others, together with every candidate
seen and not read yet, in one statement: the first stage's read brings the rows of the
later stages too. Keyword hits arrive with their rows (the search reads them in its own
statement, while the Chroma query runs), and so do the candidates seen before it
(:meth:`ahead`: the dense hits of a search a kept where-set answered in the process).
:meth:`start` and :meth:`stop` bracket the hold; outside one, every read goes to the table.

>>> table = {"a": ("alpha", '{"k": 1}'), "b": ("beta", None)}
>>> asked = []
>>> def select(ids):
...     asked.append(sorted(ids))
...     return {i: table[i] for i in ids if i in table}
>>> held = HeldRows()
>>> held.start()
>>> held.saw(["b", "c"])
>>> held.read(["a"], select)
{'a': ('alpha', '{"k": 1}')}
>>> held.read(["b", "c"], select)  # kept: "c" is known to be absent
{'b': ('beta', None)}
>>> asked
[['a', 'b', 'c']]
>>> held.stop()
>>> held.read(["a"], select) and asked[-1]
['a']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["HeldRows", "Row"]

#: A ``records`` row as read: its text and its stored fields as JSON (``None``: not kept).
Row = tuple[str, str | None]
#: At most this many candidates seen are read ahead with one read.
_AHEAD_AT_MOST = 1000


class HeldRows:
    """Rows of ``records`` kept for one shared hold of the write lock (see the module)."""

    def __init__(self) -> None:
        self._rows: dict[str, Row | None] | None = None  # None: no hold; a value None: no such row
        self._seen: dict[str, None] = {}

    @property
    def active(self) -> bool:
        """Whether a shared hold is on (rows are kept)."""
        return self._rows is not None

    def start(self) -> None:
        """A shared hold began: keep rows until :meth:`stop`."""
        self._rows, self._seen = {}, {}

    def stop(self) -> None:
        """The hold ended: forget every row and candidate."""
        self._rows, self._seen = None, {}

    def saw(self, ids: Iterable[str]) -> None:
        """Candidates a search returned: the next read reads their rows too."""
        if self._rows is not None:
            self._seen.update((i, None) for i in ids if i not in self._rows)

    def ahead(self) -> list[str]:
        """The candidates seen and not read yet, for a statement that reads their rows along
        (it hands them to :meth:`keep` with ``asked``)."""
        if self._rows is None:
            return []
        return [i for i in self._seen if i not in self._rows][:_AHEAD_AT_MOST]

    def keep(self, rows: Mapping[str, Row], asked: Sequence[str] = ()) -> None:
        """Rows read elsewhere in this hold (a keyword search's hits); ``asked``: ids whose
        rows were asked for (those without one are known to be absent)."""
        if self._rows is not None:
            self._rows.update(rows)
            for memory_id in asked:
                self._rows.setdefault(memory_id, None)
                self._seen.pop(memory_id, None)

    def read(self, ids: Sequence[str], select: Callable[[list[str]], Mapping[str, Row]]) -> dict[str, Row]:
        """``{id: row}`` for those of ``ids`` that have one: kept rows, the others read with
        ``select`` (given a list of ids, it returns the rows of those that exist) together
        with the candidates seen and not read yet."""
        kept = self._rows
        if kept is None:
            return dict(select(list(ids)))
        missing = [i for i in dict.fromkeys(ids) if i not in kept]
        if missing:
            asked = set(missing)
            ahead = [i for i in self._seen if i not in kept and i not in asked][:_AHEAD_AT_MOST]
            wanted = missing + ahead
            found = select(wanted)
            for memory_id in wanted:
                kept[memory_id] = found.get(memory_id)
            self._seen = {}
        return {i: row for i in ids if (row := kept.get(i)) is not None}
