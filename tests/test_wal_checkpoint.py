"""The keyword index's write-ahead log stays bounded even when the checkpoint thread never runs
(a busy machine): past twice the limit the writer checkpoints itself."""

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
