"""Clearing the bytes Chroma's vector index writes from uninitialised memory.

Chroma's HNSW index files (``data_level0.bin``, ``length.bin``, ``link_lists.bin`` in
each vector segment's directory) are written from buffers that are never zeroed:
the unused neighbour slots of every node, and the slots past the last node, hold
whatever the process's memory held before — which can be the text or vectors of a
user this process just forgot. :func:`sanitize` overwrites exactly those bytes
with zeros. It leaves every byte the index reads (node counts, links, vectors,
labels, norms) as it is, and changes nothing it cannot parse (another Chroma
version's layout), reporting that instead.

Run it only while no Chroma client has the folder open.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

__all__ = ["sanitize"]

_HEADER = struct.Struct("<iQQQQQQiiQQQdQ")  # hnswlib's header as Chroma writes it (100 bytes)


def _write(path: Path, data: bytes | bytearray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _clear_level(buf: bytearray, base: int, slots: int) -> bool:
    """Zero the unused link slots of one link list (header: count as uint16, a flag byte, one
    unused byte, then ``slots`` 4-byte links). False if the count is impossible."""
    count = buf[base] | (buf[base + 1] << 8)
    if count > slots:
        return False
    buf[base + 3] = 0
    start, end = base + 4 + 4 * count, base + 4 + 4 * slots
    buf[start:end] = bytes(end - start)
    return True


def sanitize(segment: Path) -> bool:
    """Zero the uninitialised bytes of the HNSW files in ``segment``; returns False (and
    changes nothing) when the files are not in the layout this understands."""
    try:
        header = (segment / "header.bin").read_bytes()
        data = bytearray((segment / "data_level0.bin").read_bytes())
        lengths = bytearray((segment / "length.bin").read_bytes())
        links = bytearray((segment / "link_lists.bin").read_bytes())
    except FileNotFoundError:
        return True  # nothing persisted yet
    if len(header) != _HEADER.size:
        return False
    (version, offset0, _max, count, size, label_at, data_at, _lvl, _ep, max_m, max_m0, _m, _mult, _ef) = (
        _HEADER.unpack(header)
    )
    if (
        version != 1
        or offset0 != 0
        or size <= 0
        or data_at != 4 + 4 * max_m0
        or not data_at <= label_at < size
    ):
        return False
    if len(data) % size or len(data) // size < count or len(lengths) % 4:
        return False
    original = (bytes(data), bytes(lengths), bytes(links))
    for i in range(len(data) // size):
        base = i * size
        if i >= count:
            data[base : base + size] = bytes(size)
        elif not _clear_level(data, base, int(max_m0)):
            return False
    lengths[4 * count :] = bytes(len(lengths) - 4 * count)
    block = 4 + 4 * int(max_m)
    pos = 0
    while pos < len(links):
        if pos + 4 > len(links):
            return False
        (length,) = struct.unpack_from("<I", links, pos)
        pos += 4
        if length % block or pos + length > len(links):
            return False
        for level in range(length // block):
            if not _clear_level(links, pos + level * block, int(max_m)):
                return False
        pos += length
    for name, new, old in (
        ("data_level0.bin", data, original[0]),
        ("length.bin", lengths, original[1]),
        ("link_lists.bin", links, original[2]),
    ):
        if new != old:
            _write(segment / name, new)
    return True
