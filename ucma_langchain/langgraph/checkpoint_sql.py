"""The checkpoint operations LangGraph's ``SqliteSaver`` does not implement, as SQL on
its own tables (``checkpoints`` and ``writes``, created by ``SqliteSaver.setup``).

Each function runs inside one ``SqliteSaver.cursor()`` transaction, so it holds the
saver's lock and commits (or nothing changes) as a whole.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

__all__ = [
    "copy_thread",
    "delete_for_runs",
    "delete_threads",
    "done",
    "enqueue",
    "outbox",
    "pending_count",
    "prune_keep_latest",
    "record_thread",
    "scrub",
    "session_threads",
    "setup",
    "thread_metadata",
    "thread_scopes",
    "user_threads",
]

_CHECKPOINT_COLUMNS = "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_WRITE_COLUMNS = "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"


def _delete_checkpoints(cur: sqlite3.Cursor, rows: Sequence[tuple[str, str, str]]) -> None:
    """Delete the given ``(thread_id, checkpoint_ns, checkpoint_id)`` checkpoints and their writes."""
    cur.executemany(
        "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", rows
    )
    cur.executemany(
        "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?", rows
    )


def delete_for_runs(cur: sqlite3.Cursor, run_ids: Sequence[str]) -> None:
    """Delete every checkpoint whose metadata ``run_id`` is one of ``run_ids``, with its writes."""
    if not run_ids:
        return
    marks = ", ".join("?" for _ in run_ids)
    cur.execute(
        "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
        f"WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN ({marks})",
        [str(r) for r in run_ids],
    )
    _delete_checkpoints(cur, cur.fetchall())


def copy_thread(cur: sqlite3.Cursor, source: str, target: str) -> None:
    """Copy every checkpoint and write of ``source`` (all namespaces) to ``target``."""
    cur.execute(
        f"INSERT OR REPLACE INTO checkpoints (thread_id, {_CHECKPOINT_COLUMNS}) "
        f"SELECT ?, {_CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ?",
        (target, source),
    )
    cur.execute(
        f"INSERT OR REPLACE INTO writes (thread_id, {_WRITE_COLUMNS}) "
        f"SELECT ?, {_WRITE_COLUMNS} FROM writes WHERE thread_id = ?",
        (target, source),
    )
    for scope in thread_scopes(cur, source):  # the copy holds the source's users' text
        record_thread(cur, target, scope)


def prune_keep_latest(cur: sqlite3.Cursor, thread_ids: Sequence[str]) -> None:
    """Keep only the newest checkpoint of each namespace of each thread (and its writes)."""
    for thread_id in thread_ids:
        cur.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints AS c WHERE thread_id = ? "
            "AND checkpoint_id < (SELECT MAX(checkpoint_id) FROM checkpoints "
            "WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns)",
            (thread_id,),
        )
        _delete_checkpoints(cur, cur.fetchall())


def thread_metadata(cur: sqlite3.Cursor, thread_id: str) -> list[bytes | str]:
    """The distinct stored metadata blobs of a thread's checkpoints."""
    cur.execute("SELECT DISTINCT metadata FROM checkpoints WHERE thread_id = ?", (thread_id,))
    return [row[0] for row in cur.fetchall() if row[0] is not None]


# ------------------------------------------------------------------ UCMA's own tables
#: ``ucma_outbox``: the checkpoints whose messages are not yet durable in the memory, in
#: the order they were stored (AUTOINCREMENT: a number is never reused), with the scope
#: they go to. ``ucma_threads``: the scopes each thread ran in (for forgetting a user).
SCHEMA = """
CREATE TABLE IF NOT EXISTS ucma_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    user_id TEXT,
    agent_id TEXT,
    session_id TEXT
);
CREATE TABLE IF NOT EXISTS ucma_threads (
    thread_id TEXT NOT NULL,
    user_id TEXT,
    agent_id TEXT,
    session_id TEXT
);
CREATE INDEX IF NOT EXISTS ucma_threads_user ON ucma_threads (user_id);
CREATE INDEX IF NOT EXISTS ucma_threads_thread ON ucma_threads (thread_id);
"""

Scope = tuple[str | None, str | None, str | None]


def setup(conn: sqlite3.Connection) -> None:
    """Create UCMA's tables (idempotent)."""
    conn.executescript(SCHEMA)
    conn.commit()


