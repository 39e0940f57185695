"""Clearing the bytes Chroma's vector index writes from uninitialised memory.

Chroma's HNSW index files (``data_level0.bin``, ``length.bin``, ``link_lists.bin`` in
each vector segment's directory) are written from buffers that are never zeroed:
the unused neighbour slots of every node, and the slots past the last node, hold
whatever the process's memory held before — which can be the text or vectors of a
user this process just forgot. Chroma writes them so each time a client builds an index
it has not saved yet (see :meth:`~ucma_core.storage.vectors.VectorStore.save_index`).
:func:`sanitize` overwrites exactly those bytes with zeros. It leaves every byte the
index reads (node counts, links, vectors, labels, norms) as it is, and changes nothing
it cannot parse (another Chroma version's layout, or files that disagree with their
header — a damaged index, which opening the folder sets aside), reporting that instead.

No file is read whole: the files are mapped and walked a chunk of elements at a
time, and each zeroed range is written in place (only bytes no reader uses change,
so a crash half way leaves a valid index).

Run it only while no Chroma client has the folder open.

:func:`index_saved` tells whether a collection's index on disk already holds every change
Chroma logged for it (then a new client loads it rather than building it again).
"""

from __future__ import annotations

import mmap
import shutil
import sqlite3
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ucma_core.storage.heal import HEADER, Header

__all__ = ["index_saved", "room_to_save", "sanitize"]

_ROWS = 4096  # elements of data_level0.bin handled at a time


@contextmanager
def _mapped(path: Path) -> Iterator[mmap.mmap | None]:
    """``path`` mapped for writing (None for an empty file)."""
    with open(path, "r+b") as fh:
        if fh.seek(0, 2) == 0:
            yield None
            return
        mapped = mmap.mmap(fh.fileno(), 0)
        try:
            yield mapped
        finally:
            mapped.flush()
            mapped.close()


def _zero(buf: mmap.mmap, start: int, end: int) -> None:
    """Write zeros over ``buf[start:end]`` where it is not zero already, a megabyte at a time."""
    step = 1 << 20
    for pos in range(start, end, step):
        stop = min(end, pos + step)
        if buf[pos:stop].count(0) != stop - pos:
            buf[pos:stop] = bytes(stop - pos)


def _level0_ok(data: mmap.mmap, h: Header, elements: int) -> bool:
    for first in range(0, min(elements, h.count), _ROWS):
        n = min(_ROWS, h.count - first)
        rows = np.frombuffer(data, dtype=np.uint8, count=n * h.size, offset=first * h.size).reshape(n, h.size)
        counts = rows[:, 0].astype(np.int64) | (rows[:, 1].astype(np.int64) << 8)
        if int(counts.max()) > h.max_m0:
            return False
    return True


def _clear_level0(data: mmap.mmap, h: Header, elements: int) -> None:
    slots = np.arange(h.max_m0)
    for first in range(0, min(elements, h.count), _ROWS):
        n = min(_ROWS, h.count - first)
        rows = np.frombuffer(data, dtype=np.uint8, count=n * h.size, offset=first * h.size).reshape(n, h.size)
        counts = rows[:, 0].astype(np.int64) | (rows[:, 1].astype(np.int64) << 8)
        links = rows[:, 4 : h.data_at].view("<u4")
        unused = slots[None, :] >= counts[:, None]
        if rows[:, 3].any() or links[unused].any():
            block = rows.copy()
            block[:, 3] = 0
            block[:, 4 : h.data_at].view("<u4")[unused] = 0
            data[first * h.size : (first + n) * h.size] = block.tobytes()
    _zero(data, h.count * h.size, elements * h.size)


