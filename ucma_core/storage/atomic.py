"""Write a file so that readers see either the old or the new content, never half."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ucma_core.errors import CorruptStoreError, StorageError

__all__ = ["read_json", "write_json_atomic", "write_lines_atomic"]


def _fsync_dir(folder: Path) -> None:
    if os.name == "nt":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` via a temporary file, fsync and rename."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as e:
        raise StorageError(f"cannot write {path}: {e}") from e


def write_lines_atomic(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` (each without its newline) to ``path`` via a temporary file, fsync
    and rename. The lines are written as they come, so the whole text is never in memory."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line)
                fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as e:
        raise StorageError(f"cannot write {path}: {e}") from e


def read_json(path: Path) -> Any:
    """Read a JSON file written by :func:`write_json_atomic`."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise CorruptStoreError(f"{path} is not valid JSON ({e}); restore it from a backup") from e
    except OSError as e:
        raise StorageError(f"cannot read {path}: {e}") from e
