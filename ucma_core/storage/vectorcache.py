"""A bounded, in-process copy of recently read stored vectors, by memory id.

A memory's stored vector changes only when the memory is rewritten, so what one
retrieval read from Chroma (the nearest neighbours' vectors, the vectors of keyword,
entity and graph candidates) can serve the next one without another round trip.
:class:`~ucma_core.storage.vectors.VectorStore` fills it from every read that returns
vectors (and reads the vectors of a small write back into it, after the write: what a
search is likely to want next) and forgets an id whenever a write touches it (add, upsert, delete) or the
collection changes; a backend shared by several processes forgets what another
process rewrote when it syncs.

The vectors are the exact float32 arrays Chroma returned (read-only), so a hit gives
the same numbers as a read. A read that overlapped a write (a background writer) is
not kept: :meth:`VectorCache.token` taken before the read must still be current when
its answer is put (a write forgets its ids before and after it runs). The least
recently used entries go first once ``capacity`` vectors or ``max_bytes`` bytes of
vector data are held (0 for either turns the cache off).

The vectors live as rows of a few large float32 blocks (a
:class:`~ucma_core.storage.rowcache.RowCache`), not as one small array each, so the
cache costs the process what it holds. A hit is a copy of its row (read-only), so a
row reused for another vector never changes an answer already handed out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ucma_core.storage.rowcache import RowCache

if TYPE_CHECKING:
    from ucma_core.config import MemoryConfig

__all__ = ["DEFAULT_MAX_BYTES", "CacheArgs", "VectorCache", "cache_args"]

#: The default bound on the cached vectors' data (``MemoryConfig.vector_cache_mib``).
DEFAULT_MAX_BYTES = 2 * 2**20


class CacheArgs(TypedDict):
    """The cache bounds a :class:`~ucma_core.storage.vectors.VectorStore` takes."""

    cache_size: int
    cache_bytes: int


def cache_args(config: MemoryConfig) -> CacheArgs:
    """``config``'s vector cache bounds, as :class:`~ucma_core.storage.vectors.VectorStore`
    keywords."""
    return {"cache_size": config.vector_cache_size, "cache_bytes": int(config.vector_cache_mib * 2**20)}


class VectorCache:
    """Least-recently-used ``{id: float32 vector}`` of at most ``capacity`` entries and
    ``max_bytes`` bytes of vector data.

    Examples:
        >>> cache = VectorCache(2)
        >>> token = cache.token()
        >>> cache.put({"a": np.ones(3, dtype=np.float32), "b": np.zeros(3, dtype=np.float32)}, token)
        >>> sorted(cache.get(["a", "b", "c"]))
        ['a', 'b']
        >>> cache.forget(["a"])
        >>> sorted(cache.get(["a", "b"]))
        ['b']
        >>> len(cache), cache.hits, cache.misses, cache.reads
        (1, 3, 2, 2)
        >>> small = VectorCache(100, max_bytes=8 * 4)  # room for two 4-float vectors
        >>> small.put({k: np.ones(4, dtype=np.float32) for k in "xyz"}, small.token())
        >>> sorted(small.get("xyz")), small.nbytes
        (['y', 'z'], 32)
    """

    def __init__(self, capacity: int, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.capacity = max(0, int(capacity))
        self.max_bytes = max(0, int(max_bytes))
        self._rows = RowCache(np.float32, self.capacity, self.max_bytes)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        #: Lookups that missed a vector (each is followed by one read of the store).
        self.reads = 0
        self._writes = 0
        #: Gives, for a memory id, an equal string object held anyway (the memory graph's,
        #: :meth:`~ucma_core.storage.graph.MemoryGraph.ident`): the ids this cache and the
        #: :class:`~ucma_core.storage.wheresets.WhereSets` built on it keep are then no copies
        #: of their own (at 10,000 memories, about 10,000 ids read from Chroma: 0.9 MiB).
        #: ``None``: the ids are kept as read.
        self.shared_ids: Callable[[str], str] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        """Bytes of vector data held (the blocks allocated so far)."""
        return self._rows.nbytes

    def stats(self) -> dict[str, int]:
        """Vectors held, bytes of vector data allocated, hits and misses so far, and
        ``reads``: the lookups that missed a vector (each one read of the store)."""
        return {
            "vectors": len(self._rows),
            "bytes": self.nbytes,
            "hits": self.hits,
            "misses": self.misses,
            "reads": self.reads,
        }

    def get(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those of ``ids`` held (each becomes the most recently used)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            missed = self.misses
            for memory_id in ids:
                row = self._rows.get(memory_id)
                if row is None:
                    self.misses += 1
                    continue
                vector = row.copy()  # the row may hold another vector later
                vector.setflags(write=False)  # the same contract as a shared copy
                found[memory_id] = vector
            self.hits += len(found)
            self.reads += self.misses > missed
        return found

    @property
    def room(self) -> int:
        """How many vectors it can hold within both bounds (``0`` until it holds one: the
        bytes bound depends on their length)."""
        return self._rows.room

    def lacks(self, ids: Iterable[str]) -> int:
        """How many of ``ids`` it does not hold (nothing is counted or made recent).

        Examples:
            >>> cache = VectorCache(4)
            >>> cache.put({"a": np.ones(2, dtype=np.float32)}, cache.token())
            >>> cache.lacks(["a", "b", "c"]), cache.room, cache.misses
            (2, 4, 0)
        """
        rows = self._rows
        with self._lock:
            return sum(memory_id not in rows for memory_id in ids)

    def token(self) -> int:
        """Take before a read whose answer will be :meth:`put`."""
        return self._writes

    def put(self, vectors: Mapping[str, np.ndarray], token: int) -> None:
        """Hold ``vectors`` (float32 arrays as read from the store), dropping the least
        recently used beyond the bounds; nothing if a write happened since ``token``."""
        if not self.capacity or not self.max_bytes or not vectors:
            return
        with self._lock:
            if token != self._writes:
                return
            share = self.shared_ids
            for memory_id, vector in vectors.items():
                if vector.ndim == 1:
                    self._rows.put(memory_id if share is None else share(memory_id), vector)

    def forget(self, ids: Sequence[str] | Iterable[str]) -> None:
        """Drop ``ids`` (their stored vectors are being rewritten or deleted)."""
        with self._lock:
            self._writes += 1
            for memory_id in ids:
                self._rows.discard(memory_id)

    def clear(self) -> None:
        """Drop everything (another collection, or a store changed behind this process)."""
        with self._lock:
            self._writes += 1
            self._rows.clear()
