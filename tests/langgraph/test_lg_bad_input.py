"""Bad input to the checkpointer and the Store: a clear UCMA error, and nothing stored is lost."""

from __future__ import annotations

import math
import threading
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import GetOp, PutOp, SearchOp
from langgraph.store.base import InvalidNamespaceError as LangGraphNamespaceError

from ucma_core import Memory
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_langchain.langgraph import InvalidNamespaceError, UCMACheckpointer, UCMAStore


def cfg(thread: object, **extra: Any) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": "", "user_id": "ana", **extra}}  # type: ignore[dict-item]


# ---------------------------------------------------------------------- checkpointer
class Blob(MessagesState):
    blob: object


def blob_graph(saver: UCMACheckpointer, value: object) -> Any:
    def node(state: Blob) -> dict[str, Any]:
        return {"messages": [AIMessage("ok")], "blob": value}

    builder = StateGraph(Blob)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return builder.compile(checkpointer=saver)


def test_a_value_the_serializer_refuses(saver: UCMACheckpointer) -> None:
    good = blob_graph(saver, {"fine": [1, 2]})
    good.invoke({"messages": [HumanMessage("first")]}, cfg("t"))
    before = good.get_state(cfg("t"))
    bad = blob_graph(saver, threading.Lock())
    with pytest.raises(InvalidInputError, match="cannot be serialised"):
        bad.invoke({"messages": [HumanMessage("second")]}, cfg("t"))
    after = good.get_state(before.config)
    assert after.values == before.values
    assert [m.text for m in good.get_state(cfg("t")).values["messages"]][:2] == ["first", "ok"]
    good.invoke({"messages": [HumanMessage("third")]}, cfg("t"))
    assert good.get_state(cfg("t")).values["messages"][-1].text == "ok"


def test_put_refuses_before_writing(saver: UCMACheckpointer) -> None:
    stored = saver.put(cfg("t"), {**empty_checkpoint(), "channel_values": {"x": 1}}, {}, {"x": 1})
    stored = {"configurable": {**stored["configurable"], "user_id": "ana"}}
    with pytest.raises(InvalidInputError, match="cannot be serialised"):
        saver.put(stored, {**empty_checkpoint(), "channel_values": {"x": object()}}, {}, {"x": 2})
    with pytest.raises(InvalidInputError, match="cannot be serialised"):
        saver.put_writes(stored, [("ch", lambda: None)], "task")
    assert len(list(saver.list(cfg("t")))) == 1
    latest = saver.get_tuple(cfg("t"))
    assert (
        latest is not None and latest.checkpoint["channel_values"] == {"x": 1} and latest.pending_writes == []
    )


@pytest.mark.parametrize("thread", [5, 5.0, None, b"t", ("t",), ""])
def test_thread_ids_must_be_strings(saver: UCMACheckpointer, thread: object) -> None:
    saver.put(cfg("kept"), empty_checkpoint(), {}, {})
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.get_tuple(cfg(thread))
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.put(cfg(thread), empty_checkpoint(), {}, {})
    with pytest.raises(InvalidInputError, match="thread_id"):
        list(saver.list(cfg(thread)))
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.delete_thread(thread)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.copy_thread("kept", thread)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="thread_id"):
        saver.prune([thread])  # type: ignore[list-item]
    assert saver.get_tuple(cfg("kept")) is not None


async def test_thread_ids_must_be_strings_async(saver: UCMACheckpointer) -> None:
    with pytest.raises(InvalidInputError, match="thread_id"):
        await saver.aget_tuple(cfg(7))
    with pytest.raises(InvalidInputError, match="thread_id"):
        await saver.aput(cfg(7), empty_checkpoint(), {}, {})


def test_graphs_turn_int_thread_ids_into_text(saver: UCMACheckpointer) -> None:
    """LangGraph itself converts a non-str thread id to str before it reaches the checkpointer."""
    graph = blob_graph(saver, 1)
    graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": 42, "user_id": "ana"}})
    assert saver.get_tuple(cfg("42")) is not None


@pytest.mark.parametrize(
    "config",
    [
        None,
        {},
        {"configurable": None},
        {"configurable": {}},
        {"configurable": {"thread_id": "t", "checkpoint_ns": 3}},
    ],
)
def test_malformed_configs(saver: UCMACheckpointer, config: Any) -> None:
    with pytest.raises(InvalidInputError):
        saver.get_tuple(config)


def test_bad_options(saver: UCMACheckpointer, lg_mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="strategy"):
        saver.prune(["t"], strategy="everything")
    with pytest.raises(InvalidInputError, match="limit"):
        list(saver.list(cfg("t"), limit=-1))
    with pytest.raises(InvalidInputError, match="messages_key"):
        UCMACheckpointer(lg_mem, messages_key="")
    with pytest.raises(InvalidInputError, match="role"):
        UCMACheckpointer(lg_mem, roles=("user", "robot"))
    with pytest.raises(InvalidInputError, match="Memory"):
        UCMACheckpointer("folder")  # type: ignore[arg-type]


def test_scope_values_must_be_strings(saver: UCMACheckpointer) -> None:
    with pytest.raises(InvalidInputError, match="user_id"):
        saver.put(cfg("t", user_id=12), empty_checkpoint(), {}, {"messages": 1})
    assert saver.get_tuple(cfg("t")) is None


