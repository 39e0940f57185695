"""The checkpointer's SQL on PostgreSQL: LangGraph's ``PostgresSaver`` tables in the memory's
schema, plus UCMA's outbox and thread records (:mod:`checkpoint_sql` is the SQLite twin;
the functions have the same names and meanings).

``PostgresSaver`` (``langgraph-checkpoint-postgres``) keeps ``checkpoints``,
``checkpoint_blobs`` and ``checkpoint_writes``; this module adds ``ucma_outbox`` and
``ucma_threads`` beside them. Every function takes a psycopg cursor that returns tuples;
the caller decides the transaction (see
:class:`~ucma_langchain.langgraph.checkpointer.UCMACheckpointer`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

__all__ = [
    "SCHEMA",
    "copy_thread",
    "delete_for_runs",
    "delete_threads",
    "done",
    "enqueue",
    "outbox",
    "pending_count",
    "record_thread",
    "scrub",
    "session_threads",
    "setup",
    "thread_metadata",
    "thread_scopes",
    "user_threads",
]

Scope = tuple[str | None, str | None, str | None]

#: UCMA's tables beside ``PostgresSaver``'s (see :mod:`checkpoint_sql` for their meaning).
SCHEMA = [
    "CREATE TABLE IF NOT EXISTS ucma_outbox (seq bigserial PRIMARY KEY, thread_id text NOT NULL, "
    "checkpoint_ns text NOT NULL, checkpoint_id text NOT NULL, user_id text, agent_id text, session_id text)",
    "CREATE TABLE IF NOT EXISTS ucma_threads (thread_id text NOT NULL, user_id text, agent_id text, "
    "session_id text)",
    "CREATE INDEX IF NOT EXISTS ucma_threads_user ON ucma_threads (user_id)",
    "CREATE INDEX IF NOT EXISTS ucma_threads_thread ON ucma_threads (thread_id)",
]
_TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints", "ucma_outbox", "ucma_threads")


def setup(cur: Any) -> None:
    """Create UCMA's tables (idempotent; run under the checkpointer's setup lock)."""
    for statement in SCHEMA:
        cur.execute(statement)


def record_thread(cur: Any, thread_id: str, scope: Scope) -> None:
    """Remember that ``thread_id`` ran in ``scope`` (once)."""
    cur.execute(
        "INSERT INTO ucma_threads (thread_id, user_id, agent_id, session_id) SELECT %s, %s, %s, %s "
        "WHERE NOT EXISTS (SELECT 1 FROM ucma_threads WHERE thread_id = %s "
        "AND user_id IS NOT DISTINCT FROM %s AND agent_id IS NOT DISTINCT FROM %s "
        "AND session_id IS NOT DISTINCT FROM %s)",
        (thread_id, *scope, thread_id, *scope),
    )


def enqueue(cur: Any, thread_id: str, ns: str, checkpoint_id: str, scope: Scope) -> int:
    """Put a checkpoint in the outbox; returns its sequence number."""
    cur.execute(
        "INSERT INTO ucma_outbox (thread_id, checkpoint_ns, checkpoint_id, user_id, agent_id, session_id) "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING seq",
        (thread_id, ns, checkpoint_id, *scope),
    )
    return int(cur.fetchone()[0])


def outbox(cur: Any) -> list[tuple[int, str, str, str, Scope]]:
    """Every checkpoint not yet mirrored, oldest first."""
    cur.execute(
        "SELECT seq, thread_id, checkpoint_ns, checkpoint_id, user_id, agent_id, session_id "
        "FROM ucma_outbox ORDER BY seq"
    )
    return [(int(r[0]), r[1], r[2], r[3], (r[4], r[5], r[6])) for r in cur.fetchall()]


def done(cur: Any, seqs: Sequence[int]) -> None:
    """Take mirrored checkpoints out of the outbox."""
    cur.execute("DELETE FROM ucma_outbox WHERE seq = ANY(%s)", (list(seqs),))


def pending_count(cur: Any) -> int:
    cur.execute("SELECT COUNT(*) FROM ucma_outbox")
    return int(cur.fetchone()[0])


def thread_scopes(cur: Any, thread_id: str) -> list[Scope]:
    """The scopes recorded for a thread."""
    cur.execute(
        "SELECT DISTINCT user_id, agent_id, session_id FROM ucma_threads WHERE thread_id = %s", (thread_id,)
    )
    return [(r[0], r[1], r[2]) for r in cur.fetchall()]


def thread_metadata(cur: Any, thread_id: str) -> list[str]:
    """The distinct stored metadata of a thread's checkpoints, as JSON text."""
    cur.execute("SELECT DISTINCT metadata::text FROM checkpoints WHERE thread_id = %s", (thread_id,))
    return [r[0] for r in cur.fetchall() if r[0] is not None]