def _link_entries(links: mmap.mmap, block: int) -> list[tuple[int, int]] | None:
    """``(start, levels)`` of every upper-level link list, or None if the file does not parse."""
    entries: list[tuple[int, int]] = []
    pos = 0
    while pos < len(links):
        if pos + 4 > len(links):
            return None
        (length,) = struct.unpack_from("<I", links, pos)
        pos += 4
        if length % block or pos + length > len(links):
            return None
        entries.append((pos, length // block))
        pos += length
    return entries


def _clear_links(links: mmap.mmap, entries: list[tuple[int, int]], max_m: int) -> bool:
    block = 4 + 4 * max_m
    for start, levels in entries:
        for level in range(levels):
            base = start + level * block
            count = links[base] | (links[base + 1] << 8)
            if count > max_m:
                return False
    for start, levels in entries:
        for level in range(levels):
            base = start + level * block
            count = links[base] | (links[base + 1] << 8)
            if links[base + 3]:
                links[base + 3] = 0
            _zero(links, base + 4 + 4 * count, base + block)
    return True


def sanitize(segment: Path) -> bool:
    """Zero the uninitialised bytes of the HNSW files in ``segment``; returns False (and
    changes nothing) when the files are not in the layout this understands."""
    names = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")
    if not all((segment / name).exists() for name in names):
        return True  # nothing persisted yet
    with open(segment / "header.bin", "rb") as fh:
        header = Header.parse(fh.read(HEADER.size + 1))
    if isinstance(header, str):
        return False
    data_size = (segment / "data_level0.bin").stat().st_size
    norm_size = (segment / "length.bin").stat().st_size
    if data_size % header.size or data_size // header.size < header.count or norm_size % 4:
        return False
    if data_size > header.capacity * header.size or norm_size > 4 * max(header.capacity, header.count):
        return False  # larger than the index can be: damaged, not ours to rewrite
    links_size = (segment / "link_lists.bin").stat().st_size
    if links_size > header.count * (4 + 64 * (4 + 4 * header.max_m)):
        return False
    elements = data_size // header.size
    with (
        _mapped(segment / "data_level0.bin") as data,
        _mapped(segment / "length.bin") as norms,
        _mapped(segment / "link_lists.bin") as links,
    ):
        entries = _link_entries(links, 4 + 4 * header.max_m) if links is not None else []
        if entries is None or (data is not None and not _level0_ok(data, header, elements)):
            return False
        if links is not None and not _clear_links(links, entries, header.max_m):
            return False
        if data is not None:
            _clear_level0(data, header, elements)
        if norms is not None:
            _zero(norms, 4 * header.count, norm_size)
    return True


def index_saved(chroma: Path, collection_id: str) -> bool:
    """Whether the vector index of collection ``collection_id`` in the embedded Chroma folder
    ``chroma`` is saved with every change logged for it (False when that cannot be read)."""
    try:
        con = sqlite3.connect(
            f"{(chroma / 'chroma.sqlite3').absolute().as_uri()}?mode=ro", uri=True, timeout=30
        )
        try:
            saved = con.execute(
                "SELECT m.seq_id FROM segments s LEFT JOIN max_seq_id m ON m.segment_id = s.id"
                " WHERE s.collection = ? AND s.scope = 'VECTOR'",
                (collection_id,),
            ).fetchall()
            (logged,) = con.execute(
                "SELECT MAX(seq_id) FROM embeddings_queue WHERE topic LIKE ?", (f"%/{collection_id}",)
            ).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return False
    if len(saved) != 1 or not isinstance(saved[0][0], int):
        return False
    return logged is None or (isinstance(logged, int) and saved[0][0] >= logged)


def room_to_save(chroma: Path) -> bool:
    """Whether the disk under the embedded Chroma folder ``chroma`` has room to write its
    vector indexes again: twice what their files take now, and 1 MiB more. (On a disk that
    is nearly full, saving would fill it, and the next open could not apply Chroma's log.)"""
    try:
        taken = sum(
            f.stat().st_size for d in chroma.iterdir() if d.is_dir() for f in d.iterdir() if f.is_file()
        )
        return shutil.disk_usage(chroma).free >= 2 * taken + (1 << 20)
    except OSError:
        return False
