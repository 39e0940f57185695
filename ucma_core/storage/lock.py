"""An exclusive, cross-process lock on a memory folder."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import IO

from ucma_core.errors import MemoryLockedError, StorageError

__all__ = ["FolderLock"]

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(handle: IO[bytes]) -> bool:
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(handle: IO[bytes]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(handle: IO[bytes]) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: IO[bytes]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class FolderLock:
    """Holds ``<folder>/LOCK`` exclusively while a :class:`~ucma_core.Memory` is open.

    The OS releases the lock when the process dies, so a crash never leaves a
    folder locked. A second opener waits up to ``timeout`` seconds, then gets
    :class:`MemoryLockedError`.
    """

    def __init__(self, folder: Path, *, timeout: float = 0.0, poll: float = 0.05) -> None:
        self._path = folder / "LOCK"
        self._timeout = timeout
        self._poll = poll
        self._handle: IO[bytes] | None = None

    def acquire(self) -> None:
        try:
            handle = open(self._path, "a+b")  # noqa: SIM115 - held open for the lock's lifetime
        except OSError as e:
            raise StorageError(f"cannot open lock file {self._path}: {e}") from e
        deadline = time.monotonic() + self._timeout
        while not _try_lock(handle):
            if time.monotonic() >= deadline:
                handle.close()
                raise MemoryLockedError(
                    f"memory folder {self._path.parent} is open in another process; "
                    "close it there, or pass MemoryConfig(lock_timeout=...) to wait"
                )
            time.sleep(self._poll)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()).encode())
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            _unlock(self._handle)
        finally:
            self._handle.close()
            self._handle = None
