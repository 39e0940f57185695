"""Recognising a damaged vector index of embedded Chroma, setting it aside, and bounding its growth.

Chroma keeps each collection's HNSW vector index in a directory ``chroma/<segment id>/``:

===========================  =====================================================================
``header.bin``               100 bytes: layout version, capacity, element count, element size, ...
``data_level0.bin``          ``count`` elements of ``size`` bytes (links, vector, label)
``length.bin``               one 4-byte length per element: its bytes in ``link_lists.bin``
``link_lists.bin``           the upper-level links, element after element
``index_metadata.pickle``    the id <-> label maps (a pickle, read by Chroma's own parser)
===========================  =====================================================================

A kill during a write can leave these files disagreeing with each other; Chroma then
refuses every call on the collection ("Failed to apply logs to the hnsw segment
writer"), or, given a capacity read from a torn header, grows ``link_lists.bin`` without
bound. The index is derived data (every record's text is in Chroma's database and in
the keyword index), so UCMA rebuilds it: :func:`check_segment` finds files that cannot
be a consistent index *before* Chroma reads them, reading no file whole (only the
header, ``length.bin`` in chunks, and the pickle's opcodes as a stream: no pickle is ever
loaded); :func:`set_aside` moves a damaged directory out of ``chroma/`` (never deletes
it); :class:`SizeGuard` watches the files while Chroma opens them and reports a file
that grows past :func:`byte_bound`.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     segment = Path(tmp) / "3c5f6c36-0d8e-4f47-9e7c-0d4b1c2e9a10"
    ...     segment.mkdir()
    ...     for name in ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin"):
    ...         _ = (segment / name).write_bytes(b"torn")
    ...     check_segment(segment, dimension=8, max_elements=100)
    'header.bin has 4 bytes, not 100'
"""

from __future__ import annotations

import contextlib
import os
import pickletools
import re
import sqlite3
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "HEADER",
    "SizeGuard",
    "byte_bound",
    "check_segment",
    "element_bound",
    "folder_records",
    "is_index_failure",
    "set_aside",
    "vector_segments",
]

#: hnswlib's header as Chroma writes it (100 bytes).
HEADER = struct.Struct("<iQQQQQQiiQQQdQ")
INDEX_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle")
_CHUNK = 1 << 20
_SEGMENT_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: Words in Chroma's errors that name its vector index (a failure of the index, not of the database).
_INDEX_WORDS = ("hnsw", "index_metadata", "pickle", "segment reader", "segment writer", "link_lists")


@dataclass(frozen=True)
class Header:
    """The fields of ``header.bin`` this module checks."""

    capacity: int
    count: int
    size: int
    label_at: int
    data_at: int
    max_level: int
    entry: int
    max_m: int
    max_m0: int

    @classmethod
    def parse(cls, raw: bytes) -> Header | str:
        """The header, or why ``raw`` cannot be one."""
        if len(raw) != HEADER.size:
            return f"header.bin has {len(raw)} bytes, not {HEADER.size}"
        (version, offset0, capacity, count, size, label_at, data_at, level, entry, max_m, max_m0, m, _, _) = (
            HEADER.unpack(raw)
        )
        if version != 1 or offset0 != 0:
            return f"header.bin has an unknown layout (version {version})"
        if not (0 < max_m <= 4096 and 0 < max_m0 <= 8192 and 0 < m <= max_m0):
            return "header.bin holds impossible link counts"
        if data_at != 4 + 4 * max_m0 or label_at + 8 != size or not data_at < label_at:
            return "header.bin holds an impossible element layout"
        if count > capacity or not -1 <= level < 64 or (count and not (level >= 0 and 0 <= entry < count)):
            return f"header.bin holds an impossible element count ({count} of {capacity})"
        return cls(capacity, count, size, label_at, data_at, level, entry, max_m, max_m0)


def element_bound(records: int) -> int:
    """The most elements a sane index of a collection with ``records`` records holds
    (Chroma grows its capacity by a factor of 1.2; deleted elements keep their slots)."""
    return 4 * max(0, records) + 65_536


def byte_bound(records: int, dimension: int) -> int:
    """The most bytes any one index file of a collection with ``records`` records of
    ``dimension`` floats can sanely have (:class:`SizeGuard`'s limit)."""
    per_element = 4 + 4 * 64 + 4 * dimension + 8  # level-0 links of a generous M, vector, label
    upper = 16 * (4 + 4 * 64)  # upper-level links (a node has ~1/M of a level above)
    return element_bound(records) * (per_element + upper + 64) + (64 << 20)


