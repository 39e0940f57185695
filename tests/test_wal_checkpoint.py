"""The keyword index's write-ahead log stays bounded on a busy machine: past twice the limit the
writer checkpoints itself, whether the checkpoint thread never runs or runs behind it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ucma_core.storage.walcheckpoint import WalCheckpointer


def test_a_writer_without_the_thread_keeps_the_log_under_twice_the_limit_and_a_write(tmp_path: Path) -> None:
    path = tmp_path / "demo.sqlite3"
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("PRAGMA journal_size_limit=16384")
    db.execute("CREATE TABLE t (x TEXT)")
    checkpointer = WalCheckpointer(path, max_bytes=16 * 1024, background=False)
    wal = Path(f"{path}-wal")
    largest = 0
    for _ in range(400):
        db.execute("INSERT INTO t VALUES (?)", ("x" * 2000,))
        checkpointer.wrote()
        largest = max(largest, wal.stat().st_size)
    checkpointer.close()
    assert checkpointer.checkpoints > 0
    assert largest < 2 * 16 * 1024 + 3 * 4096 + 1024  # twice the limit, one write's pages
    assert db.execute("SELECT count(*) FROM t").fetchone() == (400,)
    db.close()


def test_a_writer_racing_the_thread_still_keeps_the_log_under_twice_the_limit(tmp_path: Path) -> None:
    # The thread copies the log while the writer keeps appending, so its checkpoints never
    # let the log start over; the writer's own checkpoint must wait for the thread's rather
    # than give up as "busy" (which let a keyword index's log reach 2 MB on a busy machine).
    path = tmp_path / "race.sqlite3"
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("PRAGMA journal_size_limit=16384")
    db.execute("CREATE TABLE t (x TEXT)")
    checkpointer = WalCheckpointer(path, max_bytes=16 * 1024)
    wal = Path(f"{path}-wal")
    largest = 0
    for _ in range(1000):
        db.execute("INSERT INTO t VALUES (?)", ("x" * 2000,))
        checkpointer.wrote()
        largest = max(largest, wal.stat().st_size)
    checkpointer.close()
    assert largest < 2 * 16 * 1024 + 3 * 4096 + 1024
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1000,)
    db.close()
