"""Swap LangChain's ``InMemoryChatMessageHistory`` for UCMAChatMessageHistory.

Each history the tests build is a :class:`~ucma_langchain.UCMAChatMessageHistory` of a
new session (for an app without users) in the test's memory; ``messages=[...]`` adds
them. Two histories compare equal when they hold equal messages (the in-memory
history is a pydantic model compared by its messages; UCMA's is a view of a memory).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import pytest
import ucma_swap_common as common
from langchain_core.messages import BaseMessage

from ucma_langchain import UCMAChatMessageHistory


@pytest.fixture(autouse=True)
def _memory_open(_ucma_adapter_use: None) -> None:
    """Open the test's memory before the test: the tests build histories inside the event
    loop, where LangChain's blocking-call guard refuses opening a folder (a fixture's job)."""
    common.test_memory()


class InMemoryChatMessageHistory(UCMAChatMessageHistory):
    """UCMAChatMessageHistory built as the tests build the in-memory history."""

    def __init__(self, messages: Sequence[BaseMessage] | None = None, **_: Any) -> None:
        common.reached()
        super().__init__(common.test_memory(), f"session-{uuid.uuid4().hex}", user_id=None)
        if messages:
            self.add_messages(messages)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UCMAChatMessageHistory) and self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]


common.plan(
    swaps={"langchain_core.chat_history:InMemoryChatMessageHistory": InMemoryChatMessageHistory},
    xfail={},
    not_applicable={},
)
