"""Graph persistence without pickle: a JSON snapshot plus an append-only JSON-lines journal.

A write costs one appended line (O(1)), never a re-dump of the graph. Every
``snapshot_every`` entries the whole state is written to a new snapshot, which
replaces the old one atomically; entries already folded into it are skipped on
replay by their sequence number, so a crash at any point between the two steps
loses nothing. A line torn by a crash mid-write is cut off when the folder is
next opened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ucma_core.errors import CorruptStoreError, StorageError
from ucma_core.storage.atomic import read_json, write_json_atomic

__all__ = ["Journal", "Op"]

#: One journal entry: a dict with at least ``"op"``; ``"seq"`` is added on append.
Op = dict[str, Any]

_SNAPSHOT = "graph.snapshot.json"
_JOURNAL = "graph.journal.jsonl"


class Journal:
    """Append-only operation log with snapshots for one memory folder."""

    def __init__(self, folder: Path, *, fsync: bool = False) -> None:
        self._snapshot_path = folder / _SNAPSHOT
        self._journal_path = folder / _JOURNAL
        self._fsync = fsync
        self._seq = 0
        self._since_snapshot = 0
        self._handle: IO[bytes] | None = None

    @property
    def entries_since_snapshot(self) -> int:
        return self._since_snapshot

    def load(self) -> tuple[dict[str, Any] | None, list[Op]]:
        """Return the last snapshot (or ``None``) and the journal entries written after it.

        Must be called once, before :meth:`append`.
        """
        snapshot: dict[str, Any] | None = None
        if self._snapshot_path.exists():
            loaded = read_json(self._snapshot_path)
            if not isinstance(loaded, dict) or "seq" not in loaded:
                raise CorruptStoreError(f"{self._snapshot_path} is not a UCMA graph snapshot")
            snapshot = loaded
            self._seq = int(loaded["seq"])
        ops = self._read_journal(self._seq)
        if ops:
            self._seq = max(self._seq, int(ops[-1]["seq"]))
        self._since_snapshot = len(ops)
        try:
            self._handle = open(self._journal_path, "ab")  # noqa: SIM115 - kept open while the memory is
        except OSError as e:
            raise StorageError(f"cannot open {self._journal_path}: {e}") from e
        return snapshot, ops

    def _read_journal(self, after_seq: int) -> list[Op]:
        if not self._journal_path.exists():
            return []
        ops: list[Op] = []
        good_end = 0
        try:
            with open(self._journal_path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise StorageError(f"cannot read {self._journal_path}: {e}") from e
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", pos)
            if end == -1:
                break  # torn final line: never acknowledged
            line = data[pos:end]
            op = _parse(line)
            if op is None:
                if data.find(b"\n", end + 1) == -1:
                    break  # a garbled last line is a torn write too
                raise CorruptStoreError(
                    f"{self._journal_path} has an unreadable entry at byte {pos}; "
                    "restore the folder from a backup"
                )
            pos = end + 1
            good_end = pos
            if op["seq"] > after_seq:
                ops.append(op)
        if good_end < len(data):
            try:
                with open(self._journal_path, "r+b") as fh:
                    fh.truncate(good_end)
            except OSError as e:
                raise StorageError(f"cannot repair {self._journal_path}: {e}") from e
        return ops

    def append(self, ops: Iterable[Op]) -> None:
        """Append ``ops`` with one write; they are on disk (page cache) when this returns."""
        if self._handle is None:
            raise StorageError("journal is not open")
        lines = []
        for op in ops:
            self._seq += 1
            op["seq"] = self._seq
            lines.append(json.dumps(op, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
        if not lines:
            return
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            self._handle.write(payload)
            self._handle.flush()
            if self._fsync:
                os.fsync(self._handle.fileno())
        except OSError as e:
            raise StorageError(f"cannot append to {self._journal_path}: {e}") from e
        self._since_snapshot += len(lines)

    def write_snapshot(self, state: dict[str, Any]) -> None:
        """Replace the snapshot with ``state`` and empty the journal."""
        if self._handle is None:
            raise StorageError("journal is not open")
        write_json_atomic(self._snapshot_path, {**state, "seq": self._seq})
        try:
            self._handle.truncate(0)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as e:
            raise StorageError(f"cannot truncate {self._journal_path}: {e}") from e
        self._since_snapshot = 0

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _parse(line: bytes) -> Op | None:
    """A journal entry, or ``None`` if the line is not one (bad UTF-8, bad JSON, wrong shape)."""
    try:
        op = json.loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return None
    if not isinstance(op, dict) or not isinstance(op.get("op"), str):
        return None
    seq = op.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int):
        return None
    return op
