"""Writing many Store items at once: chunks, with the next chunk embedded during this one's write.

A ``batch`` of many puts is written by :func:`write_items` in chunks, each one
``Memory.upsert_many`` call (one embedding batch, one Chroma write, one journal append;
all or nothing per chunk). The memory's write is mostly serial Python and Chroma, while
an embedding model runs on every core; so while one chunk is written, a worker thread
embeds the next chunk's texts through the memory's embedder, whose cache then answers
``upsert_many``. The embedding cache must hold two chunks (a chunk is half of it);
with a cache too small to help, chunks are written one after another without the
look-ahead. Before a chunk is written its texts are asked for again (cache hits), so
the look-ahead for the next chunk evicts the chunk already written rather than this one;
a text the cache lost in the meantime (to another caller of the same memory) is simply embedded again, and a
failed look-ahead is ignored (the chunk's own embedding reports the error), so what
is stored never depends on the look-ahead.

Examples:
    >>> import tempfile
    >>> from ucma_core import Memory
    >>> from ucma_core.embedders import HashingEmbedder
    >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
    ...     items = [{"key": f"k{n}", "content": f"note {n}"} for n in range(1500)]
    ...     write_items(mem, items)
    ...     mem.get_by_key("k1499").content
    'note 1499'
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ucma_core import Memory
from ucma_core.embedders.cache import CachedEmbedder

__all__ = ["chunk_size", "write_items"]

#: Items per ``upsert_many`` call without a look-ahead.
_CHUNK = 2048
#: A look-ahead chunk smaller than this costs more in round trips than it saves.
_MIN_AHEAD = 128


def chunk_size(memory: Memory) -> tuple[int, bool]:
    """Items per chunk for ``memory``, and whether the next chunk is embedded ahead."""
    embedder = memory.embedder
    half = embedder.max_size // 2 if isinstance(embedder, CachedEmbedder) else 0
    if half >= _MIN_AHEAD:
        return min(_CHUNK, half), True
    return _CHUNK, False


def _embed_ahead(memory: Memory, chunk: Sequence[Mapping[str, Any]]) -> None:
    memory.embedder.embed([item["content"] for item in chunk])


def write_items(memory: Memory, items: Sequence[Mapping[str, Any]]) -> None:
    """``memory.upsert_many`` for ``items`` (dicts of its arguments), a chunk at a time, with
    the next chunk embedded while the current one is written."""
    size, ahead = chunk_size(memory)
    chunks = [list(items[start : start + size]) for start in range(0, len(items), size)]
    if len(chunks) < 2 or not ahead:
        for chunk in chunks:
            memory.upsert_many(chunk)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ucma-store-embed") as pool:
        pending: Future[None] | None = None
        for n, chunk in enumerate(chunks):
            if pending is not None:
                with contextlib.suppress(Exception):  # the chunk's own embedding reports it
                    pending.result()
                    # The look-ahead may have finished before the previous chunk's own
                    # embedding: ask for this chunk again (cache hits) so that it is the most
                    # recent in the cache and the next look-ahead evicts the written chunk,
                    # not this one.
                    _embed_ahead(memory, chunk)
            pending = pool.submit(_embed_ahead, memory, chunks[n + 1]) if n + 1 < len(chunks) else None
            memory.upsert_many(chunk)
