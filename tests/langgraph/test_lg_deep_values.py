"""Deeply nested Store values and filters get a clear InvalidInputError, never a RecursionError,
and nothing stored is lost; a deep LangChain tool call gets one too."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from ucma_core.errors import InvalidInputError
from ucma_langchain.langgraph import UCMAStore
from ucma_langchain.langgraph.items import MAX_DEPTH
from ucma_langchain.messages import to_turn


def nested(depth: int, leaf: object = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"x": value}
    return value


def deep_list(depth: int) -> Any:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("value", [nested(100_000), nested(2_000), {"v": deep_list(100_000)}])
def test_a_deep_store_value_is_refused_clearly(store: UCMAStore, value: Any) -> None:
    store.put(("memories", "ana"), "kept", {"text": "already stored"})
    with pytest.raises(InvalidInputError, match=f"a Store value is nested more than {MAX_DEPTH} levels"):
        store.put(("memories", "ana"), "deep", value)
    with pytest.raises(InvalidInputError, match=f"a Store filter is nested more than {MAX_DEPTH} levels"):
        store.search(("memories",), filter=value)
    item = store.get(("memories", "ana"), "kept")
    assert item is not None and item.value == {"text": "already stored"}
    assert store.get(("memories", "ana"), "deep") is None


async def test_a_deep_store_value_is_refused_clearly_async(store: UCMAStore) -> None:
    with pytest.raises(InvalidInputError, match="nested more than"):
        await store.aput(("memories", "ana"), "deep", nested(100_000))


def test_the_deepest_store_value_allowed_round_trips(store: UCMAStore) -> None:
    value = nested(MAX_DEPTH - 1, "leaf")
    store.put(("memories", "ana"), "deep", value)
    item = store.get(("memories", "ana"), "deep")
    assert item is not None and item.value == value


def test_a_deep_langchain_tool_call_is_refused_clearly() -> None:
    message = AIMessage("", tool_calls=[{"name": "lookup", "args": nested(5000), "id": "c1"}])
    with pytest.raises(InvalidInputError, match="a tool call is nested more than"):
        to_turn(message)
