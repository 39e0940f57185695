"""No scope leaks: whatever is written by whom, each adapter bound to one user reads only
that user's memories (retriever, chat memory, memory block, tools)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_llamaindex import UCMAChatMemory, UCMAMemoryBlock, UCMARetriever, UCMAToolSpec

USERS = ["ana", "ben", "caro", None]
WORDS = ["porto", "lisbon", "cat", "dog", "tea", "jazz", "river"]
OWNER = re.compile(r"owner-(\w+)")

users = st.sampled_from(USERS)
phrases = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
writes = st.lists(st.tuples(users, st.sampled_from(["chat", "tool", "fact", "block"]), phrases), max_size=6)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    folder: Path = tmp_path_factory.mktemp("scope") / "memory"
    with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0)) as mem:
        yield mem


def owners(text: str) -> set[str]:
    return set(OWNER.findall(text))


def write(mem: Memory, user: str | None, how: str, phrase: str) -> None:
    text = f"owner-{user} likes {phrase}"
    if how == "chat":
        UCMAChatMemory(mem, user_id=user, session_id=f"chat-{user}").put(
            ChatMessage(role="user", content=text)
        )
    elif how == "tool":
        UCMAToolSpec(mem, user_id=user).save_memory(content=text)
    elif how == "fact":
        UCMAToolSpec(mem, user_id=user).save_memory(subject=f"owner-{user}", predicate="likes", object=phrase)
    else:
        block = UCMAMemoryBlock(mem, user_id=user)
        asyncio.run(block.aput([ChatMessage(role="user", content=text)], session_id=f"block-{user}"))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(written=writes, reader=users, query=phrases)
def test_no_adapter_reads_across_users(
    shared: Memory, written: list[tuple[str | None, str, str]], reader: str | None, query: str
) -> None:
    for user, how, phrase in written:
        write(shared, user, how, phrase)
    me = {str(reader)}
    question = f"who likes {query}?"

    for hit in UCMARetriever(shared, user_id=reader, k=20).retrieve(question):
        assert hit.node.metadata["user_id"] == reader
        assert owners(hit.node.get_content()) <= me

    chat = UCMAChatMemory(
        shared, user_id=reader, session_id=f"reader-{reader}", recall_k=20, recall_token_limit=4000
    )
    for message in chat.get(input=question):
        assert owners(message.content or "") <= me

    block = UCMAMemoryBlock(shared, user_id=reader, k=20, max_tokens=4000)
    assert owners(asyncio.run(block.aget([ChatMessage(role="user", content=question)]))) <= me

    tools = UCMAToolSpec(shared, user_id=reader, k=20)
    for hit in json.loads(tools.recall_memory(query=question)):
        assert owners(hit["content"]) <= me
        assert shared.get(hit["id"]).user_id == reader  # type: ignore[union-attr]
    for other in USERS:
        facts = json.loads(tools.facts_about(entity=f"owner-{other}"))
        assert all(owners(f["subject"]) <= me for f in facts)
        if str(other) not in me:
            assert facts == []

    theirs = [r for r in shared.list_memories(limit=5) if r.user_id != reader]
    for record in theirs:
        assert json.loads(tools.forget_memory(memory_id=record.id)) == {"forgotten": False}
        assert shared.get(record.id) is not None
