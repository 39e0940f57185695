"""The keyword index's write-ahead log stays bounded on a busy machine: past twice the limit the
writer checkpoints itself, whether the checkpoint thread never runs or runs behind it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ucma_core.storage.walcheckpoint import WalCheckpointer

LIMIT = 16 * 1024
#: The largest log allowed: twice the limit, and one write's pages.
BOUND = 2 * LIMIT + 3 * 4096 + 1024


def _logged_db(path: Path) -> sqlite3.Connection:
    """A database in WAL mode whose automatic checkpoints are off (a :class:`WalCheckpointer`'s job)."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute(f"PRAGMA journal_size_limit={LIMIT}")
    db.execute("CREATE TABLE t (x TEXT)")
    return db


def _largest_log(db: sqlite3.Connection, path: Path, checkpointer: WalCheckpointer, writes: int) -> int:
    """Write ``writes`` rows, telling ``checkpointer`` after each; the largest log seen."""
    wal = Path(f"{path}-wal")
    largest = 0
    for _ in range(writes):
        db.execute("INSERT INTO t VALUES (?)", ("x" * 2000,))
        checkpointer.wrote()
        largest = max(largest, wal.stat().st_size)
    checkpointer.close()
    assert db.execute("SELECT count(*) FROM t").fetchone() == (writes,)
    return largest


def test_a_writer_without_the_thread_keeps_the_log_under_twice_the_limit_and_a_write(tmp_path: Path) -> None:
    path = tmp_path / "demo.sqlite3"
    db = _logged_db(path)
    checkpointer = WalCheckpointer(path, max_bytes=LIMIT, background=False)
    assert _largest_log(db, path, checkpointer, 400) < BOUND
    assert checkpointer.checkpoints > 0
    db.close()


def test_a_writer_racing_the_thread_still_keeps_the_log_under_twice_the_limit(tmp_path: Path) -> None:
    # The thread copies the log while the writer keeps appending, so its checkpoints never
    # let the log start over; the writer's own checkpoint must wait for the thread's rather
    # than give up as "busy" (which let a keyword index's log reach 2 MB on a busy machine).
    path = tmp_path / "race.sqlite3"
    db = _logged_db(path)
    assert _largest_log(db, path, WalCheckpointer(path, max_bytes=LIMIT), 1000) < BOUND
    db.close()
