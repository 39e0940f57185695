"""UCMARetriever: nodes, metadata, filters, async, scope."""

from __future__ import annotations

import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from ucma_core import Memory
from ucma_core.errors import InvalidInputError
from ucma_llamaindex import UCMARetriever
from ucma_llamaindex.retriever import to_node


@pytest.fixture
def stored(mem: Memory) -> dict[str, str]:
    ana = mem.scope(user_id="ana", session_id="s1")
    ids = {
        "porto": ana.observe("My sister Marta lives in Porto.", importance=0.9, metadata={"topic": "family"}),
        "rex": ana.observe("My dog Rex loves the beach.", importance=0.9, tags=["pets"]),
    }
    ids["fact"] = ana.assert_fact("Marta", "lives in", "Porto").id
    mem.scope(user_id="ben").observe("Marta is Ben's neighbour in Porto.", importance=0.9)
    return {k: v for k, v in ids.items() if v is not None}


def test_nodes_carry_the_memory_id_text_and_metadata(mem: Memory, stored: dict[str, str]) -> None:
    hits = UCMARetriever(mem, user_id="ana", k=3).retrieve("Where does Marta live?")
    assert all(isinstance(h, NodeWithScore) and isinstance(h.node, TextNode) for h in hits)
    by_id = {h.node.node_id: h for h in hits}
    hit = by_id[stored["porto"]]
    assert hit.node.get_content() == "My sister Marta lives in Porto."
    meta = hit.node.metadata
    assert meta["memory_type"] == "episodic" and meta["source"] == "user"
    assert (meta["user_id"], meta["session_id"]) == ("ana", "s1")
    assert meta["metadata"] == {"topic": "family"}
    assert set(meta["route"]) == {"kind", "reason"} and meta["timestamp_iso"].endswith("+00:00")
    assert hit.score == pytest.approx(meta["score"])
    shown = hit.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "memory_type: episodic" in shown and "session_id" not in shown
    assert hit.node.get_content(metadata_mode=MetadataMode.EMBED) == "My sister Marta lives in Porto."


def test_never_returns_another_user(mem: Memory, stored: dict[str, str]) -> None:
    hits = UCMARetriever(mem, user_id="ana", k=10).retrieve("Marta Porto neighbour")
    assert {h.node.metadata["user_id"] for h in hits} == {"ana"}
    assert all("Ben" not in h.node.get_content() for h in hits)


async def test_async_and_query_bundle(mem: Memory, stored: dict[str, str]) -> None:
    retriever = UCMARetriever(mem, user_id="ana", k=2)
    sync = [h.node.node_id for h in retriever.retrieve(QueryBundle("Where does Marta live?"))]
    asyn = [h.node.node_id for h in await retriever.aretrieve("Where does Marta live?")]
    assert sync == asyn


def test_filters(mem: Memory, stored: dict[str, str]) -> None:
    facts = UCMARetriever(mem, user_id="ana", memory_types=["semantic"]).retrieve("Marta")
    assert [h.node.node_id for h in facts] == [stored["fact"]]
    pets = UCMARetriever(mem, user_id="ana", tags=["pets"]).retrieve("what does the dog love?")
    assert [h.node.node_id for h in pets] == [stored["rex"]]
    family = UCMARetriever(mem, user_id="ana", metadata_filter={"topic": "family"}).retrieve("Marta")
    assert [h.node.node_id for h in family] == [stored["porto"]]
    routed = UCMARetriever(mem, user_id="ana", route="hybrid").retrieve("what happened last week?")
    assert all(h.node.metadata["route"]["kind"] == "hybrid" for h in routed)


def test_bad_arguments_are_clear(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="k must be"):
        UCMARetriever(mem, k=0)
    with pytest.raises(InvalidInputError):
        UCMARetriever(mem).retrieve("")
    with pytest.raises(InvalidInputError, match="contradicts"):
        UCMARetriever(mem.scope(user_id="ana"), user_id="ben")


def test_to_node_shows_chosen_metadata_to_the_llm(mem: Memory, stored: dict[str, str]) -> None:
    result = mem.remember("Marta", user_id="ana", k=1)[0]
    node = to_node(result, llm_metadata_keys=("timestamp_iso",)).node
    shown = node.get_content(metadata_mode=MetadataMode.LLM)
    assert "timestamp_iso:" in shown and "memory_type" not in shown
