"""Graph persistence without pickle: a JSON-lines snapshot plus an append-only JSON-lines journal,
with write intents and commit marks so that every operation is all or nothing.

A write costs a couple of appended lines (O(1)), never a re-dump of the graph:

* ``{"op": "b", ...}`` — *begin*: the intent of a transaction, written (and fsynced
  with ``fsync=True``) **before** Chroma is touched: the ids it will add, the rows it
  will replace (with their old text, fields and vector) and the ids it will delete;
  ``"i"`` lines add to the intent of the same transaction;
* the graph changes (``"n"``, ``"x"``, ``"e"``, ``"ex"``), then ``{"op": "c"}`` —
  *commit*. Changes without their commit mark were never acknowledged and are not
  replayed; the intent of a transaction left open by a crash says what to undo in
  Chroma (added records, replaced rows) or to finish (deletions);
* ``"a"`` — abort (the transaction was rolled back in the process); ``"s"`` — a
  committed deletion whose text still has to be scrubbed from the files; ``"p"`` —
  records the transaction left waiting for their Chroma write (group commit, see
  :mod:`~ucma_core.storage.pending`), with their text, fields and vector, so a crash
  before that write loses nothing (the journal is folded into a snapshot only once
  nothing waits); ``"v"`` —
  the lines after it follow these rules (journals written by earlier versions have
  no marks and every line counts).

Every ``snapshot_every`` entries the whole state is written to a new snapshot. The
previous snapshot and the journal it was followed by are kept as
``graph.snapshot.prev.json`` and ``graph.journal.prev.jsonl``, so a damaged or lost
snapshot is recovered from them without losing anything. Sequence numbers are
consecutive, so a missing part of the journal (or a journal that disappeared) is
noticed on open instead of silently resetting state. A line torn by a crash
mid-write is cut off when the folder is next opened; a failed append (a full
disk) is cut off at once, so the journal never holds half a line.

The snapshot is written and read one line at a time (a header with the sequence
number, one line per node and per edge, and a trailer with the count), so neither
saving nor opening a large graph holds a second copy of it as text. Snapshots
written as one JSON document by earlier versions are still read.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ucma_core.errors import CorruptStoreError, StorageError
from ucma_core.storage.atomic import fsync_dir, write_lines
from ucma_core.storage.diskspace import storage_error

__all__ = ["CONTROL_OPS", "Entry", "Intent", "Journal", "Op", "Replay", "replay"]

#: One journal entry: a dict with at least ``"op"``; ``"seq"`` is added on append.
Op = dict[str, Any]
#: One snapshot entry: ``["n", node_id, attrs]`` or ``["e", u, v, {edge_type: weight}]``.
Entry = list[Any]

#: Journal lines that are not graph changes.
CONTROL_OPS = frozenset({"v", "b", "i", "c", "a", "s", "p"})

_FORMAT = "ucma-graph-snapshot"

SNAPSHOT = "graph.snapshot.json"
JOURNAL = "graph.journal.jsonl"
PREV_SNAPSHOT = "graph.snapshot.prev.json"
PREV_JOURNAL = "graph.journal.prev.jsonl"


@dataclass
class Intent:
    """What an open transaction does to Chroma: ids it adds, rows it replaces (id →
    ``[text, fields, vector]`` before the change), ids it deletes, and whether the
    deleted text must be scrubbed from the files. ``ops`` are the graph changes the
    transaction made before it set out to delete (unless the deletion is scrubbed): a
    deletion a crash interrupted is finished on the next open, and these changes with it
    (e.g. a merged duplicate's use folded into the memory that survives it)."""

    add: list[str] = field(default_factory=list)
    rep: dict[str, list[Any]] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)
    scrub: bool = False
    ops: list[Op] = field(default_factory=list)

    def merge(self, op: Op) -> None:
        self.add.extend(op.get("add", ()))
        self.rep.update({k: v for k, v in op.get("rep", {}).items() if k not in self.rep})
        self.delete.extend(op.get("del", ()))
        self.scrub = self.scrub or bool(op.get("scrub"))
        self.ops.extend(op.get("ops", ()))

    def line(self, kind: str) -> Op:
        op: Op = {"op": kind}
        if self.add:
            op["add"] = self.add
        if self.rep:
            op["rep"] = self.rep
        if self.delete:
            op["del"] = self.delete
        if self.scrub:
            op["scrub"] = True
        if self.ops:
            op["ops"] = self.ops
        return op

    def __bool__(self) -> bool:
        return bool(self.add or self.rep or self.delete)


