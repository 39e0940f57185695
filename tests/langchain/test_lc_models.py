"""Model bridges: a LangChain Embeddings as the embedder, a LangChain chat model as the provider."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.messages import AIMessage

from tests.conftest import FakeClock
from tests.langchain.lc_fakes import ScriptedChatModel, json_answer
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import EmbedderMismatchError, InvalidInputError, ProviderError
from ucma_langchain import LangChainChatTransport, LangChainEmbedder, langchain_provider


class BrokenEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("the embedding service is down")

    def embed_query(self, text: str) -> list[float]:
        raise ConnectionError("the embedding service is down")


class ShortEmbeddings(DeterministicFakeEmbedding):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [vector[:3] for vector in super().embed_documents(texts)]


def test_embeddings_as_the_embedder(folder: Path) -> None:
    embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=32))
    assert (embedder.name, embedder.dimension) == ("langchain:DeterministicFakeEmbedding", 32)
    with Memory(folder, embedder=embedder) as mem:
        memory_id = mem.observe("Ana lives in Lisbon.", importance=0.9)
        assert mem.remember("Ana lives in Lisbon.")[0].id == memory_id
    with Memory(folder, embedder=LangChainEmbedder(DeterministicFakeEmbedding(size=32))) as mem:
        assert mem.remember("Ana lives in Lisbon.")[0].id == memory_id
    with pytest.raises(EmbedderMismatchError):
        Memory(folder, embedder=HashingEmbedder())


def test_embedder_errors(folder: Path) -> None:
    with pytest.raises(ProviderError, match="embedding service is down"):
        LangChainEmbedder(BrokenEmbeddings()).embed(["x"])
    with pytest.raises(ProviderError, match="embedding service is down"):
        _ = LangChainEmbedder(BrokenEmbeddings()).dimension
    with Memory(folder, embedder=LangChainEmbedder(ShortEmbeddings(size=8), dimension=8)) as mem:
        with pytest.raises(ProviderError, match="expected 8"):
            mem.observe("this vector comes back too short", importance=0.9)
        assert mem.stats()["memories"] == 0
    with pytest.raises(InvalidInputError, match="Embeddings"):
        LangChainEmbedder("text-embedding-3-small")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="dimension"):
        LangChainEmbedder(DeterministicFakeEmbedding(size=8), dimension=0)


def test_chat_transport() -> None:
    model = ScriptedChatModel(script=[AIMessage([{"type": "text", "text": '{"importance": '}, "0.8}"])])
    transport = LangChainChatTransport(model)
    assert transport.complete("system prompt", "user prompt") == '{"importance": 0.8}'
    assert [m.type for m in model.prompts[0]] == ["system", "human"]
    with pytest.raises(InvalidInputError, match="chat model"):
        LangChainChatTransport("gpt-4o")  # type: ignore[arg-type]


async def test_chat_transport_async() -> None:
    transport = LangChainChatTransport(ScriptedChatModel(script=["pong"]))
    assert await transport.acomplete("system", "ping") == "pong"


def test_bind_passes_model_arguments() -> None:
    model = ScriptedChatModel(script=["{}"])
    LangChainChatTransport(model, bind={"stop": ["\n\n"]}).complete("s", "u")
    assert len(model.prompts) == 1


def test_consolidation_runs_end_to_end_on_a_chat_model(folder: Path, clock: FakeClock) -> None:
    model = ScriptedChatModel(script=[json_answer])
    provider = langchain_provider(model, max_attempts=2, sleep=lambda s: None)
    with Memory(folder, embedder=HashingEmbedder(), provider=provider, clock=clock) as mem:
        mem.observe("Hi! I'm Ana and I live in Lisbon.", user_id="ana", participants=["Ana"], keep=True)
        clock.advance(days=10)
        mem.observe("Big news: I live in Berlin now.", user_id="ana", participants=["Ana"], keep=True)
        clock.advance(days=10)
        report = mem.consolidate()
        assert report.errors == []
        facts = mem.facts_about("Ana", user_id="ana")
        assert [(f.predicate, f.object) for f in facts] == [("lives in", "Berlin")]
    tasks = {p[0].text.split(".")[0] for p in model.prompts}
    assert any("extract durable facts" in t for t in tasks)


@pytest.mark.parametrize("answer", ["not json at all", '{"items": "nope"}', "```json\n{]\n```"])
def test_malformed_model_json_is_a_clear_provider_error(folder: Path, clock: FakeClock, answer: str) -> None:
    model = ScriptedChatModel(script=[answer])
    provider = langchain_provider(model, max_attempts=2, sleep=lambda s: None)
    with pytest.raises(ProviderError, match="ScriptedChatModel"):
        provider.extract_facts(["I live in Lisbon"], speakers=["Ana"])
    assert len(model.prompts) == 2  # asked again once, then gave up
    with Memory(folder, embedder=HashingEmbedder(), provider=provider, clock=clock) as mem:
        kept = mem.observe("I live in Lisbon.", user_id="ana", keep=True)
        clock.advance(days=10)
        report = mem.consolidate()
        assert report.errors  # recorded, and the episode is kept for the next cycle
        assert mem.get(kept) is not None  # type: ignore[arg-type]


def test_a_failing_model_is_a_provider_error() -> None:
    def fail(messages: object) -> str:
        raise TimeoutError("model timed out")

    provider = langchain_provider(ScriptedChatModel(script=[fail]), sleep=lambda s: None)
    with pytest.raises(ProviderError) as caught:
        provider.summarize([["a", "b"]])
    assert isinstance(caught.value.__cause__, TimeoutError)
