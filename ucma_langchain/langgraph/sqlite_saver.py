"""The checkpointer's store on SQLite: LangGraph's ``SqliteSaver`` in one file, whose write
transaction can carry UCMA's rows (:func:`checkpoint_pg.open_saver` is the PostgreSQL twin;
the SQL UCMA adds on the saver's tables is in :mod:`checkpoint_sql`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver

from ucma_core.attachments import file_error
from ucma_langchain.langgraph import checkpoint_sql

__all__ = ["OutboxSqliteSaver", "open_saver"]


class OutboxSqliteSaver(SqliteSaver):
    """LangGraph's ``SqliteSaver``, whose next write transaction in this thread can carry
    UCMA's rows (the outbox entry commits with the checkpoint, or neither does)."""

    def __init__(self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None) -> None:
        super().__init__(conn, serde=serde)
        self.along = threading.local()

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        with super().cursor(transaction) as cur:
            yield cur
            along: Callable[[sqlite3.Cursor], None] | None = getattr(self.along, "fn", None)
            if transaction and along is not None:
                self.along.fn = None
                along(cur)


def open_saver(path: Path, *, serde: SerializerProtocol | None) -> OutboxSqliteSaver:
    """The saver on the SQLite file ``path``, UCMA's tables set up and freed pages zeroed
    (``secure_delete``: deleted text is gone from the file).

    Raises:
        StorageError: the file cannot be opened or set up (``DiskFullError`` on a full disk).
    """
    try:
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed: deleted text is gone
        checkpoint_sql.setup(conn)
    except sqlite3.Error as e:
        raise file_error(e, f"opening the checkpoint database {path}", folder=path.parent) from e
    return OutboxSqliteSaver(conn, serde=serde)
