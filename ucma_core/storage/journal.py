"""Graph persistence without pickle: a JSON-lines snapshot plus an append-only JSON-lines journal.

A write costs one appended line (O(1)), never a re-dump of the graph. Every
``snapshot_every`` entries the whole state is written to a new snapshot, which
replaces the old one atomically; entries already folded into it are skipped on
replay by their sequence number, so a crash at any point between the two steps
loses nothing. A line torn by a crash mid-write is cut off when the folder is
next opened.

The snapshot is written and read one line at a time (a header with the sequence
number, one line per node and per edge, and a trailer with the count), so neither
saving nor opening a large graph holds a second copy of it as text. Snapshots
written as one JSON document by earlier versions are still read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ucma_core.errors import CorruptStoreError, StorageError
from ucma_core.storage.atomic import write_lines_atomic

__all__ = ["Entry", "Journal", "Op"]

#: One journal entry: a dict with at least ``"op"``; ``"seq"`` is added on append.
Op = dict[str, Any]
#: One snapshot entry: ``["n", node_id, attrs]`` or ``["e", u, v, {edge_type: weight}]``.
Entry = list[Any]

_FORMAT = "ucma-graph-snapshot"

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

    def load(self) -> tuple[Iterator[Entry] | None, list[Op]]:
        """Return the last snapshot's entries (read lazily, ``None`` if there is no snapshot)
        and the journal entries written after it.

        Must be called once, before :meth:`append`; consume the snapshot before appending.
        """
        snapshot: Iterator[Entry] | None = None
        if self._snapshot_path.exists():
            self._seq, snapshot = self._open_snapshot()
        ops = self._read_journal(self._seq)
        if ops:
            self._seq = max(self._seq, int(ops[-1]["seq"]))
        self._since_snapshot = len(ops)
        try:
            self._handle = open(self._journal_path, "ab")  # noqa: SIM115 - kept open while the memory is
        except OSError as e:
            raise StorageError(f"cannot open {self._journal_path}: {e}") from e
        return snapshot, ops

    def _corrupt(self, why: str) -> CorruptStoreError:
        return CorruptStoreError(f"{self._snapshot_path} {why}; restore the folder from a backup")

    def _open_snapshot(self) -> tuple[int, Iterator[Entry]]:
        try:
            fh = open(self._snapshot_path, "rb")  # noqa: SIM115 - closed by the entry iterator
        except OSError as e:
            raise StorageError(f"cannot read {self._snapshot_path}: {e}") from e
        try:
            head = _json_line(fh.readline())
            if isinstance(head, dict) and "nodes" in head:  # one JSON document (earlier versions)
                fh.close()
                return self._seq_in(head), _document_entries(head)
            if not isinstance(head, dict) or head.get("format") != _FORMAT:
                raise self._corrupt("is not a UCMA graph snapshot")
            return self._seq_in(head), self._entries(fh)
        except BaseException:
            fh.close()
            raise

    def _seq_in(self, head: dict[str, Any]) -> int:
        try:
            return int(head["seq"])
        except (KeyError, TypeError, ValueError):
            raise self._corrupt("has no sequence number") from None

    def _entries(self, fh: IO[bytes]) -> Iterator[Entry]:
        count = 0
        with fh:
            for line in fh:
                item = _json_line(line)
                if isinstance(item, dict) and "end" in item:
                    if item.get("entries") != count or fh.read(1):
                        raise self._corrupt("does not match its trailer")
                    return
                if not isinstance(item, list) or not item:
                    raise self._corrupt(f"has a malformed entry after {count} entries")
                count += 1
                yield item
        raise self._corrupt(f"ends after {count} entries, before its trailer")

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

    def write_snapshot(self, entries: Iterable[Entry]) -> None:
        """Replace the snapshot with ``entries`` (written as they come) and empty the journal."""
        if self._handle is None:
            raise StorageError("journal is not open")

        def lines() -> Iterator[str]:
            yield _dumps({"format": _FORMAT, "version": 2, "seq": self._seq})
            count = 0
            for entry in entries:
                count += 1
                yield _dumps(entry)
            yield _dumps({"end": True, "entries": count})

        write_lines_atomic(self._snapshot_path, lines())
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


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _json_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise CorruptStoreError(f"graph snapshot line is not valid JSON ({e}); restore from a backup") from e


def _document_entries(doc: dict[str, Any]) -> Iterator[Entry]:
    for node in doc.get("nodes", []):
        yield ["n", *node]
    for edge in doc.get("edges", []):
        yield ["e", *edge]


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
