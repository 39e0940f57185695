"""UCMAMemoryBlock inside llama_index.core.memory.Memory: flush, recall, truncation."""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory as ChatMemory
from llamaindex_fakes import texts

from ucma_core import Memory
from ucma_core.records import MemoryType
from ucma_llamaindex import UCMAMemoryBlock

CONVERSATION = [
    "My sister Marta lives in Porto.",
    "Nice, Porto is lovely.",
    "I also have a dog named Rex who loves the beach.",
    "Rex sounds fun.",
    "What is the weather like today in Lisbon?",
    "Sunny and warm.",
]


def conversation(*extra: str) -> list[ChatMessage]:
    said = [*CONVERSATION, *extra]
    return [ChatMessage(role="user" if n % 2 == 0 else "assistant", content=t) for n, t in enumerate(said)]


def small_memory(block: UCMAMemoryBlock, session_id: str = "s1") -> ChatMemory:
    """A LlamaIndex Memory whose short-term queue flushes after a few messages."""
    return ChatMemory.from_defaults(
        session_id=session_id,
        token_limit=60,
        token_flush_size=20,
        chat_history_token_ratio=0.5,
        memory_blocks=[block],
    )


def test_flushed_messages_are_recalled_into_the_system_message(mem: Memory) -> None:
    memory = small_memory(UCMAMemoryBlock(mem, user_id="ana"))
    for message in conversation("Where does Marta live?"):
        memory.put(message)
    stored = mem.scope(user_id="ana", session_id="s1").history()
    assert [e.content for e in stored][:2] == CONVERSATION[:2]  # flushed, in the LlamaIndex session
    rendered = memory.get()
    assert rendered[0].role == MessageRole.SYSTEM
    system = rendered[0].content or ""
    assert "<ucma_memory>" in system and "My sister Marta lives in Porto." in system
    assert texts(rendered)[-1] == "Where does Marta live?"


async def test_async_memory_and_another_session_recall_the_same_user(mem: Memory) -> None:
    first = small_memory(UCMAMemoryBlock(mem, user_id="ana"), "s1")
    await first.aput_messages(conversation())
    await first.aput(ChatMessage(role="user", content="ok"))
    later = small_memory(UCMAMemoryBlock(mem, user_id="ana"), "s2")
    rendered = await later.aget(input="Where does my sister Marta live?")
    assert "Marta lives in Porto" in (rendered[0].content or "")
    other_user = small_memory(UCMAMemoryBlock(mem, user_id="ben"), "s3")
    assert all(m.role != MessageRole.SYSTEM for m in await other_user.aget(input="Where does Marta live?"))


async def test_a_block_bound_to_a_session_stores_there(mem: Memory) -> None:
    block = UCMAMemoryBlock(mem, user_id="ana", session_id="ucma-side")
    await block.aput(conversation()[:2], from_short_term_memory=True, session_id="llama-side")
    assert [e.content for e in mem.scope(user_id="ana", session_id="ucma-side").history()] == CONVERSATION[:2]
    assert mem.scope(user_id="ana", session_id="llama-side").history() == []


async def test_atruncate_drops_the_least_useful_memories_first(mem: Memory) -> None:
    ana = mem.scope(user_id="ana", session_id="old")
    for fact in ("Marta lives in Porto", "Marta works as a nurse in Porto", "Marta has a cat in Porto"):
        ana.observe(fact, importance=0.9)
    block = UCMAMemoryBlock(mem, user_id="ana", k=3)
    content = await block.aget([ChatMessage(role="user", content="Tell me about Marta in Porto")])
    lines = content.splitlines()
    assert len(lines) == 4  # header and three memories, most useful first
    shorter = await block.atruncate(content, tokens_to_truncate=5)
    assert shorter is not None and shorter.splitlines() == lines[: len(shorter.splitlines())]
    assert len(shorter) < len(content)
    assert await block.atruncate(content, tokens_to_truncate=10_000) is None
    assert await block.atruncate("something this block did not render", tokens_to_truncate=1) is None


def test_priority_and_names_are_configurable(mem: Memory) -> None:
    block = UCMAMemoryBlock(mem, user_id="ana", name="long_term", priority=0, k=2, max_tokens=100)
    assert (block.name, block.priority, block.k, block.max_tokens) == ("long_term", 0, 2, 100)
    assert UCMAMemoryBlock(mem, user_id=None).priority == 1


async def test_no_query_no_recall_and_bad_messages_store_nothing(mem: Memory) -> None:
    block = UCMAMemoryBlock(mem, user_id="ana")
    assert await block.aget([]) == ""
    assert await block.aget([ChatMessage(role="user", content="  ")]) == ""
    await block.aput([ChatMessage(role="user", content=""), ChatMessage(role="assistant", blocks=[])])
    assert mem.list_memories(user_id="ana") == []


async def test_keep_all_false_lets_importance_decide(mem: Memory) -> None:
    block = UCMAMemoryBlock(mem, user_id="ana", keep_all=False)
    await block.aput([ChatMessage(role="user", content="ok")], session_id="s")
    kept = mem.list_memories(user_id="ana", memory_types=[MemoryType.EPISODIC])
    assert kept == []
