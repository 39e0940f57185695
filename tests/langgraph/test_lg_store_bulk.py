"""A large UCMAStore.batch is written in chunks, the next one embedded during this one's
write: every item is stored once, with the vector of its own text, whatever the cache size."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from langgraph.store.base import PutOp

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMAStore
from ucma_langchain.langgraph.bulk import chunk_size


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds; ``slow_first`` makes the first
    chunk's embedding finish after the look-ahead's (as on a loaded machine)."""

    def __init__(self, slow_first: bool = False) -> None:
        super().__init__()
        self.embedded = 0
        self.slow_first = slow_first
        self._count = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._count:
            self.embedded += len(texts)
        if self.slow_first and any(t.startswith("item 1 ") for t in texts):
            time.sleep(0.3)
        return super().embed(texts)


@pytest.mark.parametrize(
    ("cache", "ahead", "slow_first"), [(256, True, False), (256, True, True), (0, False, False)]
)
def test_a_batch_of_several_chunks_stores_each_item_once_with_its_own_vector(
    tmp_path: Path, cache: int, ahead: bool, slow_first: bool
) -> None:
    embedder = CountingEmbedder(slow_first)
    config = MemoryConfig(embedding_cache_size=cache)
    with Memory(tmp_path / "m", embedder=embedder, config=config) as mem:
        size, looks_ahead = chunk_size(mem)
        assert looks_ahead is ahead and (size == 128 if ahead else size == 2048)
        store = UCMAStore(mem, index={"fields": ["text"]})
        n_items = 300 if ahead else 2100  # three chunks either way
        ops = [
            PutOp(("bulk", f"user{n % 3}"), f"k{n}", {"text": f"item {n} about topic {n * 7919}", "n": n})
            for n in range(n_items)
        ]
        ops.append(PutOp(("bulk", "user0"), "k0", {"text": "the last write wins", "n": 0}))
        store.batch(ops)
        assert embedder.embedded == n_items  # nothing embedded twice, the overwritten text never
        listed = store.search(("bulk",), limit=n_items + 1)
        assert sorted(int(i.key[1:]) for i in listed) == list(range(n_items))
        assert store.get(("bulk", "user0"), "k0").value == {"text": "the last write wins", "n": 0}  # type: ignore[union-attr]
        for n in (1, n_items // 2, n_items - 1):
            found = store.search(("bulk", f"user{n % 3}"), query=f"item {n} about topic {n * 7919}", limit=1)
            assert found[0].key == f"k{n}" and found[0].score == pytest.approx(1.0)
