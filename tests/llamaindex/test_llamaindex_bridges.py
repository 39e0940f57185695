"""Model bridges: a LlamaIndex embedding model as UCMA's embedder, a LlamaIndex LLM as its provider."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llamaindex_fakes import CannedJSONLLM, FailingLLM

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError, ProviderError
from ucma_core.providers import LLMProvider, Provider, UnusableAnswerError
from ucma_llamaindex import LlamaIndexChatTransport, LlamaIndexEmbedder, llamaindex_provider

if TYPE_CHECKING:
    from tests.conftest import FakeClock


class BrokenEmbedding(MockEmbedding):
    """Embeds the dimension probe, then fails (a remote model going away)."""

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        if texts != ["dimension probe"]:
            raise ConnectionError("embedding server unreachable")
        return super()._get_text_embeddings(texts)


def provider(llm: Any) -> LLMProvider:
    return llamaindex_provider(llm, sleep=lambda seconds: None)


# ---------------------------------------------------------------------- embedder
def test_a_llamaindex_embedding_model_is_an_embedder(folder: Path) -> None:
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=16))
    assert (embedder.name, embedder.dimension) == ("llamaindex:MockEmbedding", 16)
    with Memory(folder, embedder=embedder) as mem:
        mem.observe("Ana lives in Lisbon.", importance=0.9)
        assert mem.remember("Lisbon")[0].content == "Ana lives in Lisbon."
        assert mem.stats()["embedder"] == "llamaindex:MockEmbedding"
    named = MockEmbedding(embed_dim=4, model_name="text-embedding-3-small")
    assert LlamaIndexEmbedder(named).name == "llamaindex:MockEmbedding:text-embedding-3-small"


def test_the_embedder_name_and_dimension_can_be_given() -> None:
    embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=4), name="mock-4", dimension=4)
    assert (embedder.name, embedder.dimension, embedder.embed([])) == ("mock-4", 4, [])
    with pytest.raises(InvalidInputError, match="BaseEmbedding"):
        LlamaIndexEmbedder(HashingEmbedder())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="dimension"):
        LlamaIndexEmbedder(MockEmbedding(embed_dim=4), dimension=0)
    with pytest.raises(InvalidInputError, match="single string"):
        embedder.embed("hello")  # type: ignore[arg-type]


def test_a_failing_embedding_model_gives_a_provider_error_and_loses_nothing(folder: Path) -> None:
    with Memory(folder, embedder=LlamaIndexEmbedder(BrokenEmbedding(embed_dim=8), name="mock")) as mem:
        with pytest.raises(ProviderError, match="embedding server unreachable"):
            mem.observe("Ana lives in Lisbon.", importance=0.9)
        assert mem.stats()["memories"] == 0
    with Memory(folder, embedder=LlamaIndexEmbedder(MockEmbedding(embed_dim=8), name="mock")) as mem:
        first = mem.observe("kept", importance=0.9)
    with Memory(folder, embedder=LlamaIndexEmbedder(BrokenEmbedding(embed_dim=8), name="mock")) as mem:
        with pytest.raises(ProviderError):
            mem.observe("lost in transit", importance=0.9)
        assert first is not None and mem.get(first) is not None and mem.stats()["memories"] == 1


# ---------------------------------------------------------------------- LLM provider
def test_a_llamaindex_llm_answers_every_provider_question() -> None:
    llm = CannedJSONLLM()
    p = provider(llm)
    assert isinstance(p, Provider)
    facts = p.extract_facts(["I live in Lisbon", "hello"], speakers=["Ana", "Ana"])
    assert [(f.subject, f.predicate, f.object) for f in facts[0]] == [("Ana", "lives in", "Lisbon")]
    assert facts[1] == []
    assert p.summarize([["Ana moved.", "She likes it."]]) == ["Ana moved. She likes it."]
    assert p.extract_procedure(["did a thing"]) is None
    assert p.distill_learning(["tried"], succeeded=False) is None


async def test_the_async_path_uses_achat() -> None:
    p = provider(CannedJSONLLM())
    facts = await p.aextract_facts(["I live in Porto"], speakers=["Rui"])
    assert facts[0][0].object == "Porto"


def test_unusable_answers_are_asked_again_then_refused() -> None:
    llm = CannedJSONLLM(bad_answers=1)
    assert provider(llm).summarize([["a"]]) == ["a"]
    assert len(llm.requests) == 2
    with pytest.raises(ProviderError, match="unusable after 3 attempt"):
        provider(MockLLM()).summarize([["a"]])  # MockLLM echoes the prompt: not JSON


def test_a_failing_llm_gives_a_clear_provider_error() -> None:
    with pytest.raises(ProviderError, match="ConnectionError: model server unreachable") as caught:
        provider(FailingLLM(max_tokens=None)).extract_facts(["I live in Lisbon"], speakers=["Ana"])
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert "LlamaIndex FailingLLM" in str(caught.value)  # errors name the model
    with pytest.raises(InvalidInputError, match="LlamaIndex LLM"):
        LlamaIndexChatTransport("gpt-4o")  # type: ignore[arg-type]


def test_the_transport_passes_chat_kwargs_and_refuses_empty_replies() -> None:
    llm = CannedJSONLLM()
    transport = LlamaIndexChatTransport(llm, chat_kwargs={"response_format": {"type": "json_object"}})
    assert transport.complete("You write short, faithful summaries", '{"groups": []}') == '{"items": []}'
    assert llm.kwargs == [{"response_format": {"type": "json_object"}}]
    empty = LlamaIndexChatTransport(CannedJSONLLM(empty=True))
    with pytest.raises(UnusableAnswerError, match="no text"):
        empty.complete("system", "{}")
    assert repr(transport) == "LlamaIndexChatTransport('CannedJSONLLM')"


def test_consolidation_runs_with_a_llamaindex_llm(folder: Path, clock: FakeClock) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(
        folder, embedder=HashingEmbedder(), provider=provider(CannedJSONLLM()), config=config, clock=clock
    ) as mem:
        mem.scope(user_id="ana", session_id="s").observe("I live in Lisbon, by the river.")
        clock.advance(days=30)
        report = mem.consolidate()
        assert report.errors == []
        # she gave no name: the fact is about "the user", never her id
        assert [f.content for f in mem.facts_about("the user", user_id="ana")] == ["the user lives in Lisbon"]


def test_a_failing_llm_leaves_every_memory_in_place(folder: Path, clock: FakeClock) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(
        folder,
        embedder=HashingEmbedder(),
        provider=provider(FailingLLM(max_tokens=None)),
        config=config,
        clock=clock,
    ) as mem:
        ana = mem.scope(user_id="ana", session_id="s")
        ids = [ana.observe("I live in Lisbon, by the river."), ana.observe("I work as a nurse.")]
        clock.advance(days=30)
        report = mem.consolidate()
        assert report.errors and "model server unreachable" in " ".join(report.errors)
        assert all(i is not None and mem.get(i) is not None for i in ids)
        assert mem.facts_about("the user", user_id="ana") == []
