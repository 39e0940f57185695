"""Turning operating-system failures into clear storage errors, and the free-space guard.

A full disk is the failure people meet most: every write path reports it as
:class:`~ucma_core.errors.DiskFullError` (a :class:`~ucma_core.errors.StorageError`)
whose message says so, and writes are refused before they start when the volume
is nearly full, because Chroma misbehaves when space runs out mid-write.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from ucma_core.errors import DiskFullError, StorageError

__all__ = ["DISK_FULL_ERRNOS", "check_free_space", "looks_disk_full", "nearly_full", "storage_error"]

#: ``errno`` values that mean "no space left" (including quota and file-size limits).
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})

_FULL_WORDS = ("no space left", "disk is full", "database or disk is full", "disk full", "quota exceeded")


def looks_disk_full(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) reports that the disk is full."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            return True
        if any(word in str(current).lower() for word in _FULL_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False


#: Below this many free bytes a failure that does not say why is taken for a full disk.
NEARLY_FULL = 4 * 1024 * 1024


def nearly_full(folder: Path | None) -> bool:
    """Whether the volume holding ``folder`` has almost no space left."""
    if folder is None:
        return False
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL
    except OSError:
        return False


def storage_error(error: BaseException, what: str, *, folder: Path | None = None) -> StorageError:
    """A :class:`StorageError` for ``error`` raised while doing ``what``: a
    :class:`DiskFullError` that says "disk full" when that is the cause (or, for errors
    that do not say why — Chroma's often do not —, when ``folder``'s volume is nearly full)."""
    if looks_disk_full(error) or nearly_full(folder):
        return DiskFullError(
            f"disk full: {what} failed ({error}); nothing was stored by this call. Free some space "
            "and retry (no restart needed)"
        )
    return StorageError(f"{what} failed: {error}")


def check_free_space(folder: Path, min_free: int, *, need: int = 0) -> None:
    """Raise :class:`DiskFullError` unless ``folder``'s volume has ``min_free + need`` bytes free."""
    if min_free <= 0 and need <= 0:
        return
    try:
        free = shutil.disk_usage(folder).free
    except OSError:  # cannot tell (e.g. the folder vanished): let the write itself report it
        return
    if free < min_free + need:
        raise DiskFullError(
            f"disk full: only {free:,} bytes are free on the volume holding {folder}, and UCMA "
            f"keeps at least {min_free:,} free (MemoryConfig.limits.min_free_bytes); nothing was "
            "stored. Free some space and retry (no restart needed)"
        )
