"""UCMAChatMemory against LlamaIndex's ChatMemoryBuffer, the reference for its contract.

llama-index-core's sdist ships no tests (docs/parity.md), so this is our own contract
test: the same operations on both, compared message by message (role and text). Recall
is off (``recall_k=0``) and both count tokens the same way (words), so ``get`` compares
the token-limited window itself: the newest messages that fit, never starting with an
assistant message, at least the newest one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_llamaindex import UCMAChatMemory


class Words:
    """One token per whitespace-separated word (both memories count the same way)."""

    def count(self, text: str) -> int:
        return len(text.split())


TALK = [
    ChatMessage(role="user", content="Hi, I'm Ana and I live in Lisbon."),
    ChatMessage(role="assistant", content="Hello Ana! Lisbon is lovely in spring."),
    ChatMessage(role="user", content="My sister Bea moved to Porto last year."),
    ChatMessage(role="assistant", content="Porto is a short train ride from Lisbon."),
    ChatMessage(role="user", content="Remind me to call Bea on Sunday."),
]


def shape(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(str(m.role.value), str(m.content)) for m in messages]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Callable[[int], tuple[ChatMemoryBuffer, UCMAChatMemory]]]:
    mem = Memory(tmp_path / "memory", embedder=HashingEmbedder())

    def make(token_limit: int) -> tuple[ChatMemoryBuffer, UCMAChatMemory]:
        reference = ChatMemoryBuffer.from_defaults(token_limit=token_limit, tokenizer_fn=str.split)
        ours = UCMAChatMemory(
            mem, user_id=None, session_id=f"s{token_limit}", token_limit=token_limit, recall_k=0,
            token_counter=Words(),
        )  # fmt: skip
        return reference, ours

    yield make
    mem.close()


@pytest.mark.parametrize("token_limit", [3, 9, 16, 25, 33, 41, 1000])
def test_put_get_all_and_the_token_window_match_the_buffer(
    pair: Callable[[int], tuple[ChatMemoryBuffer, UCMAChatMemory]], token_limit: int
) -> None:
    reference, ours = pair(token_limit)
    for message in TALK:
        reference.put(message)
        ours.put(message)
        assert shape(ours.get_all()) == shape(reference.get_all())
        assert shape(ours.get()) == shape(reference.get())
    for initial in (0, 2, token_limit):
        assert shape(ours.get(initial_token_count=initial)) == shape(
            reference.get(initial_token_count=initial)
        )


def test_set_put_messages_and_reset_match_the_buffer(
    pair: Callable[[int], tuple[ChatMemoryBuffer, UCMAChatMemory]],
) -> None:
    reference, ours = pair(1000)
    for memory in (reference, ours):
        memory.put_messages(TALK[:2])
        memory.set(TALK[2:])
    assert shape(ours.get_all()) == shape(reference.get_all()) == shape(TALK[2:])
    for memory in (reference, ours):
        memory.reset()
    assert ours.get_all() == reference.get_all() == []
    assert ours.get() == reference.get() == []


async def test_the_async_partners_match_the_buffer(
    pair: Callable[[int], tuple[ChatMemoryBuffer, UCMAChatMemory]],
) -> None:
    reference, ours = pair(25)
    for message in TALK:
        await reference.aput(message)
        await ours.aput(message)
    assert shape(await ours.aget_all()) == shape(await reference.aget_all())
    assert shape(await ours.aget()) == shape(await reference.aget())
    await reference.aset(TALK[:1])
    await ours.aset(TALK[:1])
    assert shape(await ours.aget()) == shape(await reference.aget()) == shape(TALK[:1])
    await reference.areset()
    await ours.areset()
    assert await ours.aget_all() == await reference.aget_all() == []


def test_from_defaults_with_a_chat_history_matches_the_buffer(tmp_path: Path) -> None:
    reference = ChatMemoryBuffer.from_defaults(chat_history=list(TALK), token_limit=1000)
    with Memory(tmp_path / "memory", embedder=HashingEmbedder()) as mem:
        ours = UCMAChatMemory.from_defaults(memory=mem, chat_history=list(TALK), user_id=None, recall_k=0)
        assert shape(ours.get_all()) == shape(reference.get_all())
        assert shape(ours.get()) == shape(reference.get())