@dataclass
class Replay:
    """The outcome of reading the journal after a snapshot."""

    #: Committed graph changes, in order.
    ops: list[Op] = field(default_factory=list)
    #: The intent of the transaction a crash left open (``None`` if there is none).
    open_intent: Intent | None = None
    #: Ids earlier transactions set out to delete and never committed.
    aborted_deletes: list[str] = field(default_factory=list)
    #: Whether one of those deletions was to be scrubbed.
    aborted_scrub: bool = False
    #: A committed deletion whose text was not scrubbed yet.
    scrub_pending: bool = False
    #: Records committed to wait for their Chroma write: id -> ``[text, fields, vector]``
    #: (the vector as :func:`~ucma_core.storage.pending.encode_vector` wrote it).
    pending: dict[str, list[Any]] = field(default_factory=dict)
    #: Whether the journal has commit marks (written by this version).
    marked: bool = False
    #: The sequence number of the last entry read.
    last_seq: int = 0


def replay(lines: Iterable[Op]) -> Replay:
    """Sort journal entries into committed graph changes and what a crash left open."""
    out = Replay()
    intent: Intent | None = None
    buffered: list[Op] = []

    def close_open() -> None:
        nonlocal intent
        if intent is not None:
            out.aborted_deletes.extend(intent.delete)
            out.aborted_scrub = out.aborted_scrub or (intent.scrub and bool(intent.delete))
        intent = None

    for op in lines:
        out.last_seq = int(op["seq"])
        kind = op["op"]
        if kind == "v":
            out.marked = True
            close_open()
            buffered = []
        elif not out.marked and kind not in CONTROL_OPS:
            out.ops.append(op)  # a journal of an earlier version: every line counts
        elif kind in ("b", "i"):
            out.marked = True
            if kind == "b" or intent is None:
                close_open()
                buffered = []
                intent = Intent()
            intent.merge(op)
        elif kind == "c":
            out.marked = True
            for entry in buffered:
                if entry["op"] == "s":
                    out.scrub_pending = True
                elif entry["op"] == "p":
                    out.pending.update(entry.get("rows") or {})
                else:
                    out.ops.append(entry)
            buffered = []
            intent = None
        elif kind == "a":
            out.marked = True
            close_open()
            buffered = []
        else:
            buffered.append(op)
    out.open_intent = intent
    return out


@dataclass
class Loaded:
    """What :meth:`Journal.load` found."""

    replay: Replay
    #: Loss the sequence numbers prove (a missing journal, a gap, a lost snapshot).
    problems: list[str] = field(default_factory=list)
    #: Recoveries made without loss (e.g. the previous snapshot used).
    notes: list[str] = field(default_factory=list)


