"""Least-recently-used vectors by key, kept as rows of a few large blocks.

The caches of vectors (:class:`~ucma_core.storage.vectorcache.VectorCache` for stored
vectors, :class:`~ucma_core.embedders.cache.CachedEmbedder` for computed ones) hold
thousands of same-length vectors for a long time. Held as one small array each, they
pin the pages of the allocator's heaps that the short-lived objects around them came
from, and a process ends up holding several times the cache's own size (measured: a
7 MiB cache of small arrays cost 18 MiB of resident memory at 10k memories). Here
they are rows of blocks of about 256 KiB, allocated one block at a time up to the
bound, so the cache costs what it holds. Not thread-safe: the owner locks.

Examples:
    >>> rows = RowCache(np.float32, max_rows=2)
    >>> rows.put("a", [1.0, 2.0]); rows.put("b", [3.0, 4.0]); rows.put("c", [5.0, 6.0])
    >>> rows.get("a") is None, rows.get("b").tolist(), len(rows), rows.nbytes
    (True, [3.0, 4.0], 2, 16)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

__all__ = ["BLOCK_BYTES", "RowCache"]

#: Bytes of data per block the rows are kept in.
BLOCK_BYTES = 256 * 1024


class RowCache:
    """``{key: vector}`` of at most ``max_rows`` same-length vectors, least recently used
    dropped first; a vector of another length empties it and starts again.

    Args:
        dtype: The rows' number type (``np.float32`` for stored vectors, ``np.float64``
            to give back exactly the floats an embedder returned).
        max_rows: How many vectors at most (``0``: none are kept).
        max_bytes: ... and at most this many bytes of their data (``None``: no bound).
    """

    def __init__(self, dtype: Any, max_rows: int, max_bytes: int | None = None) -> None:
        self.dtype = np.dtype(dtype)
        self.max_rows = max(0, int(max_rows))
        self.max_bytes = None if max_bytes is None else max(0, int(max_bytes))
        self._rows: OrderedDict[Hashable, int] = OrderedDict()
        self._blocks: list[np.ndarray] = []
        self._free: list[int] = []
        self._dim = 0
        self._per_block = 1
        self._limit = 0

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def room(self) -> int:
        """How many vectors of the length held it can hold (``0`` before the first)."""
        return self._limit

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    @property
    def nbytes(self) -> int:
        """Bytes of vector data allocated (the blocks so far)."""
        return sum(block.nbytes for block in self._blocks)

    def get(self, key: Hashable) -> np.ndarray | None:
        """The row of ``key`` (a view: copy it before the next :meth:`put`), now the most
        recently used; ``None`` if not held."""
        row = self._rows.get(key)
        if row is None:
            return None
        self._rows.move_to_end(key)
        return self._blocks[row // self._per_block][row % self._per_block]  # type: ignore[no-any-return]

    def put(self, key: Hashable, vector: Sequence[float] | np.ndarray) -> None:
        """Hold ``vector`` for ``key`` (replacing what it held), as the most recently used."""
        dim = len(vector)
        if not dim or not self.max_rows:
            return
        if dim != self._dim:
            self.clear()
            self._dim = dim
            bound = self.max_rows
            if self.max_bytes is not None:
                bound = min(bound, self.max_bytes // (self.dtype.itemsize * dim))
            self._limit = bound
            self._per_block = max(1, min(bound, BLOCK_BYTES // (self.dtype.itemsize * dim)))
        if not self._limit:
            return
        rows = self._rows
        row = rows.get(key)
        if row is None:
            row = self._new_row()
        self._blocks[row // self._per_block][row % self._per_block] = vector
        rows[key] = row
        rows.move_to_end(key)

    def _new_row(self) -> int:
        if self._free:
            return self._free.pop()
        allocated = len(self._blocks) * self._per_block
        if allocated < self._limit:
            size = min(self._per_block, self._limit - allocated)
            self._blocks.append(np.empty((size, self._dim), dtype=self.dtype))
            self._free.extend(range(allocated + size - 1, allocated, -1))
            return allocated
        _, row = self._rows.popitem(last=False)  # full: the least recently used row is reused
        return row

    def discard(self, key: Hashable) -> None:
        """Drop ``key`` if held."""
        row = self._rows.pop(key, None)
        if row is not None:
            self._free.append(row)

    def clear(self) -> None:
        """Drop everything and free the blocks."""
        self._rows.clear()
        self._blocks = []
        self._free = []
        self._dim = 0
