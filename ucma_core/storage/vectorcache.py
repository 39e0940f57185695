"""A bounded, in-process copy of recently read stored vectors, by memory id.

A memory's stored vector changes only when the memory is rewritten, so what one
retrieval read from Chroma (the nearest neighbours' vectors, the vectors of keyword,
entity and graph candidates) can serve the next one without another round trip.
:class:`~ucma_core.storage.vectors.VectorStore` fills it from every read that returns
vectors and forgets an id whenever a write touches it (add, upsert, delete) or the
collection changes; a backend shared by several processes forgets what another
process rewrote when it syncs.

The vectors are the exact float32 arrays Chroma returned (read-only), so a hit gives
the same numbers as a read. A read that overlapped a write (a background writer) is
not kept: :meth:`VectorCache.token` taken before the read must still be current when
its answer is put (a write forgets its ids before and after it runs). The least
recently used entries go first once ``capacity`` vectors are held (0 turns the cache
off).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

__all__ = ["VectorCache"]


class VectorCache:
    """Least-recently-used ``{id: float32 vector}`` of at most ``capacity`` entries.

    Examples:
        >>> cache = VectorCache(2)
        >>> token = cache.token()
        >>> cache.put({"a": np.ones(3, dtype=np.float32), "b": np.zeros(3, dtype=np.float32)}, token)
        >>> sorted(cache.get(["a", "b", "c"]))
        ['a', 'b']
        >>> cache.forget(["a"])
        >>> sorted(cache.get(["a", "b"]))
        ['b']
        >>> len(cache), cache.hits, cache.misses
        (1, 3, 2)
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, int(capacity))
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._writes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those of ``ids`` held (each becomes the most recently used)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            items = self._items
            for memory_id in ids:
                vector = items.get(memory_id)
                if vector is None:
                    self.misses += 1
                    continue
                items.move_to_end(memory_id)
                found[memory_id] = vector
            self.hits += len(found)
        return found

    def token(self) -> int:
        """Take before a read whose answer will be :meth:`put`."""
        return self._writes

    def put(self, vectors: Mapping[str, np.ndarray], token: int) -> None:
        """Hold ``vectors`` (float32 arrays as read from the store), dropping the least
        recently used beyond the capacity; nothing if a write happened since ``token``."""
        if not self.capacity or not vectors:
            return
        with self._lock:
            if token != self._writes:
                return
            items = self._items
            for memory_id, vector in vectors.items():
                if vector.base is not None:  # a row of a whole answer: keep only the row
                    vector = vector.copy()
                vector.setflags(write=False)  # shared with every later reader
                items[memory_id] = vector
                items.move_to_end(memory_id)
            while len(items) > self.capacity:
                items.popitem(last=False)

    def forget(self, ids: Sequence[str] | Iterable[str]) -> None:
        """Drop ``ids`` (their stored vectors are being rewritten or deleted)."""
        with self._lock:
            self._writes += 1
            for memory_id in ids:
                self._items.pop(memory_id, None)

    def clear(self) -> None:
        """Drop everything (another collection, or a store changed behind this process)."""
        with self._lock:
            self._writes += 1
            self._items.clear()