def user_threads(cur: Any, user_id: str, metadata_key: str | None) -> list[str]:
    """The threads that ran for ``user_id``: recorded by UCMA, or named in the checkpoints'
    metadata under ``metadata_key``."""
    cur.execute("SELECT DISTINCT thread_id FROM ucma_threads WHERE user_id = %s", (user_id,))
    found = {r[0] for r in cur.fetchall()}
    if metadata_key is not None:
        cur.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE metadata ->> %s = %s", (metadata_key, user_id)
        )
        found |= {r[0] for r in cur.fetchall()}
    return sorted(found)


def session_threads(cur: Any, session_id: str, user_id: str | None, agent_id: str | None) -> list[str]:
    """The threads recorded as running in one session of ``user_id`` (any agent when ``None``)."""
    cur.execute(
        "SELECT DISTINCT thread_id FROM ucma_threads WHERE session_id = %s "
        "AND user_id IS NOT DISTINCT FROM %s AND (%s::text IS NULL OR agent_id IS NOT DISTINCT FROM %s)",
        (session_id, user_id, agent_id, agent_id),
    )
    return [r[0] for r in cur.fetchall()]


def delete_threads(cur: Any, thread_ids: Sequence[str]) -> None:
    """Delete threads everywhere: checkpoints, blobs, writes, outbox and scope records."""
    if not thread_ids:
        return
    for table in _TABLES:
        cur.execute(f"DELETE FROM {table} WHERE thread_id = ANY(%s)", (list(thread_ids),))


def delete_for_runs(cur: Any, run_ids: Sequence[str]) -> None:
    """Delete every checkpoint whose metadata ``run_id`` is one of ``run_ids``, with its writes
    (the blobs stay: other checkpoints of the thread may share them)."""
    if not run_ids:
        return
    cur.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
        "WHERE metadata ->> 'run_id' = ANY(%s)",
        ([str(r) for r in run_ids],),
    )
    rows = cur.fetchall()
    for table in ("checkpoint_writes", "checkpoints"):
        cur.executemany(
            f"DELETE FROM {table} WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
            [tuple(r) for r in rows],
        )


def copy_thread(cur: Any, source: str, target: str) -> None:
    """Copy every checkpoint, blob and write of ``source`` (all namespaces) to ``target``."""
    cur.execute(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint, metadata) SELECT %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
        "checkpoint, metadata FROM checkpoints WHERE thread_id = %s "
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET "
        "parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, "
        "checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata",
        (target, source),
    )
    cur.execute(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
        "SELECT %s, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = %s "
        "ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO UPDATE SET "
        "type = EXCLUDED.type, blob = EXCLUDED.blob",
        (target, source),
    )
    cur.execute(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, "
        "channel, type, blob) SELECT %s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
        "type, blob FROM checkpoint_writes WHERE thread_id = %s "
        "ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET "
        "task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, "
        "blob = EXCLUDED.blob",
        (target, source),
    )
    for scope in thread_scopes(cur, source):  # the copy holds the source's users' text
        record_thread(cur, target, scope)


def scrub(cur: Any) -> None:
    """``VACUUM`` the checkpoint tables (outside a transaction): deleted rows' space is
    reclaimed in the table files, so a ``pg_dump`` or a table scan holds nothing of them.
    What PostgreSQL keeps in its write-ahead log until it recycles it is outside UCMA."""
    cur.execute(f"VACUUM {', '.join(_TABLES)}")