def test_a_scope_the_memory_refuses_is_refused_before_writing(saver: UCMACheckpointer) -> None:
    with pytest.raises(InvalidInputError, match=r"user_id must be 1\.\.256"):
        saver.put(cfg("t", user_id="u" * 300), empty_checkpoint(), {}, {"messages": 1})
    assert saver.get_tuple(cfg("t")) is None and saver.backlog == 0


def test_a_closed_checkpointer_says_so(lg_mem: Memory) -> None:
    saver = UCMACheckpointer(lg_mem)
    saver.close()
    with pytest.raises(ClosedMemoryError, match="closed"):
        saver.get_tuple(cfg("t"))


# ---------------------------------------------------------------------- store
@pytest.fixture
def filled(store: UCMAStore) -> UCMAStore:
    store.put(("memories", "ana"), "kept", {"text": "already stored"})
    return store


def _intact(store: UCMAStore) -> None:
    assert store.list_namespaces() == [("memories", "ana")]
    item = store.get(("memories", "ana"), "kept")
    assert item is not None and item.value == {"text": "already stored"}


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        ((), "empty"),
        (("",), "empty string"),
        (("memories", ""), "empty string"),
        ((1, "a"), "must be a str"),
        (("memories", None), "must be a str"),
        (("a.b",), "'.'"),
        (("a\x00",), "NUL"),
        ("memories", "tuple of str"),
        (("langgraph", "x"), "reserves"),
    ],
)
def test_bad_namespaces(filled: UCMAStore, namespace: Any, message: str) -> None:
    with pytest.raises(InvalidNamespaceError, match=message) as raised:
        filled.put(namespace, "k", {"v": 1})
    assert isinstance(raised.value, InvalidInputError) and isinstance(raised.value, LangGraphNamespaceError)
    if namespace not in ((), ("langgraph", "x")):
        with pytest.raises(InvalidNamespaceError):
            filled.get(namespace, "k")
        with pytest.raises(InvalidNamespaceError):
            filled.search(namespace)
        with pytest.raises(InvalidNamespaceError):
            filled.delete(namespace, "k")
    _intact(filled)


async def test_bad_namespaces_async(filled: UCMAStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        await filled.aput(("", "x"), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        await filled.alist_namespaces(prefix=(3,))  # type: ignore[arg-type]
    _intact(filled)


@pytest.mark.parametrize(
    "value",
    [
        {"when": datetime(2026, 1, 1, tzinfo=timezone.utc)},
        {"set": {1, 2}},
        {1: "int key"},
        {"tuple": (1, 2)},
        {"nan": math.nan},
        {"inf": math.inf},
        {"obj": object()},
        "just text",
        ["a", "list"],
        None,
    ],
)
def test_values_that_are_not_json(filled: UCMAStore, value: Any) -> None:
    if value is None:
        filled.put(("memories", "ana"), "gone", {"v": 1})
        filled.put(("memories", "ana"), "gone", value)  # None deletes, as in LangGraph
        assert filled.get(("memories", "ana"), "gone") is None
    else:
        with pytest.raises(InvalidInputError, match="Store value"):
            filled.put(("memories", "ana"), "bad", value)
    _intact(filled)


def test_one_bad_op_stores_nothing_from_its_batch(filled: UCMAStore) -> None:
    with pytest.raises(InvalidInputError):
        filled.batch(
            [
                PutOp(("memories", "ana"), "new", {"v": 1}),
                PutOp(("memories", "ana"), "kept", {"text": "overwritten"}),
                PutOp(("memories", "ana"), "bad", {"v": {1, 2}}),  # type: ignore[dict-item]
            ]
        )
    _intact(filled)
    assert filled.get(("memories", "ana"), "new") is None


@pytest.mark.parametrize(
    "op",
    [
        SearchOp(("memories",), filter={"v": {"$regex": "a"}}),
        SearchOp(("memories",), filter="v=1"),  # type: ignore[arg-type]
        SearchOp(("memories",), limit=-1),
        SearchOp(("memories",), offset=-5),
        SearchOp(("memories",), query=3),  # type: ignore[arg-type]
        GetOp(("memories", "ana"), 5),  # type: ignore[arg-type]
        PutOp(("memories", "ana"), "k", {"v": 1}, ttl=-1),
        PutOp(("memories", "ana"), "k", {"v": 1}, index="text"),  # type: ignore[arg-type]
    ],
)
def test_bad_operations(filled: UCMAStore, op: Any) -> None:
    with pytest.raises(InvalidInputError):
        filled.batch([op])
    _intact(filled)


def test_a_closed_memory_says_so(lg_mem: Memory, filled: UCMAStore) -> None:
    lg_mem.close()
    with pytest.raises(ClosedMemoryError):
        filled.get(("memories", "ana"), "kept")


def test_a_namespace_label_too_long_for_a_user_id(filled: UCMAStore) -> None:
    with pytest.raises(InvalidInputError, match="namespace rule"):
        filled.batch(
            [PutOp(("memories", "ok"), "k", {"v": 1}), PutOp(("memories", "x" * 300), "k", {"v": 1})]
        )
    assert filled.get(("memories", "ok"), "k") is None
    _intact(filled)


def test_a_compiled_graph_sees_the_checkpointer_closed(lg_mem: Memory) -> None:
    saver = UCMACheckpointer(lg_mem)
    graph = blob_graph(saver, 1)
    graph.invoke({"messages": [HumanMessage("before")]}, cfg("t"))
    saver.close()
    with pytest.raises(ClosedMemoryError, match="checkpointer"):
        graph.invoke({"messages": [HumanMessage("after")]}, cfg("t"))
