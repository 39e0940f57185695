"""What a shared memory was handed and did not store, in the ``skipped`` table.

:class:`PgSkippedLog` is the folder's :class:`~ucma_core.storage.skipped.SkippedLog`
(``skipped.jsonl``) for a memory in PostgreSQL: every worker appends to and reads the
same table, so :meth:`~ucma_core.Memory.skipped`, :meth:`~ucma_core.Memory.verify` and
:meth:`~ucma_core.Memory.stats` in one worker show what any worker skipped, and
``forget_user`` / ``forget_session`` in one worker remove the scope's records for all.
A row holds one record as JSON (ids, a reason and a length, never the text). Callers
hold the memory's lock: the rows are read and written on the lock's connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from ucma_core.scope import Scope
from ucma_core.storage.postgres.journal import db_errors
from ucma_core.storage.skipped import Skipped, same_message

__all__ = ["PgSkippedLog"]


class PgSkippedLog:
    """The ``skipped`` table of one shared memory (see the module)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        #: ``None``: there is no file (kept for the folder log's interface).
        self.path = None

    def _rows(self) -> list[tuple[int, Skipped]]:
        with db_errors("reading the skipped messages"):
            rows = self._conn.execute("SELECT n, entry FROM skipped ORDER BY n").fetchall()
        return [(int(n), Skipped.from_dict(json.loads(entry))) for n, entry in rows]

    def entries(self, scope: Scope | None = None) -> list[Skipped]:
        """The records (of ``scope``, when given), oldest first."""
        return [e for _, e in self._rows() if scope is None or scope.admits(asdict(e))]

    def __len__(self) -> int:
        with db_errors("counting the skipped messages"):
            return int(self._conn.execute("SELECT count(*) FROM skipped").fetchone()[0])

    def add(self, entries: Iterable[Skipped]) -> None:
        """Insert ``entries`` (committed before this returns); a message already recorded
        with the same ids and reason is not recorded again."""
        new = list(entries)
        if not new:
            return
        seen = {same_message(e) for _, e in self._rows() if e.message_id is not None}
        rows: list[tuple[str]] = []
        for entry in new:
            if entry.message_id is None or same_message(entry) not in seen:
                rows.append((json.dumps(entry.to_dict(), ensure_ascii=False),))
                if entry.message_id is not None:
                    seen.add(same_message(entry))
        if not rows:
            return
        with db_errors("recording skipped messages"), self._conn.transaction(), self._conn.cursor() as cur:
            cur.executemany("INSERT INTO skipped (entry) VALUES (%s)", rows)

    def forget(self, scope: Scope) -> int:
        """Delete the records of ``scope`` (and vacuum the table); returns how many."""
        doomed = [n for n, e in self._rows() if scope.admits(asdict(e))]
        if not doomed:
            return 0
        with db_errors("forgetting skipped messages"):
            self._conn.execute("DELETE FROM skipped WHERE n = ANY(%s)", (doomed,))
            self._conn.execute("VACUUM skipped")
        return len(doomed)