def _read_at_most(path: Path, limit: int) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(limit)


def _level0_problem(path: Path, header: Header) -> str | None:
    """Why the level-0 link lists in ``data_level0.bin`` are impossible (a count above
    ``max_m0``, a link to no element), read a chunk of elements at a time."""
    per_chunk = max(1, _CHUNK // header.size)
    with open(path, "rb") as fh:
        for first in range(0, header.count, per_chunk):
            n = min(per_chunk, header.count - first)
            raw = fh.read(n * header.size)
            if len(raw) < n * header.size:
                return f"data_level0.bin ends inside element {first + len(raw) // header.size:,}"
            rows = np.frombuffer(raw, dtype=np.uint8).reshape(n, header.size)
            counts = rows[:, 0].astype(np.int64) | (rows[:, 1].astype(np.int64) << 8)
            if int(counts.max()) > header.max_m0:
                return f"data_level0.bin holds a link count above {header.max_m0} near element {first:,}"
            links = rows[:, 4 : header.data_at].copy().view("<u4")
            used = np.arange(header.max_m0)[None, :] < counts[:, None]
            if used.any() and int(links[used].max()) >= header.count:
                return f"data_level0.bin links to an element past the {header.count:,} it holds"
    return None


def _links_problem(path: Path, header: Header) -> str | None:
    """Why ``link_lists.bin`` is not one upper-level link list per element (a 4-byte length,
    then that many bytes of whole levels), read entry by entry through a buffer."""
    block = 4 + 4 * header.max_m
    size = path.stat().st_size
    pos = 0
    with open(path, "rb", buffering=_CHUNK) as fh:
        for n in range(header.count):
            raw = fh.read(4)
            if len(raw) < 4:
                return f"link_lists.bin ends after {n:,} of {header.count:,} elements"
            (length,) = struct.unpack("<I", raw)
            if length % block or length > block * 64 or pos + 4 + length > size:
                return f"link_lists.bin gives element {n:,} an impossible link-list length ({length:,})"
            fh.seek(length, os.SEEK_CUR)
            pos += 4 + length
    if pos != size:
        return f"link_lists.bin has {size - pos:,} bytes after its {header.count:,} elements"
    return None


def _pickle_problem(path: Path, limit: int) -> str | None:
    """Why ``index_metadata.pickle`` cannot be read by Chroma, found by walking its opcodes
    (a stream parse that builds no object: nothing in it is run or loaded)."""
    size = path.stat().st_size
    if size > limit:
        return f"index_metadata.pickle has {size:,} bytes (at most {limit:,} expected)"
    stopped = False
    try:
        with open(path, "rb") as fh:
            for op, _arg, _pos in pickletools.genops(fh):
                stopped = op.name == "STOP"
            rest = fh.read(1)
    except (ValueError, EOFError, UnicodeDecodeError, struct.error) as e:
        return f"index_metadata.pickle is damaged ({str(e)[:80]})"
    if not stopped:
        return "index_metadata.pickle is cut short"
    if rest:
        return "index_metadata.pickle has bytes after its end"
    return None


def check_segment(segment: Path, *, dimension: int | None, max_elements: int) -> str | None:
    """Why the HNSW files in ``segment`` cannot be a consistent index (None: they can, or
    nothing was persisted yet). Reads the header, ``length.bin`` in chunks and the
    pickle's opcodes; never a whole file into memory. ``max_elements`` bounds the
    capacity (see :func:`element_bound`); ``dimension`` is the collection's, if known."""
    present = {name: (segment / name).exists() for name in INDEX_FILES}
    if not any(present.values()):
        return None
    missing = [name for name, there in present.items() if not there and name != "index_metadata.pickle"]
    if missing:
        return f"{', '.join(missing)} missing"
    try:
        header = Header.parse(_read_at_most(segment / "header.bin", HEADER.size + 1))
        if isinstance(header, str):
            return header
        if not present["index_metadata.pickle"]:
            # an index Chroma created but never filled has no id map yet
            return None if header.count == 0 else "index_metadata.pickle missing"
        if header.capacity > max_elements:
            return (
                f"header.bin claims room for {header.capacity:,} elements (at most {max_elements:,} expected)"
            )
        if dimension is not None and header.label_at - header.data_at != 4 * dimension:
            floats = (header.label_at - header.data_at) // 4
            return f"header.bin describes vectors of {floats} floats, not {dimension}"
        data = (segment / "data_level0.bin").stat().st_size
        if data < header.count * header.size or data % header.size or data > header.capacity * header.size:
            return f"data_level0.bin has {data:,} bytes for {header.count:,} elements of {header.size} bytes"
        problem = _level0_problem(segment / "data_level0.bin", header)
        if problem:
            return problem
        norms = (segment / "length.bin").stat().st_size
        if norms < 4 * header.count or norms > 4 * max(header.capacity, 1):
            return f"length.bin has {norms:,} bytes for {header.count:,} elements"
        problem = _links_problem(segment / "link_lists.bin", header)
        if problem:
            return problem
        return _pickle_problem(segment / "index_metadata.pickle", 512 * max(header.capacity, 1) + _CHUNK)
    except OSError as e:
        return f"cannot be read ({e})"


def vector_segments(chroma_dir: Path) -> list[Path]:
    """The vector-index directories Chroma's database names (read-only; [] if it cannot be read)."""
    db = chroma_dir / "chroma.sqlite3"
    if not db.exists():
        return []
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            ids = [str(r[0]) for r in con.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")]
        finally:
            con.close()
    except sqlite3.Error:
        return []
    return [chroma_dir / i for i in ids if _SEGMENT_DIR.match(i) and (chroma_dir / i).is_dir()]


def _count(db: Path, tables: tuple[str, ...]) -> int:
    """Rows in ``tables`` of ``db``, read without creating any file (a WAL database read
    "immutable" skips its log: a count for a bound, not an exact one)."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True, timeout=30)
        try:
            return sum(int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in tables)
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def folder_records(folder: Path) -> int:
    """The most records the folder's files hold: Chroma's records plus its log entries, or
    the keyword index's rows (read-only; 0 where a file cannot be read)."""
    return max(
        _count(folder / "chroma" / "chroma.sqlite3", ("embeddings", "embeddings_queue")),
        _count(folder / "keywords.sqlite3", ("rowids",)),
    )


def set_aside(folder: Path, segment: Path) -> Path:
    """Move the vector-index directory ``segment`` to ``<folder>/chroma.damaged-index-N/``
    (kept for inspection; a scrub deletes it, as it may hold vectors of forgotten users)."""
    n = 1
    while (aside := folder / f"chroma.damaged-index-{n}").exists():
        n += 1
    aside.mkdir()
    target = aside / segment.name
    os.replace(segment, target)
    return target


def is_index_failure(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is Chroma failing on its vector index."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).lower()
        if any(word in text for word in _INDEX_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False


class SizeGuard:
    """Watches the files under ``root`` from a thread while Chroma works on them, and calls
    ``on_trip(path, size)`` once when one of them grows past ``limit`` bytes (apparent size).

    Use it as a context manager around calls that let Chroma write its vector index::

        with SizeGuard(folder / "chroma", limit, on_trip=abandon):
            ...

    Attributes:
        tripped: the file that grew too large and its size, once one did.
        largest: the largest apparent size seen (for reports).
    """

    def __init__(
        self,
        root: Path,
        limit: int,
        *,
        on_trip: Callable[[Path, int], None] | None = None,
        interval: float = 0.05,
    ) -> None:
        self.root = root
        self.limit = limit
        self.tripped: tuple[Path, int] | None = None
        self.largest = 0
        self._on_trip = on_trip
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ucma-size-guard", daemon=True)

    def check(self) -> tuple[Path, int] | None:
        """Look at the files once; the first one past the limit, if any."""
        with contextlib.suppress(OSError):
            for segment in self.root.iterdir() if self.root.is_dir() else ():
                if not segment.is_dir():
                    continue
                for path in segment.iterdir():
                    with contextlib.suppress(OSError):
                        size = path.stat().st_size
                        self.largest = max(self.largest, size)
                        if size > self.limit:
                            return path, size
        return None

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            found = self.check()
            if found is not None:
                self.tripped = found
                if self._on_trip is not None:
                    self._on_trip(*found)
                return

    def __enter__(self) -> SizeGuard:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.tripped is None:
            self.tripped = self.check()
