"""A large UCMAStore.batch is written in chunks, the next one embedded during this one's
write: every item is stored once, with the vector of its own text, whatever the cache size."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.store.base import PutOp

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMAStore
from ucma_langchain.langgraph.bulk import chunk_size


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return super().embed(texts)


@pytest.mark.parametrize(("cache", "ahead"), [(256, True), (0, False)])
def test_a_batch_of_several_chunks_stores_each_item_once_with_its_own_vector(
    tmp_path: Path, cache: int, ahead: bool
) -> None:
    embedder = CountingEmbedder()
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
