"""An exclusive, cross-process lock on a memory folder.

The lock file holds the pid of the process that has the folder open. A process also
remembers which folders it holds itself, so the error for a second open tells a
second :class:`~ucma_core.Memory` in the same process (close the first one) from
another process (with its pid).
"""

from __future__ import annotations

import os
import sys
import threading
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


#: Folders (resolved paths) this process holds the lock of.
_HELD: set[str] = set()
_HELD_LOCK = threading.Lock()


def _holder(path: Path) -> int | None:
    """The pid written in the lock file ``path`` (None if it holds none)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _key(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path.absolute())


def locked_message(path: Path) -> str:
    """What :class:`MemoryLockedError` says for the lock file ``path`` that could not be taken."""
    folder = path.parent
    with _HELD_LOCK:
        here = _key(path) in _HELD
    if here:
        return (
            f"memory folder {folder} is already open in this process by another Memory object; close "
            "that one first (memory.close(), or open it with `with Memory(...) as memory:`), or use it "
            "instead of opening the folder twice"
        )
    pid = _holder(path)
    who = "another process" if pid is None or pid == os.getpid() else f"another process (pid {pid})"
    return (
        f"memory folder {folder} is open in {who}; close it there, or pass "
        "MemoryConfig(lock_timeout=...) to wait"
    )


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
                raise MemoryLockedError(locked_message(self._path))
            time.sleep(self._poll)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()).encode())
            handle.flush()
        except OSError as e:
            _unlock(handle)
            handle.close()
            raise StorageError(f"cannot write lock file {self._path}: {e}") from e
        with _HELD_LOCK:
            _HELD.add(_key(self._path))
        self._handle = handle

    def release(self) -> None:
        if self._handle is None:
            return
        try:
            with _HELD_LOCK:
                _HELD.discard(_key(self._path))
            _unlock(self._handle)
        finally:
            self._handle.close()
            self._handle = None