def record_thread(cur: sqlite3.Cursor, thread_id: str, scope: Scope) -> None:
    """Remember that ``thread_id`` ran in ``scope`` (once)."""
    cur.execute(
        "INSERT INTO ucma_threads (thread_id, user_id, agent_id, session_id) SELECT ?, ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM ucma_threads WHERE thread_id = ? AND user_id IS ? "
        "AND agent_id IS ? AND session_id IS ?)",
        (thread_id, *scope, thread_id, *scope),
    )


def enqueue(cur: sqlite3.Cursor, thread_id: str, ns: str, checkpoint_id: str, scope: Scope) -> int:
    """Put a checkpoint in the outbox; returns its sequence number."""
    cur.execute(
        "INSERT INTO ucma_outbox (thread_id, checkpoint_ns, checkpoint_id, user_id, agent_id, session_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (thread_id, ns, checkpoint_id, *scope),
    )
    return int(cur.lastrowid or 0)


def outbox(cur: sqlite3.Cursor) -> list[tuple[int, str, str, str, Scope]]:
    """Every checkpoint not yet mirrored, oldest first."""
    cur.execute(
        "SELECT seq, thread_id, checkpoint_ns, checkpoint_id, user_id, agent_id, session_id "
        "FROM ucma_outbox ORDER BY seq"
    )
    return [(row[0], row[1], row[2], row[3], (row[4], row[5], row[6])) for row in cur.fetchall()]


def done(cur: sqlite3.Cursor, seqs: Sequence[int]) -> None:
    """Take mirrored checkpoints out of the outbox."""
    cur.executemany("DELETE FROM ucma_outbox WHERE seq = ?", [(s,) for s in seqs])


def pending_count(cur: sqlite3.Cursor) -> int:
    cur.execute("SELECT COUNT(*) FROM ucma_outbox")
    return int(cur.fetchone()[0])


def thread_scopes(cur: sqlite3.Cursor, thread_id: str) -> list[Scope]:
    """The scopes recorded for a thread."""
    cur.execute(
        "SELECT DISTINCT user_id, agent_id, session_id FROM ucma_threads WHERE thread_id = ?", (thread_id,)
    )
    return [(r[0], r[1], r[2]) for r in cur.fetchall()]


def user_threads(cur: sqlite3.Cursor, user_id: str, metadata_key: str | None) -> list[str]:
    """The threads that ran for ``user_id``: recorded by UCMA, or (for checkpoints stored
    before it recorded them) named in the checkpoints' metadata under ``metadata_key``."""
    cur.execute("SELECT DISTINCT thread_id FROM ucma_threads WHERE user_id = ?", (user_id,))
    found = {r[0] for r in cur.fetchall()}
    if metadata_key is not None:
        cur.execute(
            "SELECT DISTINCT thread_id FROM checkpoints WHERE json_extract(CAST(metadata AS TEXT), ?) = ?",
            (f'$."{metadata_key}"', user_id),
        )
        found |= {r[0] for r in cur.fetchall()}
    return sorted(found)


def session_threads(
    cur: sqlite3.Cursor, session_id: str, user_id: str | None, agent_id: str | None
) -> list[str]:
    """The threads recorded as running in one session of ``user_id`` (any agent when ``None``)."""
    cur.execute(
        "SELECT DISTINCT thread_id FROM ucma_threads WHERE session_id = ? AND user_id IS ? "
        "AND (? IS NULL OR agent_id IS ?)",
        (session_id, user_id, agent_id, agent_id),
    )
    return [r[0] for r in cur.fetchall()]


def delete_threads(cur: sqlite3.Cursor, thread_ids: Sequence[str]) -> None:
    """Delete threads everywhere: checkpoints, writes, outbox and scope records."""
    rows = [(t,) for t in thread_ids]
    for table in ("writes", "checkpoints", "ucma_outbox", "ucma_threads"):
        cur.executemany(f"DELETE FROM {table} WHERE thread_id = ?", rows)


def scrub(conn: sqlite3.Connection) -> None:
    """Erase deleted rows from the file: the connection runs with ``secure_delete`` (freed
    pages are zeroed), ``VACUUM`` rewrites the database without free pages, and a
    ``TRUNCATE`` checkpoint empties the write-ahead log that held the old pages."""
    conn.commit()
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
