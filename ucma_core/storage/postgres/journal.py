"""The graph journal in PostgreSQL, shared by every worker of a memory.

:class:`PgJournal` has the interface of the folder's
:class:`~ucma_core.storage.journal.Journal` (so :class:`~ucma_core.storage.graph.MemoryGraph`
and the backend's crash recovery work unchanged) with rows instead of lines: each
entry is a row of ``journal`` keyed by its sequence number, a snapshot is the
``snapshot`` table plus ``meta.snapshot_seq``. Entries are only appended by a worker
holding the memory's write lock, after it applied every entry before them
(:meth:`pull`), so sequence numbers stay consecutive across workers; the primary key
refuses a duplicate. An intent (``"b"``/``"i"``) is its own committed row before Chroma
is touched, and a transaction's graph changes and commit mark are one SQL transaction.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ucma_core.errors import CorruptStoreError, StorageError
from ucma_core.storage.journal import CONTROL_OPS, Entry, Loaded, Op, Replay, replay

__all__ = ["PgJournal", "db_errors"]


@contextlib.contextmanager
def db_errors(what: str) -> Iterator[None]:
    """Turn psycopg errors into :class:`StorageError` saying what was being done."""
    import psycopg

    try:
        yield
    except psycopg.Error as e:
        raise StorageError(f"PostgreSQL failed while {what}: {str(e).strip()}") from e


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class PgJournal:
    """Append-only operation log with snapshots for one shared memory (see the module)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._seq = 0
        self._since_snapshot = 0
        #: Extra fields of the snapshot (kept for the folder journal's interface).
        self.header: dict[str, Any] = {}
        #: Called with the cursor inside the SQL transaction of every append that ends
        #: with a commit mark (the backend writes the rows of staged records there), and
        #: ``committed`` once that transaction is durable.
        self.at_commit: Callable[[Any], None] | None = None
        self.committed: Callable[[], None] | None = None

    @property
    def entries_since_snapshot(self) -> int:
        return self._since_snapshot

    @property
    def seq(self) -> int:
        return self._seq

    def has_files(self) -> bool:
        with db_errors("reading the graph journal"):
            row = self._conn.execute(
                "SELECT EXISTS (SELECT 1 FROM journal) OR EXISTS (SELECT 1 FROM snapshot)"
            ).fetchone()
        return bool(row[0])

    def snapshot_seq(self) -> int:
        with db_errors("reading the graph snapshot"):
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'snapshot_seq'").fetchone()
        return 0 if row is None else int(row[0])

    # ------------------------------------------------------------------ loading
    def load(
        self,
        apply: Callable[[Iterator[Entry] | None, list[Op]], None],
        reset: Callable[[], None],
        *,
        tolerate_damage: bool = False,
    ) -> Loaded:
        """Read the snapshot and the journal after it into ``apply(entries, ops)``."""
        base = self.snapshot_seq()
        with db_errors("reading the graph snapshot"):
            rows = self._conn.execute("SELECT entry FROM snapshot ORDER BY n").fetchall()
        entries = [json.loads(r[0]) for r in rows]
        ops = self._rows_after(base)
        result = replay([{"op": "v", "seq": base}, *ops])
        apply(iter(entries) if base or entries else None, result.ops)
        self._seq = max(base, result.last_seq)
        self._since_snapshot = sum(1 for op in ops if op["op"] not in CONTROL_OPS)
        return Loaded(result)

    def _rows_after(self, seq: int) -> list[Op]:
        with db_errors("reading the graph journal"):
            rows = self._conn.execute(
                "SELECT seq, line FROM journal WHERE seq > %s ORDER BY seq", (seq,)
            ).fetchall()
        return self._ops(rows, seq)

    @staticmethod
    def _ops(rows: list[tuple[int, str]], seq: int) -> list[Op]:
        ops: list[Op] = []
        last = seq
        for number, line in rows:
            if number != last + 1:
                raise CorruptStoreError(
                    f"the graph journal jumps from entry {last} to entry {number}; restore the "
                    "database from a backup"
                )
            op = json.loads(line)
            op["seq"] = number
            ops.append(op)
            last = number
        return ops

    def pull_query(self) -> Any:
        """Send the query :meth:`pull` reads (a cursor; in a pipeline it is answered together
        with the statements around it)."""
        return self._conn.execute(
            "SELECT -1, value FROM meta WHERE key = 'snapshot_seq' "
            "UNION ALL SELECT seq, line FROM journal WHERE seq > %s ORDER BY 1",
            (self._seq,),
        )

    def open_at_tail(self, rows: list[Any]) -> bool:
        """Whether the answer of :meth:`pull_query` ends in an intent no commit or abort
        closed (a dead writer's: finishing it needs the write lock). Reads nothing."""
        body = rows[1:] if rows and rows[0][0] == -1 else rows
        if not body or (rows and rows[0][0] == -1 and int(rows[0][1]) > self._seq):
            return False
        return replay([{"op": "v", "seq": self._seq}, *self._ops(body, self._seq)]).open_intent is not None

    def pull(self, rows: list[Any] | None = None) -> Replay | None:
        """The entries other workers appended since this one last read or wrote, sorted into
        committed changes and a dead writer's open intent; ``None`` when a snapshot taken
        since then dropped entries this worker never read (reload with :meth:`load`).
        ``rows`` are the answer of :meth:`pull_query` if it was already sent."""
        if rows is None:
            with db_errors("reading the graph journal"):
                rows = self.pull_query().fetchall()
        if rows and rows[0][0] == -1:
            if int(rows[0][1]) > self._seq:
                return None
            rows = rows[1:]
        ops = self._ops(rows, self._seq)
        if not ops:
            return Replay(last_seq=self._seq, marked=True)
        result = replay([{"op": "v", "seq": self._seq}, *ops])
        self._seq = result.last_seq
        self._since_snapshot += sum(1 for op in ops if op["op"] not in CONTROL_OPS)
        return result

    def open_for_append(self) -> None:
        """Nothing to open (kept for the folder journal's interface)."""

    # ------------------------------------------------------------------ writing
    def append(self, ops: Iterable[Op], *, sync: bool | None = None) -> None:
        """Append ``ops`` in one SQL transaction (durable when this returns)."""
        batch = list(ops)
        if not batch:
            return
        first = self._seq
        rows = []
        try:
            for op in batch:
                first += 1
                rows.append((first, _dumps({k: v for k, v in op.items() if k != "seq"})))
        except (TypeError, ValueError) as e:
            raise StorageError(f"a journal entry cannot be written as JSON: {e}") from e
        closing = batch[-1].get("op") == "c"
        with (
            db_errors("appending to the graph journal"),
            self._conn.pipeline(),  # one round trip for the whole transaction
            self._conn.transaction(),
            self._conn.cursor() as cur,
        ):
            cur.execute(  # one statement however many entries (a reader's kept retrieval marks: hundreds)
                "INSERT INTO journal (seq, line) SELECT * FROM unnest(%s::bigint[], %s::text[])",
                ([r[0] for r in rows], [r[1] for r in rows]),
            )
            if closing and self.at_commit is not None:
                self.at_commit(cur)
        if closing and self.committed is not None:
            self.committed()
        for op, (seq, _) in zip(batch, rows, strict=True):
            op["seq"] = seq
        self._seq = first
        self._since_snapshot += sum(1 for op in batch if op["op"] not in CONTROL_OPS)

    def write_snapshot(self, entries: Iterable[Entry], *, keep_previous: bool = True) -> None:
        """Replace the snapshot with ``entries`` and drop the journal rows it folds, in one
        SQL transaction (``keep_previous`` is moot: the transaction is the safety)."""
        rows = [(n, _dumps(entry)) for n, entry in enumerate(entries)]
        with db_errors("writing the graph snapshot"), self._conn.transaction():
            self._conn.execute("DELETE FROM snapshot")
            with self._conn.cursor() as cur:
                cur.executemany("INSERT INTO snapshot (n, entry) VALUES (%s, %s)", rows)
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES ('snapshot_seq', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(self._seq),),
            )
            self._conn.execute("DELETE FROM journal WHERE seq <= %s", (self._seq,))
        self._since_snapshot = 0

    def close(self) -> None:
        """Nothing to close (the backend owns the connection)."""
