"""Checkpointing a SQLite write-ahead log on a background thread.

SQLite's automatic checkpoint runs inside the ``COMMIT`` that crosses its page limit,
so every few writes one caller pays for copying the log into the database and two
``fsync`` calls (milliseconds, far more on a busy disk). :class:`WalCheckpointer`
moves that work off the writer: the writer turns automatic checkpoints off and calls
:meth:`WalCheckpointer.wrote` after each commit; once the log passes ``max_bytes``, a
daemon thread with its own connection runs a ``PASSIVE`` checkpoint (it never blocks
the writer nor readers). The next commit after a complete checkpoint restarts the log,
and the writer's ``journal_size_limit`` cuts the file back, so the log stays about as
small as with automatic checkpoints. A thread that falls behind (a busy machine) does not
let the log grow without bound: past twice ``max_bytes`` the writer checkpoints in
:meth:`WalCheckpointer.wrote` itself, as SQLite's automatic checkpoint would. That one
waits for a checkpoint the thread is running (SQLite would answer it "busy"), because
only a checkpoint that completes between two of the writer's transactions lets the next
one start the log over: a thread that copies the log while the writer keeps appending
never catches up on a busy machine.

Examples:
    >>> import sqlite3, tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "demo.sqlite3"
    >>> db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    >>> _ = db.execute("PRAGMA journal_mode=WAL"), db.execute("PRAGMA wal_autocheckpoint=0")
    >>> _ = db.execute("CREATE TABLE t (x TEXT)")
    >>> checkpointer = WalCheckpointer(path, max_bytes=16 * 1024)
    >>> for n in range(200):
    ...     _ = db.execute("INSERT INTO t VALUES (?)", ("x" * 500,))
    ...     checkpointer.wrote()
    >>> checkpointer.close()
    >>> checkpointer.checkpoints > 0
    True
    >>> db.close()
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from pathlib import Path

__all__ = ["WalCheckpointer"]


class WalCheckpointer:
    """Checkpoints ``path``'s write-ahead log on a daemon thread once it passes ``max_bytes``.

    Args:
        path: the SQLite database file (its log is ``path`` + ``-wal``).
        max_bytes: the log size that asks for a checkpoint.
        background: ``False`` starts no thread: only the writer checkpoints, past twice
            ``max_bytes`` (what a thread that never gets the processor comes down to).
    """

    def __init__(self, path: Path, *, max_bytes: int, background: bool = True) -> None:
        self._path = path
        self._background = background
        self._wal = f"{path}-wal"
        self._max_bytes = max_bytes
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        #: The writer's own connection for a checkpoint the thread fell behind on.
        self._own: sqlite3.Connection | None = None
        self._own_lock = threading.Lock()
        #: Held while either connection checkpoints (SQLite runs one checkpoint at a time).
        self._running = threading.Lock()
        #: Checkpoints run so far (for tests and diagnostics).
        self.checkpoints = 0

    def wrote(self) -> None:
        """Call after a commit: asks for a checkpoint when the log has grown past the limit."""
        try:
            size = os.stat(self._wal).st_size
        except OSError:  # no log (yet): nothing to checkpoint
            return
        if size <= self._max_bytes:
            return
        with self._lock:
            if self._closed:
                return
            if self._thread is None and self._background:
                self._thread = threading.Thread(target=self._run, name="ucma-wal-checkpoint", daemon=True)
                self._thread.start()
        self._wake.set()
        if size > 2 * self._max_bytes:  # the thread is behind: this writer pays, as SQLite would
            self._checkpoint_here()

    def _checkpoint_here(self) -> None:
        with self._own_lock:
            if self._closed:
                return
            # a failed or busy checkpoint is retried at the next write, like the thread's
            with contextlib.suppress(sqlite3.Error):
                if self._own is None:
                    self._own = sqlite3.connect(
                        self._path, isolation_level=None, check_same_thread=False, timeout=1.0
                    )
                with self._running:  # after the thread's checkpoint, if one is under way
                    self._own.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.checkpoints += 1

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False, timeout=1.0)
        except sqlite3.Error:  # the writer's own automatic path is off; its next open checkpoints
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                # a failed or busy checkpoint is retried at the next wake-up; it is never needed
                # for correctness (the log holds every commit until copied)
                with contextlib.suppress(sqlite3.Error), self._running:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
        finally:
            db.close()

    def close(self) -> None:
        """Stop the thread (waiting for a checkpoint under way); later :meth:`wrote` calls do nothing."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()
        with self._own_lock:
            if self._own is not None:
                self._own.close()
                self._own = None