class Journal:
    """Append-only operation log with snapshots for one memory folder."""

    def __init__(self, folder: Path, *, fsync: bool = False) -> None:
        self.folder = folder
        self._snapshot_path = folder / SNAPSHOT
        self._journal_path = folder / JOURNAL
        self._prev_snapshot = folder / PREV_SNAPSHOT
        self._prev_journal = folder / PREV_JOURNAL
        self._fsync = fsync
        self._seq = 0
        self._since_snapshot = 0
        self._fd: int | None = None
        self._size = 0
        #: Whether the file has a "v" line (written before the first entry that needs one).
        self._marked = False
        #: Extra fields written into every snapshot header (the folder's manifest).
        self.header: dict[str, Any] = {}

    @property
    def entries_since_snapshot(self) -> int:
        return self._since_snapshot

    @property
    def seq(self) -> int:
        return self._seq

    def has_files(self) -> bool:
        """Whether any snapshot or journal file exists."""
        return any(
            p.exists()
            for p in (self._snapshot_path, self._journal_path, self._prev_snapshot, self._prev_journal)
        )

    # ------------------------------------------------------------------ loading
    def load(
        self,
        apply: Callable[[Iterator[Entry] | None, list[Op]], None],
        reset: Callable[[], None],
        *,
        tolerate_damage: bool = False,
    ) -> Loaded:
        """Read the latest usable snapshot and the journal after it into ``apply(entries, ops)``.

        ``apply`` gets the snapshot's entries (lazily; ``None`` without a snapshot) and the
        committed graph changes after it. When the snapshot turns out to be damaged,
        ``reset()`` is called and the previous snapshot is tried, followed by the
        journal it was kept with. With ``tolerate_damage`` (a repair), when no snapshot can be
        read the journal alone is replayed and the loss is reported in ``problems``.
        Must be called once, before :meth:`open_for_append`; changes nothing but a torn
        last line.
        """
        current = self._read_journal(self._journal_path, repair=True)
        previous = self._read_journal(self._prev_journal, repair=False) if self._prev_journal.exists() else []
        journal_missing = not self._journal_path.exists()
        attempts: list[tuple[str, Path | None]] = []
        if self._snapshot_path.exists():
            attempts.append(("current", self._snapshot_path))
        if self._prev_snapshot.exists():
            attempts.append(("previous", self._prev_snapshot))
        if not attempts or tolerate_damage:
            attempts.append(("none", None))
        failure: CorruptStoreError | None = None
        for n, (which, path) in enumerate(attempts):
            try:
                base, entries = self._open_snapshot(path) if path is not None else (0, None)
                chain, gap = _chain(previous, current, base)
                result = replay(chain)
                loaded = Loaded(result)
                if gap is not None:
                    loaded.problems.append(gap)
                if journal_missing and (
                    self._snapshot_path.exists()
                    or self._prev_snapshot.exists()
                    or self._prev_journal.exists()
                ):
                    loaded.problems.append(
                        f"{self._journal_path.name} is missing: the changes written after the last "
                        "snapshot are lost"
                    )
                if failure is not None and path is None:
                    loaded.problems.append(f"no graph snapshot can be read ({failure})")
                apply(entries, result.ops)
            except CorruptStoreError as e:
                failure = failure or e
                reset()
                if n + 1 < len(attempts):
                    continue
                raise failure from None
            if which == "previous":
                why = "is damaged" if self._snapshot_path.exists() else "is missing"
                loaded.notes.append(
                    f"{self._snapshot_path.name} {why}; loaded {self._prev_snapshot.name} and the "
                    f"journal kept with it instead (nothing lost)"
                )
            self._seq = max(base, result.last_seq)
            self._marked = result.marked and bool(current)
            self._since_snapshot = sum(1 for op in chain if op["op"] not in CONTROL_OPS)
            break
        return loaded

    def open_for_append(self) -> None:
        """Open (creating) the journal file for :meth:`append`; after :meth:`load`."""
        if self._fd is not None:
            return
        try:
            self._fd = os.open(self._journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        except OSError as e:
            raise storage_error(e, f"opening {self._journal_path}") from e

    def _corrupt(self, path: Path, why: str) -> CorruptStoreError:
        return CorruptStoreError(f"{path} {why}; restore the folder from a backup")

    def _open_snapshot(self, path: Path) -> tuple[int, Iterator[Entry]]:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed by the entry iterator
        except OSError as e:
            raise StorageError(f"cannot read {path}: {e}") from e
        try:
            head = _json_line(fh.readline(), path)
            if isinstance(head, dict) and "nodes" in head:  # one JSON document (earlier versions)
                fh.close()
                return self._seq_in(head, path), _document_entries(head)
            if not isinstance(head, dict) or head.get("format") != _FORMAT:
                raise self._corrupt(path, "is not a UCMA graph snapshot")
            return self._seq_in(head, path), self._entries(fh, path)
        except BaseException:
            fh.close()
            raise

    def _seq_in(self, head: dict[str, Any], path: Path) -> int:
        try:
            return int(head["seq"])
        except (KeyError, TypeError, ValueError):
            raise self._corrupt(path, "has no sequence number") from None

    def _entries(self, fh: IO[bytes], path: Path) -> Iterator[Entry]:
        count = 0
        with fh:
            for line in fh:
                item = _json_line(line, path)
                if isinstance(item, dict) and "end" in item:
                    if item.get("entries") != count or fh.read(1):
                        raise self._corrupt(path, "does not match its trailer")
                    return
                if not isinstance(item, list) or not item:
                    raise self._corrupt(path, f"has a malformed entry after {count} entries")
                count += 1
                yield item
        raise self._corrupt(path, f"ends after {count} entries, before its trailer")

    def _read_journal(self, path: Path, *, repair: bool) -> list[Op]:
        if not path.exists():
            return []
        ops: list[Op] = []
        good_end = 0
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise StorageError(f"cannot read {path}: {e}") from e
        pos = 0
        while pos < len(data):
            end = data.find(b"\n", pos)
            if end == -1:
                break  # torn final line: never acknowledged
            op = _parse(data[pos:end])
            if op is None:
                if data.find(b"\n", end + 1) == -1:
                    break  # a garbled last line is a torn write too
                raise CorruptStoreError(
                    f"{path} has an unreadable entry at byte {pos}; restore the folder from a backup"
                )
            pos = end + 1
            good_end = pos
            ops.append(op)
        if repair and good_end < len(data):
            try:
                with open(path, "r+b") as fh:
                    fh.truncate(good_end)
            except OSError as e:
                raise StorageError(f"cannot repair {path}: {e}") from e
        return ops

    # ------------------------------------------------------------------ writing
    def append(self, ops: Iterable[Op], *, sync: bool | None = None) -> None:
        """Append ``ops`` with one write; they are on disk (page cache, or the platter with
        ``fsync``) when this returns. A failed write is cut off again, so the file never
        ends in half a line; the error is a :class:`StorageError` (``DiskFullError`` when
        the disk is full)."""
        if self._fd is None:
            raise StorageError("journal is not open")
        first = self._seq
        lines = []
        graph_ops = 0
        batch = list(ops)
        if not batch:
            return
        if not self._marked:
            batch.insert(0, {"op": "v"})
        try:
            for op in batch:
                self._seq += 1
                op["seq"] = self._seq
                lines.append(_dumps(op))
                graph_ops += op["op"] not in CONTROL_OPS
        except (TypeError, ValueError) as e:
            self._seq = first
            raise StorageError(f"a journal entry cannot be written as JSON: {e}") from e
        if not lines:
            return
        payload = memoryview(("\n".join(lines) + "\n").encode("utf-8"))
        try:
            while payload:
                written = os.write(self._fd, payload)
                payload = payload[written:]
            if self._fsync if sync is None else sync:
                os.fsync(self._fd)
        except OSError as e:
            self._seq = first
            with contextlib.suppress(OSError):  # cutting a file shorter needs no space
                os.ftruncate(self._fd, self._size)
            raise storage_error(e, f"appending to {self._journal_path}") from e
        self._size += sum(len(line.encode("utf-8")) + 1 for line in lines)
        self._since_snapshot += graph_ops
        self._marked = True

    def write_snapshot(self, entries: Iterable[Entry], *, keep_previous: bool = True) -> None:
        """Replace the snapshot with ``entries`` (written as they come) and empty the journal.

        With ``keep_previous`` the replaced snapshot and the journal that followed it are
        kept (``*.prev.*``); without it they are deleted (used when forgetting a user, whose
        text they may hold).
        """
        if self._fd is None:
            raise StorageError("journal is not open")
        tmp = self._snapshot_path.with_name(self._snapshot_path.name + ".tmp")
        prev_tmp = self._prev_journal.with_name(self._prev_journal.name + ".tmp")

        def lines() -> Iterator[str]:
            yield _dumps({"format": _FORMAT, "version": 2, "seq": self._seq, **self.header})
            count = 0
            for entry in entries:
                count += 1
                yield _dumps(entry)
            yield _dumps({"end": True, "entries": count})

        write_lines(tmp, lines())
        try:
            if keep_previous:
                with open(self._journal_path, "rb") as src, open(prev_tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                    dst.flush()
                    os.fsync(dst.fileno())
                if self._snapshot_path.exists():
                    os.replace(self._snapshot_path, self._prev_snapshot)
                os.replace(prev_tmp, self._prev_journal)
            os.replace(tmp, self._snapshot_path)
            fsync_dir(self.folder)
            if not keep_previous:
                for path in (self._prev_snapshot, self._prev_journal):
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
            self._size = 0
            self._marked = False
        except OSError as e:
            for path in (tmp, prev_tmp):
                with contextlib.suppress(OSError):
                    path.unlink()
            raise storage_error(e, f"replacing {self._snapshot_path}") from e
        self._since_snapshot = 0

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def _chain(previous: list[Op], current: list[Op], base: int) -> tuple[list[Op], str | None]:
    """The entries after ``base`` from the kept journal and the current one, in order, and
    a description of the first gap in their sequence numbers (``None`` if there is none).

    Within one file sequence numbers go up; one that does not is a damaged file."""
    for ops in (previous, current):
        for before, after in itertools.pairwise(ops):
            if int(after["seq"]) <= int(before["seq"]):
                raise CorruptStoreError(
                    f"a graph journal has entry {after['seq']} right after entry {before['seq']}; "
                    "restore the folder from a backup"
                )
    chain: list[Op] = []
    last = base
    gap: str | None = None
    for op in (*previous, *current):
        seq = int(op["seq"])
        if seq <= last:
            continue
        if seq != last + 1 and gap is None:
            gap = (
                f"no graph snapshot was found and the graph journal starts at entry {seq}: the graph "
                "state written before it is lost"
                if last == 0
                else f"the graph journal jumps from entry {last} to entry {seq}: "
                f"{seq - last - 1} change(s) written in between are lost"
            )
        chain.append(op)
        last = seq
    return chain, gap


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _json_line(line: bytes, path: Path) -> Any:
    try:
        return json.loads(line)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise CorruptStoreError(f"{path}: a line is not valid JSON ({e}); restore from a backup") from e
    except RecursionError as e:
        raise CorruptStoreError(f"{path}: a line is nested too deeply") from e


def _document_entries(doc: dict[str, Any]) -> Iterator[Entry]:
    for node in doc.get("nodes", []):
        yield ["n", *node]
    for edge in doc.get("edges", []):
        yield ["e", *edge]


def _parse(line: bytes) -> Op | None:
    """A journal entry, or ``None`` if the line is not one (bad UTF-8, bad JSON, wrong shape)."""
    try:
        op = json.loads(line)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError
        return None
    if not isinstance(op, dict) or not isinstance(op.get("op"), str):
        return None
    seq = op.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int):
        return None
    return op
