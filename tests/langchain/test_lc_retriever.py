"""UCMARetriever: the langchain-tests standard suite, documents' metadata, scope."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_langchain import UCMARetriever

ANA = [
    "Ana moved to Lisbon in May and loves the trams there.",
    "Ana's sister Carla lives in Porto and works as a nurse.",
    "Ana prefers short answers without small talk.",
    "Ana is learning to play the Portuguese guitar.",
    "Ana's cat Miso sleeps on the balcony in Lisbon.",
]


def seeded(folder: Path) -> Memory:
    mem = Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))
    mem.observe_many(ANA, user_id="ana", session_id="s1", metadata={"topic": "life"}, tags=["bio"])
    mem.observe("Ben lives in Lisbon too and hates trams.", user_id="ben")
    return mem


class TestStandardSuite(RetrieversIntegrationTests):
    """langchain-tests' retriever suite, unmodified."""

    @pytest.fixture(autouse=True)
    def _memory(self, tmp_path: Path) -> Iterator[None]:
        self.memory = seeded(tmp_path / "memory")
        yield
        self.memory.close()

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return UCMARetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "user_id": "ana", "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return "Where does Ana live?"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = seeded(tmp_path / "memory")
    yield mem
    mem.close()


def test_documents_carry_id_and_metadata(memory: Memory) -> None:
    doc = UCMARetriever(memory=memory, user_id="ana", k=1).invoke("Carla the nurse in Porto")[0]
    assert isinstance(doc, Document)
    assert doc.page_content == ANA[1]
    meta = doc.metadata
    assert doc.id == meta["id"]
    assert memory.get(doc.id) is not None  # type: ignore[arg-type]
    assert meta["memory_type"] == "episodic"
    assert meta["source"] == "user"
    assert (meta["user_id"], meta["session_id"]) == ("ana", "s1")
    assert meta["tags"] == ["bio"]
    assert meta["metadata"] == {"topic": "life"}
    assert set(meta["route"]) == {"kind", "reason"}
    assert isinstance(meta["score"], float) and meta["timestamp_iso"].startswith("20")
    assert "content" not in meta and "source_ids" in meta


def test_k_per_call_and_filters(memory: Memory) -> None:
    retriever = UCMARetriever(memory=memory, user_id="ana", k=5, memory_types=["semantic"])
    assert retriever.invoke("Lisbon") == []
    retriever = UCMARetriever(memory=memory, user_id="ana", k=5, include_generated=False, route="hybrid")
    assert len(retriever.invoke("Lisbon", k=2)) == 2


async def test_async_matches_sync(memory: Memory) -> None:
    retriever = UCMARetriever(memory=memory, user_id="ana", k=3)
    sync = [d.id for d in retriever.invoke("Ana's cat")]
    assert [d.id for d in await retriever.ainvoke("Ana's cat")] == sync


def test_scopes(memory: Memory) -> None:
    def users(**scope: Any) -> set[str | None]:
        return {
            d.metadata["user_id"] for d in UCMARetriever(memory=memory, k=10, **scope).invoke("Lisbon trams")
        }

    assert users(user_id="ana") == {"ana"}
    assert users(user_id="ben") == {"ben"}
    assert users(user_id=None) == set()
    assert users(user_id=ANY) == {"ana", "ben"}
    assert users(user_id="ana", session_id="other") == set()
    view = memory.scope(user_id="ben")
    assert {d.metadata["user_id"] for d in UCMARetriever(memory=view, k=10).invoke("Lisbon")} == {"ben"}
    with pytest.raises(InvalidInputError, match="contradicts the view's user_id='ben'"):
        UCMARetriever(memory=view, user_id="ana").invoke("Lisbon")


def test_bad_arguments(memory: Memory) -> None:
    with pytest.raises(ValueError):
        UCMARetriever(memory=memory, k=0)
    with pytest.raises(InvalidInputError, match="unknown memory type"):
        UCMARetriever(memory=memory, user_id="ana", memory_types=["dreams"]).invoke("x")
    with pytest.raises(InvalidInputError, match="query is empty"):
        UCMARetriever(memory=memory, user_id="ana").invoke("  ")
