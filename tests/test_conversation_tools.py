"""The framework-neutral memory tools: schemas, argument checks, scope binding."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ucma_core import ANY, Memory, MemoryType
from ucma_core.conversation import ChatTurn, ToolSpec, memory_tools, observe_turns
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError

NAMES = ["recall_memory", "save_memory", "forget_memory", "facts_about"]


def _tools(mem: Memory, **scope: Any) -> dict[str, ToolSpec]:
    return {t.name: t for t in memory_tools(mem, **scope)}


def test_tool_descriptions_and_schemas(mem: Memory) -> None:
    tools = memory_tools(mem, user_id="ana")
    assert [t.name for t in tools] == NAMES
    for tool in tools:
        assert isinstance(tool, ToolSpec)
        assert len(tool.description) > 40
        schema = tool.parameters
        json.dumps(schema)  # JSON-able
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        for prop in schema["properties"].values():
            assert prop["type"] in ("string", "array") and prop["description"]
        assert tool.func.__name__ == tool.afunc.__name__ == tool.name
    recall = tools[0].parameters
    assert recall["required"] == ["query"]
    assert recall["properties"]["memory_types"]["items"]["enum"] == [t.value for t in MemoryType]
    assert tools[1].parameters["required"] == []


def test_save_recall_forget_a_memory(mem: Memory) -> None:
    tools = _tools(mem, user_id="ana", session_id="s1")
    saved = tools["save_memory"].func(content="Ana's cat is called Miso.")
    assert saved["memory_type"] == "episodic"
    record = mem.get(saved["id"])
    assert record is not None
    assert (record.user_id, record.session_id, record.source) == ("ana", "s1", "assistant")
    assert record.metadata == {"tool": "save_memory"}
    hits = tools["recall_memory"].func(query="what is the cat called")
    assert hits[0] == {
        "id": saved["id"],
        "content": "Ana's cat is called Miso.",
        "memory_type": "episodic",
        "timestamp_iso": hits[0]["timestamp_iso"],
        "score": hits[0]["score"],
    }
    assert hits[0]["timestamp_iso"].startswith("2025-06-15T")
    json.dumps(hits)
    assert tools["forget_memory"].func(memory_id=saved["id"]) == {"forgotten": True}
    assert mem.get(saved["id"]) is None
    assert tools["forget_memory"].func(memory_id=saved["id"]) == {"forgotten": False}


def test_save_a_fact_and_list_facts(mem: Memory) -> None:
    tools = _tools(mem, user_id="ana")
    saved = tools["save_memory"].func(subject="Ana", predicate="lives in", object="Lisbon")
    assert saved["memory_type"] == "semantic"
    facts = tools["facts_about"].func(entity="Lisbon")
    assert facts == [
        {
            "id": saved["id"],
            "subject": "Ana",
            "predicate": "lives in",
            "object": "Lisbon",
            "confidence": facts[0]["confidence"],
        }
    ]
    assert _tools(mem, user_id="ben")["facts_about"].func(entity="Lisbon") == []
    recalled = tools["recall_memory"].func(query="Lisbon", memory_types=["semantic"])
    assert [h["id"] for h in recalled] == [saved["id"]]
    assert tools["recall_memory"].func(query="Lisbon", memory_types="episodic") == []


def test_recall_respects_k_and_time_phrase(mem: Memory, clock: Any) -> None:
    observe_turns(mem, [ChatTurn("user", f"I went running on day {n}.") for n in range(8)], user_id="ana")
    clock.advance(days=10)
    observe_turns(mem, [ChatTurn("user", "I went running in the park.")], user_id="ana")
    tools = _tools(mem, user_id="ana")
    assert len(tools["recall_memory"].func(query="running")) == 5
    assert len(memory_tools(mem, user_id="ana", k=2)[0].func(query="running")) == 2
    today = tools["recall_memory"].func(query="running", time_phrase="today")
    assert today[0]["content"] == "I went running in the park."  # the time is a signal of the ranking
    with pytest.raises(InvalidInputError, match="cannot read the time_phrase 'whenever'"):
        tools["recall_memory"].func(query="running", time_phrase="whenever")


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("recall_memory", {}, "recall_memory needs the argument 'query'"),
        ("recall_memory", {"query": "  "}, "query must be a non-empty string"),
        ("recall_memory", {"query": 3}, "query must be a non-empty string, got int"),
        ("recall_memory", {"query": "x", "user_id": "ben"}, "unknown argument.*user_id"),
        ("recall_memory", {"query": "x", "memory_types": ["facts"]}, "unknown memory_types 'facts'"),
        ("recall_memory", {"query": "x", "memory_types": [1]}, "memory_types must be a list of strings"),
        ("recall_memory", {"query": "x", "time_phrase": 7}, "time_phrase must be a non-empty string"),
        ("save_memory", {}, "save_memory needs content .* or all of subject, predicate and object"),
        ("save_memory", {"subject": "Ana", "object": "Lisbon"}, "missing: predicate"),
        (
            "save_memory",
            {"content": "x", "subject": "Ana", "predicate": "p", "object": "o"},
            "either content or subject/predicate/object, not both",
        ),
        ("save_memory", {"content": "x", "session_id": "other"}, "unknown argument.*session_id"),
        ("forget_memory", {}, "forget_memory needs the argument 'memory_id'"),
        ("forget_memory", {"memory_id": ["a"]}, "memory_id must be a non-empty string"),
        ("facts_about", {"entity": ""}, "entity must be a non-empty string"),
    ],
)
def test_bad_model_arguments(mem: Memory, tool: str, arguments: dict[str, Any], message: str) -> None:
    spec = _tools(mem, user_id="ana")[tool]
    with pytest.raises(InvalidInputError, match=message):
        spec.func(**arguments)
    assert mem.stats()["memories"] == 0


async def test_bad_model_arguments_async(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="unknown argument"):
        await _tools(mem, user_id="ana")["recall_memory"].afunc(query="x", user_id=ANY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be an int in 1..100"),
        ({"k": True}, "k must be an int in 1..100"),
        ({"user_id": ANY}, "user_id=ANY is not allowed"),
        ({"user_id": 3}, "user_id must be a str or None"),
    ],
)
def test_bad_tool_construction(mem: Memory, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        memory_tools(mem, **kwargs)


def test_tools_from_a_bound_view(mem: Memory) -> None:
    view = mem.scope(user_id="ana")
    saved = memory_tools(view)[1].func(content="Ana plays the cello.")
    assert mem.get(saved["id"]).user_id == "ana"  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError, match="contradicts the view's user_id='ana'"):
        memory_tools(view, user_id="ben")
    # tools of a later session save there and still recall the earlier sessions
    later = _tools(mem, user_id="ana", session_id="s2")
    assert [h["id"] for h in later["recall_memory"].func(query="cello")] == [saved["id"]]
    again = memory_tools(view, session_id="s2")[1].func(content="Ana also plays piano.")
    assert mem.get(again["id"]).session_id == "s2"  # type: ignore[union-attr]


async def test_async_tools_match_sync(mem: Memory) -> None:
    tools = _tools(mem, user_id="ana")
    a = await tools["save_memory"].afunc(content="Ana's sister is Rita.")
    f = await tools["save_memory"].afunc(subject="Rita", predicate="is sister of", object="Ana")
    sync_hits = tools["recall_memory"].func(query="Ana's sister")
    async_hits = await tools["recall_memory"].afunc(query="Ana's sister")
    assert [h["id"] for h in sync_hits] == [h["id"] for h in async_hits]
    assert await tools["facts_about"].afunc(entity="Rita") == tools["facts_about"].func(entity="Rita")
    assert await tools["forget_memory"].afunc(memory_id=a["id"]) == {"forgotten": True}
    assert await tools["forget_memory"].afunc(memory_id=f["id"]) == {"forgotten": True}
    assert mem.stats()["memories"] == 0


USERS = st.lists(st.sampled_from(["ana", "ben", "carla", "dev", "eve"]), min_size=2, max_size=4, unique=True)
QUERIES = st.sampled_from(["cat", "where do I live", "secret", "what did I say yesterday", "Lisbon", "tea"])


@settings(max_examples=15, deadline=None)
@given(users=USERS, queries=st.lists(QUERIES, min_size=1, max_size=3), data=st.data())
def test_tools_bound_to_one_user_never_touch_another_users_memories(
    users: list[str], queries: list[str], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp, Memory(Path(tmp), embedder=HashingEmbedder()) as mem:
        owned: dict[str, set[str]] = {}
        for user in users:
            tools = _tools(mem, user_id=user)
            ids = {
                tools["save_memory"].func(content=f"{user}'s secret: my cat lives in Lisbon and drinks tea")[
                    "id"
                ],
                tools["save_memory"].func(subject=user, predicate="lives in", object="Lisbon")["id"],
            }
            ids |= set(filter(None, observe_turns(mem, [ChatTurn("user", "I love tea, cat")], user_id=user)))
            owned[user] = ids
        me = data.draw(st.sampled_from(users))
        mine = _tools(mem, user_id=me)
        others = set().union(*(ids for user, ids in owned.items() if user != me))
        for query in queries:
            recalled = {h["id"] for h in mine["recall_memory"].func(query=query)}
            assert recalled <= owned[me]
        for user in users:
            assert {f["id"] for f in mine["facts_about"].func(entity="Lisbon")} <= owned[me]
            assert mine["facts_about"].func(entity=user) == [] or user == me
        for memory_id in sorted(others):
            assert mine["forget_memory"].func(memory_id=memory_id) == {"forgotten": False}
            assert mem.get(memory_id) is not None
