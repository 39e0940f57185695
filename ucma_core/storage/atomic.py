"""Write a file so that readers see either the old or the new content, never half."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ucma_core.errors import CorruptStoreError, StorageError
from ucma_core.storage.diskspace import storage_error

__all__ = ["fsync_dir", "read_json", "write_json_atomic", "write_lines", "write_lines_atomic"]


def fsync_dir(folder: Path) -> None:
    """Make renames in ``folder`` durable (a no-op where directories cannot be fsynced)."""
    if os.name == "nt":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file, fsync and rename."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    write_lines_atomic(path, [text], newline=False)


def write_lines(path: Path, lines: Iterable[str], *, newline: bool = True) -> None:
    """Write ``lines`` to ``path`` (replacing it) and fsync it; on failure ``path`` is removed.

    The lines are written as they come, so the whole text is never in memory.
    """
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line)
                if newline:
                    fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as e:
        _discard(path)
        raise storage_error(e, f"writing {path}") from e
    except BaseException:
        _discard(path)
        raise


def write_lines_atomic(path: Path, lines: Iterable[str], *, newline: bool = True) -> None:
    """Write ``lines`` (each without its newline) to ``path`` via a temporary file, fsync
    and rename."""
    tmp = path.with_name(path.name + ".tmp")
    write_lines(tmp, lines, newline=newline)
    try:
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as e:
        _discard(tmp)
        raise storage_error(e, f"replacing {path}") from e


def read_json(path: Path) -> Any:
    """Read a JSON file written by :func:`write_json_atomic`."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise CorruptStoreError(f"{path} is not valid JSON ({e}); restore it from a backup") from e
    except RecursionError as e:
        raise CorruptStoreError(f"{path} is nested too deeply to be a UCMA file") from e
    except OSError as e:
        raise StorageError(f"cannot read {path}: {e}") from e
