"""A bounded, in-process copy of recently read memory texts, by memory id.

A memory's text changes only when the memory is rewritten, so the texts retrieval reads
(the best candidates', for the name hop, context and content-free checks) can serve the
next retrieval without another read of the keyword index.
:class:`~ucma_core.storage.keywords.KeywordIndex` fills it from :meth:`texts
<ucma_core.storage.keywords.KeywordIndex.texts>` and forgets an id whenever a write
touches it (add, delete); a rewrite or a rolled-back write clears it. A read that
overlapped a write is not kept (:meth:`TextCache.token`, as in
:mod:`~ucma_core.storage.vectorcache`). The least recently used entries go first once
``capacity`` texts are held (0 turns the cache off).

Examples:
    >>> cache = TextCache(2)
    >>> cache.put({"a": "the kettle", "b": "the key", "c": "the hose"}, cache.token())
    >>> sorted(cache.get(["a", "b", "c"]).items())
    [('b', 'the key'), ('c', 'the hose')]
    >>> cache.forget(["b"])
    >>> cache.get(["b", "c"])
    {'c': 'the hose'}
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

__all__ = ["TextCache"]


class TextCache:
    """Least-recently-used ``{id: text}`` of at most ``capacity`` entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, int(capacity))
        self._items: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._writes = 0
        #: Texts answered from the cache, and asked for but not held, so far.
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, ids: Iterable[str]) -> dict[str, str]:
        """The cached texts of those of ``ids`` held (each becomes the most recently used)."""
        found: dict[str, str] = {}
        with self._lock:
            items = self._items
            for memory_id in ids:
                text = items.get(memory_id)
                if text is not None:
                    items.move_to_end(memory_id)
                    found[memory_id] = text
                else:
                    self.misses += 1
            self.hits += len(found)
        return found

    def token(self) -> int:
        """Take before a read whose answer will be :meth:`put`."""
        return self._writes

    def put(self, texts: Mapping[str, str], token: int) -> None:
        """Hold ``texts``, dropping the least recently used beyond the capacity; nothing if a
        write happened since ``token``."""
        if not self.capacity or not texts:
            return
        with self._lock:
            if token != self._writes:
                return
            items = self._items
            for memory_id, text in texts.items():
                items[memory_id] = text
                items.move_to_end(memory_id)
            while len(items) > self.capacity:
                items.popitem(last=False)

    def forget(self, ids: Iterable[str]) -> None:
        """Drop ``ids`` (their rows are being rewritten or deleted)."""
        with self._lock:
            self._writes += 1
            for memory_id in ids:
                self._items.pop(memory_id, None)

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._writes += 1
            self._items.clear()
