"""LangMem's memory tools (create_manage_memory_tool / create_search_memory_tool) on UCMAStore,
called directly (no model): what they store is a UCMA memory of the right user."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from ucma_core import Memory
from ucma_langchain.langgraph import UCMAStore

langmem = pytest.importorskip("langmem")


def _created_id(answer: str) -> str:
    found = re.search(r"created memory ([0-9a-f-]{36})", answer)
    assert found, answer
    return found.group(1)


def test_manage_and_search_on_a_fixed_namespace(lg_mem: Memory, store: UCMAStore) -> None:
    manage = langmem.create_manage_memory_tool(namespace=("memories", "ana"), store=store)
    search = langmem.create_search_memory_tool(namespace=("memories", "ana"), store=store)

    tea = _created_id(manage.invoke({"content": "Ana drinks green tea in the morning"}))
    bike = _created_id(manage.invoke({"content": "Ana cycles to work"}))
    item = store.get(("memories", "ana"), tea)
    assert item is not None and item.value == {"content": "Ana drinks green tea in the morning"}

    found = json.loads(search.invoke({"query": "what does Ana drink?"}))
    assert found[0]["key"] == tea
    assert {f["key"] for f in found} == {tea, bike}
    assert found[0]["namespace"] == ["memories", "ana"] and found[0]["score"] is not None

    assert manage.invoke({"action": "update", "id": bike, "content": "Ana takes the bus now"}).startswith(
        "updated"
    )
    item = store.get(("memories", "ana"), bike)
    assert item is not None and item.value == {"content": "Ana takes the bus now"}
    assert json.loads(search.invoke({"query": "bus"}))[0]["value"] == {"content": "Ana takes the bus now"}

    assert manage.invoke({"action": "delete", "id": tea}).startswith("Deleted")
    assert store.get(("memories", "ana"), tea) is None
    assert [f["key"] for f in json.loads(search.invoke({"query": "tea"}))] == [bike]


def test_what_langmem_stores_is_the_users_memory(lg_mem: Memory, store: UCMAStore) -> None:
    manage = langmem.create_manage_memory_tool(namespace=("memories", "ana"), store=store)
    manage.invoke({"content": "Ana is allergic to peanuts"})
    other = langmem.create_manage_memory_tool(namespace=("memories", "bo"), store=store)
    other.invoke({"content": "Bo is allergic to cats"})

    recalled = lg_mem.remember("what is Ana allergic to?", user_id="ana")
    assert [r.content for r in recalled] == ['{"content": "Ana is allergic to peanuts"}']
    assert all(r.record.user_id == "ana" for r in recalled)

    assert lg_mem.forget_user("ana") == 1
    assert store.search(("memories", "ana")) == []
    assert len(store.search(("memories",))) == 1


class _State(TypedDict):
    query: str
    answer: str


def test_templated_namespace_inside_a_graph(lg_mem: Memory, store: UCMAStore) -> None:
    """Inside a run, LangMem fills ``{langgraph_user_id}`` from the config; with
    ``store=None`` the tools use the graph's Store."""
    manage = langmem.create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}"))
    search = langmem.create_search_memory_tool(namespace=("memories", "{langgraph_user_id}"))

    def node(state: _State, config: RunnableConfig) -> dict[str, Any]:
        manage.invoke({"content": f"likes {state['query']}"}, config)
        return {"answer": search.invoke({"query": state["query"]}, config)}

    builder = StateGraph(_State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    graph = builder.compile(store=store)

    out = graph.invoke({"query": "jazz"}, {"configurable": {"langgraph_user_id": "carla"}})
    assert json.loads(out["answer"])[0]["value"] == {"content": "likes jazz"}
    assert store.list_namespaces() == [("memories", "carla")]
    assert [r.record.user_id for r in lg_mem.remember("jazz", user_id="carla")] == ["carla"]


async def test_async_tools(store: UCMAStore) -> None:
    manage = langmem.create_manage_memory_tool(namespace=("memories", "dan"), store=store)
    search = langmem.create_search_memory_tool(namespace=("memories", "dan"), store=store)
    key = _created_id(await manage.ainvoke({"content": "Dan prefers short answers"}))
    found = json.loads(
        await search.ainvoke({"query": "answers", "filter": {"content": "Dan prefers short answers"}})
    )
    assert [f["key"] for f in found] == [key]
