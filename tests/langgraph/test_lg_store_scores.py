"""A Store query search scores with the vectors retrieval already has: the query is embedded
once (by retrieval) and no item is embedded again; the score stays the cosine similarity
of the query and the item's indexed text, as ``InMemoryStore`` reports it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from langgraph.store.base import IndexConfig
from langgraph.store.memory import InMemoryStore

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMAStore

VALUES = [
    {"text": "Ana drinks green tea every morning"},
    {"text": "the quarterly tax filing deadline is in April"},
    {"text": "Ana's sister lives in Porto"},
    {"text": "green tea with jasmine is Ana's favourite"},
]


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed(texts)


def _embed(texts: Sequence[str]) -> list[list[float]]:
    return HashingEmbedder().embed(list(texts))


def test_a_query_search_scores_as_the_reference_and_embeds_no_item(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    index: IndexConfig = {"dims": embedder.dimension, "embed": _embed}
    reference = InMemoryStore(index=index)
    # no embedding cache: every text the store or retrieval embeds reaches the embedder
    with Memory(tmp_path / "memory", embedder=embedder, config=MemoryConfig(embedding_cache_size=0)) as mem:
        store = UCMAStore(mem, index={"fields": ["text"]})
        for n, value in enumerate(VALUES):
            store.put(("s",), f"k{n}", value)
            reference.put(("s",), f"k{n}", value, index=["text"])
        embedder.texts.clear()
        for query in ("what does Ana drink", "last week: where does Ana's sister live?"):
            found = store.search(("s",), query=query, limit=len(VALUES))
            expected = {i.key: i.score for i in reference.search(("s",), query=query, limit=len(VALUES))}
            assert found and all(i.score is not None for i in found)
            assert {i.key: round(i.score or 0.0, 6) for i in found} == {
                k: round(v or 0.0, 6) for k, v in expected.items() if k in {i.key for i in found}
            }
        # the query is embedded by retrieval, and for the score (the embedder's cache usually
        # answers); no item's text is embedded again
        assert not set(embedder.texts) & {v["text"] for v in VALUES}
        assert len(embedder.texts) <= 4, embedder.texts
