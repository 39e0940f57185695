"""The lock around every call of a shared memory: this process's threads, then the
memory's PostgreSQL write lock (and a sync with what other workers wrote).

:class:`SharedLock` is what :class:`~ucma_core.Memory` holds where a folder memory
holds a ``threading.RLock``: reentrant, a context manager. The outermost acquire in
this process takes the advisory lock through :meth:`PgBackend.lock
<ucma_core.storage.postgres.backend.PgBackend.lock>`; the matching release frees it.
:meth:`SharedLock.reading` is the same lock for a call that only reads: the outermost
acquire takes the advisory lock shared, so readers of every worker run side by side.

A reader's hold outlives its call a little. Taking the lock shared costs a round trip
(the lock, the change feed, the manifest generation) and freeing it another, while
every write of every worker holds it exclusively: for as long as this worker holds it
shared, nothing it read can change. So a release of a shared hold keeps it for
:data:`LINGER` seconds; a read in that time continues the hold with no round trip and
with the rows the hold read already (:mod:`.heldrows`). A background thread frees a
hold no read continued. A hold is continued only until :data:`HOLD_AT_MOST` seconds
after it was taken: then the next read frees it and queues for it again, behind any
worker waiting to write (PostgreSQL grants a waiting exclusive request before a later
shared one), so a writer waits at most that long for readers that keep reading. A
write in this process frees the shared hold before it takes the lock exclusively.
Both times are settings of the memory (:class:`~ucma_core.config.SharedConfig`); the
constants below are their defaults.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Final, Protocol

from ucma_core.errors import StorageError

__all__ = ["HOLD_AT_MOST", "LINGER", "ReadLock", "SharedLock"]

logger = logging.getLogger(__name__)

#: Seconds a released shared hold is kept for the next read.
LINGER: Final = 0.01
#: Seconds after it was taken that a shared hold is no longer continued.
HOLD_AT_MOST: Final = 0.05


class _Lockable(Protocol):
    @property
    def held(self) -> str | None: ...

    def lock(self, *, sync: bool = True, shared: bool = False) -> None: ...

    def unlock(self) -> None: ...


class SharedLock:
    """Reentrant lock: a thread lock plus the memory's write lock while held (see the module).

    Args:
        backend: the shared memory's backend (takes and frees the write lock).
        linger: seconds a released shared hold is kept for the next read (0: none).
        hold_at_most: seconds after it was taken that a shared hold is no longer continued.
    """

    def __init__(
        self, backend: _Lockable, *, linger: float = LINGER, hold_at_most: float = HOLD_AT_MOST
    ) -> None:
        self._local = threading.RLock()
        self._depth = 0
        self._backend = backend
        self._linger = linger
        self._hold_at_most = hold_at_most
        #: A shared hold outlives its call: freed by the next acquire or by the releaser.
        self._lingering = False
        self._taken_at = 0.0  # when the current shared hold was taken (monotonic)
        self._released_at = 0.0  # when its last call released it (monotonic)
        self._wake = threading.Condition(threading.Lock())
        self._releaser: threading.Thread | None = None
        self._stopping = False

    def acquire(self, blocking: bool = True, timeout: float = -1, *, shared: bool = False) -> bool:
        """Take the lock (``shared``: for reading only, when this is the outermost acquire)."""
        if not self._local.acquire(blocking, timeout):
            return False
        self._depth += 1
        if self._depth == 1:
            try:
                if self._lingering:
                    self._lingering = False
                    young = time.monotonic() - self._taken_at < self._hold_at_most
                    if shared and young and self._backend.held == "s":
                        return True  # the hold goes on: no worker wrote since it was taken
                    self._backend.unlock()
                self._backend.lock(shared=shared)
                self._taken_at = time.monotonic()
            except BaseException:
                self._depth -= 1
                self._local.release()
                raise
        return True

    def release(self) -> None:
        try:
            if self._depth == 1:
                now = time.monotonic()
                young = now - self._taken_at < self._hold_at_most
                if self._linger > 0 and young and self._backend.held == "s":
                    self._lingering, self._released_at = True, now
                    self._free_later()
                else:
                    self._backend.unlock()
        finally:
            self._depth -= 1
            self._local.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def reading(self) -> ReadLock:
        """This lock for a call that only reads (see the module)."""
        return ReadLock(self)

    def close(self) -> None:
        """Stop the background thread that frees idle holds (the memory is closing; its
        close takes this lock exclusively, which frees a lingering hold first)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        thread = self._releaser
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    # ------------------------------------------------------------------ the releaser
    def _free_later(self) -> None:
        """Wake the releaser (started with the first lingering hold)."""
        with self._wake:
            if self._stopping:
                return
            if self._releaser is None:
                thread = threading.Thread(target=self._release_idle, name="ucma-read-hold", daemon=True)
                self._releaser = thread
                thread.start()
            else:
                self._wake.notify()

    def _release_idle(self) -> None:
        """Free each lingering hold :data:`LINGER` seconds after its last call, unless a call
        continued it, until :meth:`close`."""
        while True:
            with self._wake:
                while not (self._lingering or self._stopping):
                    self._wake.wait()
                if self._stopping:
                    return
                left = self._released_at + self._linger - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue  # look again: a call may have continued the hold
            if not self._local.acquire(timeout=0.05):  # a call runs (it continues or frees the hold)
                continue
            try:
                if self._depth or not self._lingering or self._released_at + self._linger > time.monotonic():
                    continue
                self._lingering = False
                try:
                    self._backend.unlock()
                except StorageError as e:  # the session ends with its locks; say why
                    logger.warning("freeing a shared memory's read hold failed: %s", e)
            finally:
                self._local.release()


class ReadLock:
    """A context manager taking a :class:`SharedLock` for reading."""

    def __init__(self, lock: SharedLock) -> None:
        self._lock = lock

    def __enter__(self) -> bool:
        return self._lock.acquire(shared=True)

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