# ------------------------------------------------------------------ the saver
def open_saver(target: Any, *, serde: Any, timeout: float = 10.0) -> Any:
    """LangGraph's ``PostgresSaver`` (as :class:`OutboxPostgresSaver`) on its own connection to
    ``target``'s database, its tables in the memory's schema, set up under an advisory lock
    (workers opening at once do not race on the migrations).

    Raises:
        StorageError: the database cannot be reached or set up.
        DependencyMissingError: ``langgraph-checkpoint-postgres`` is not installed.
    """
    from ucma_core.errors import StorageError
    from ucma_core.storage.postgres.connection import lock_key

    saver_cls = _saver_class()
    import psycopg
    from psycopg.rows import dict_row

    try:
        conn = psycopg.connect(
            target.conninfo,
            autocommit=True,
            row_factory=dict_row,
            prepare_threshold=0,
            connect_timeout=max(1, int(timeout)),
            application_name="ucma-checkpoints",
            options=f"-c search_path={target.schema}",
        )
    except psycopg.Error as e:
        raise StorageError(
            f"cannot connect to {target.display} for the LangGraph checkpoints: {str(e).strip()}"
        ) from e
    try:
        key = lock_key(target, "checkpoints-setup")
        _wait_for_setup_lock(conn, key, target)
        try:
            saver = saver_cls(conn, serde=serde)
            saver.setup()
            with conn.cursor() as cur:
                setup(cur)
        finally:
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
    except psycopg.Error as e:
        conn.close()
        raise StorageError(
            f"PostgreSQL failed while setting up the LangGraph checkpoint tables in {target.display}: "
            f"{str(e).strip()}"
        ) from e
    except BaseException:
        conn.close()
        raise
    return saver


def _wait_for_setup_lock(conn: Any, key: str, target: Any) -> None:
    """Take the setup lock by trying it again and again rather than waiting in
    ``pg_advisory_lock``: LangGraph's migrations create indexes ``CONCURRENTLY``, which waits
    for every open transaction, a statement waiting for the lock included, so a second
    worker blocked in ``pg_advisory_lock`` while the first one migrates is a deadlock."""
    from ucma_core.errors import StorageError

    deadline = time.monotonic() + _SETUP_WAIT_SECONDS
    while not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s)) AS taken", (key,)).fetchone()["taken"]:
        if time.monotonic() > deadline:
            raise StorageError(
                f"another worker has been setting up the LangGraph checkpoint tables in {target.display} "
                f"for over {_SETUP_WAIT_SECONDS:.0f} s; try again when it has finished"
            )
        time.sleep(0.05)


#: How long a worker waits for another one to finish setting up the checkpoint tables.
_SETUP_WAIT_SECONDS = 300.0

_SAVER: Any = None


def _saver_class() -> Any:
    """:class:`OutboxPostgresSaver`, defined on first use (LangGraph's Postgres saver is an
    optional dependency)."""
    global _SAVER
    if _SAVER is not None:
        return _SAVER
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError as e:
        from ucma_core.errors import DependencyMissingError

        raise DependencyMissingError(
            "a LangGraph checkpointer on a postgresql:// memory needs langgraph-checkpoint-postgres; "
            "install the extras: pip install 'ucma[langgraph-postgres]'"
        ) from e
    import threading
    from collections.abc import Iterator
    from contextlib import contextmanager

    from psycopg.rows import tuple_row

    class OutboxPostgresSaver(PostgresSaver):
        """LangGraph's ``PostgresSaver`` whose next ``put`` in this thread can carry UCMA's rows
        in the same transaction (the outbox entry commits with the checkpoint, or neither
        does). ``tx`` serialises every use of the one connection, so no other thread's
        statement runs inside that transaction."""

        def __init__(self, conn: Any, *, serde: Any) -> None:
            super().__init__(conn, serde=serde)
            self.db: Any = conn  # the one psycopg connection (never a pool: see ``tx``)
            self.along = threading.local()
            self.tx = threading.RLock()

        @contextmanager
        def cursor(self, transaction: bool = True) -> Iterator[Any]:
            """A tuple cursor for UCMA's SQL; in a transaction unless ``transaction=False``."""
            with self.tx, self.lock:
                if transaction:
                    with self.db.transaction(), self.db.cursor(row_factory=tuple_row) as cur:
                        yield cur
                else:
                    with self.db.cursor(row_factory=tuple_row) as cur:
                        yield cur

        @contextmanager
        def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
            with self.tx, super()._cursor(pipeline=pipeline) as cur:
                yield cur

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            with self.tx:
                along, self.along.fn = getattr(self.along, "fn", None), None
                with self.db.transaction():
                    stored = super().put(config, checkpoint, metadata, new_versions)
                    if along is not None:
                        with self.lock, self.db.cursor(row_factory=tuple_row) as cur:
                            along(cur)
            return stored

    _SAVER = OutboxPostgresSaver
    return _SAVER
