"""The checkpoint operations LangGraph's ``SqliteSaver`` does not implement, as SQL on
its own tables (``checkpoints`` and ``writes``, created by ``SqliteSaver.setup``).

Each function runs inside one ``SqliteSaver.cursor()`` transaction, so it holds the
saver's lock and commits (or nothing changes) as a whole.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

__all__ = ["copy_thread", "delete_for_runs", "prune_keep_latest", "thread_metadata"]

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
