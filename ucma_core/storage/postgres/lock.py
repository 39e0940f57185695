"""The lock around every call of a shared memory: this process's threads, then the
memory's PostgreSQL write lock (and a sync with what other workers wrote).

:class:`SharedLock` is what :class:`~ucma_core.Memory` holds where a folder memory
holds a ``threading.RLock``: reentrant, a context manager. The outermost acquire in
this process takes the advisory lock through :meth:`PgBackend.lock
<ucma_core.storage.postgres.backend.PgBackend.lock>`; the matching release frees it.
:meth:`SharedLock.reading` is the same lock for a call that only reads: the outermost
acquire takes the advisory lock shared, so readers of every worker run side by side.
"""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["ReadLock", "SharedLock"]


class _Lockable(Protocol):
    def lock(self, *, sync: bool = True, shared: bool = False) -> None: ...

    def unlock(self) -> None: ...


class SharedLock:
    """Reentrant lock: a thread lock plus the memory's write lock while held (see the module)."""

    def __init__(self, backend: _Lockable) -> None:
        self._local = threading.RLock()
        self._depth = 0
        self._backend = backend

    def acquire(self, blocking: bool = True, timeout: float = -1, *, shared: bool = False) -> bool:
        """Take the lock (``shared``: for reading only, when this is the outermost acquire)."""
        if not self._local.acquire(blocking, timeout):
            return False
        self._depth += 1
        if self._depth == 1:
            try:
                self._backend.lock(shared=shared)
            except BaseException:
                self._depth -= 1
                self._local.release()
                raise
        return True

    def release(self) -> None:
        try:
            if self._depth == 1:
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


class ReadLock:
    """A context manager taking a :class:`SharedLock` for reading."""

    def __init__(self, lock: SharedLock) -> None:
        self._lock = lock

    def __enter__(self) -> bool:
        return self._lock.acquire(shared=True)

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
