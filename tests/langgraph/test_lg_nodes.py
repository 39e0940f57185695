"""recall_node and consolidation_node in graphs: where they find the memory, what they add to
the state, and how long they may hold up a turn."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ucma_core import Memory
from ucma_core.errors import ConfigurationError, InvalidInputError
from ucma_langchain.langgraph import (
    ConsolidationNode,
    RecallNode,
    UCMACheckpointer,
    UCMAStore,
    consolidation_node,
    recall_node,
)
from ucma_langchain.langgraph.nodes import RECALL_MESSAGE_NAME


class State(MessagesState):
    memories: str


def graph_with(
    recall: RecallNode,
    *,
    consolidate: ConsolidationNode | None = None,
    seen: list[list[BaseMessage]] | None = None,
    **compile_kwargs: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    def model(state: State) -> dict[str, Any]:
        if seen is not None:
            seen.append(list(state["messages"]))
        question = next(m for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
        return {"messages": [AIMessage(f"answer to: {question.text}")]}

    builder = StateGraph(State)
    builder.add_node("recall", recall)
    builder.add_node("model", model)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    if consolidate is not None:
        builder.add_node("consolidate", consolidate, defer=True)
        builder.add_edge("model", "consolidate")
        builder.add_edge("consolidate", END)
    else:
        builder.add_edge("model", END)
    return builder.compile(**compile_kwargs)


def cfg(thread: str, user: str = "ana") -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def seed(mem: Memory) -> None:
    mem.observe("My cat is called Miso", user_id="ana", session_id="old", keep=True)
    mem.observe("Bo's dog is called Rex", user_id="bo", session_id="old-bo", keep=True)


# ---------------------------------------------------------------------- recall_node
def test_recall_adds_a_system_message_before_the_model(lg_mem: Memory, words: Any) -> None:
    seed(lg_mem)
    seen: list[list[BaseMessage]] = []
    graph = graph_with(recall_node(lg_mem, token_counter=words), seen=seen)
    graph.invoke({"messages": [HumanMessage("what is my cat called?")]}, cfg("t1"))
    prompt = seen[-1]
    assert isinstance(prompt[-1], SystemMessage) and prompt[-1].name == RECALL_MESSAGE_NAME
    assert "My cat is called Miso" in prompt[-1].text and "Rex" not in prompt[-1].text
    assert prompt[-1].text.startswith("Relevant memories:")


def test_recall_message_is_replaced_each_turn(lg_mem: Memory, saver: UCMACheckpointer, words: Any) -> None:
    seed(lg_mem)
    seen: list[list[BaseMessage]] = []
    graph = graph_with(recall_node(lg_mem, token_counter=words), seen=seen, checkpointer=saver)
    graph.invoke({"messages": [HumanMessage("what is my cat called?")]}, cfg("t1"))
    graph.invoke({"messages": [HumanMessage("and what did I ask before?")]}, cfg("t1"))
    recall_messages = [m for m in seen[-1] if m.name == RECALL_MESSAGE_NAME]
    assert len(recall_messages) == 1 and seen[-1][-1] is recall_messages[0]
    assert [m.text for m in seen[-1][:-1]] == [
        "what is my cat called?",
        "answer to: what is my cat called?",
        "and what did I ask before?",
    ]
    state = graph.get_state(cfg("t1")).values["messages"]
    assert sum(m.name == RECALL_MESSAGE_NAME for m in state) == 1
    saver.flush()
    assert all("Relevant memories" not in e.content for e in lg_mem.history(session_id="t1", user_id="ana"))


def test_recall_into_state_within_the_budget(lg_mem: Memory, words: Any) -> None:
    for n in range(30):
        lg_mem.observe(f"Fact number {n} about the garden and its roses", user_id="ana", keep=True)
    graph = graph_with(recall_node(lg_mem, output="state", k=20, max_tokens=40, token_counter=words))
    out = graph.invoke({"messages": [HumanMessage("tell me about the garden roses")]}, cfg("t"))
    assert out["memories"].startswith("Relevant memories:")
    assert words.count(out["memories"]) <= 40
    assert not any(isinstance(m, SystemMessage) for m in out["messages"])


def test_recall_reads_every_thread_of_the_user_only(lg_mem: Memory, words: Any) -> None:
    seed(lg_mem)
    node = recall_node(lg_mem, output="state", token_counter=words)
    graph = graph_with(node)
    ana = graph.invoke({"messages": [HumanMessage("what is the pet called?")]}, cfg("new", "ana"))
    bo = graph.invoke({"messages": [HumanMessage("what is the pet called?")]}, cfg("new", "bo"))
    assert "Miso" in ana["memories"] and "Rex" not in ana["memories"]
    assert "Rex" in bo["memories"] and "Miso" not in bo["memories"]


def test_recall_finds_the_memory_through_store_context_or_config(lg_mem: Memory, words: Any) -> None:
    seed(lg_mem)
    node = recall_node(output="state", token_counter=words)
    question = {"messages": [HumanMessage("what is my cat called?")]}
    via_store = graph_with(node, store=UCMAStore(lg_mem)).invoke(question, cfg("t"))
    assert "Miso" in via_store["memories"]
    via_context = graph_with(node).invoke(question, cfg("t"), context={"memory": lg_mem})
    assert "Miso" in via_context["memories"]
    via_config = graph_with(node).invoke(question, {"configurable": {"user_id": "ana", "memory": lg_mem}})
    assert "Miso" in via_config["memories"]
    with pytest.raises(ConfigurationError, match="no UCMA memory"):
        graph_with(node).invoke(question, cfg("t"))


def test_recall_uses_the_user_from_the_context(lg_mem: Memory, words: Any) -> None:
    seed(lg_mem)
    graph = graph_with(recall_node(lg_mem, output="state", token_counter=words))
    out = graph.invoke(
        {"messages": [HumanMessage("what is the dog called?")]},
        {"configurable": {"thread_id": "t"}},
        context={"user_id": "bo"},
    )
    assert "Rex" in out["memories"]


def test_store_items_are_recalled_for_their_user(lg_mem: Memory, words: Any) -> None:
    store = UCMAStore(lg_mem, index={"fields": ["text"]})
    store.put(("memories", "ana"), "pref", {"text": "Ana prefers answers in Portuguese"})
    graph = graph_with(recall_node(output="state", token_counter=words), store=store)
    out = graph.invoke({"messages": [HumanMessage("which language do I prefer?")]}, cfg("t"))
    assert "Ana prefers answers in Portuguese" in out["memories"]


def test_no_user_message_no_recall(lg_mem: Memory, words: Any) -> None:
    node = recall_node(lg_mem, token_counter=words)
    assert node({"messages": [AIMessage("hello")]}, cfg("t")) == {}
    assert node({"messages": []}, cfg("t")) == {}


def test_recall_options_are_checked(lg_mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="output"):
        recall_node(lg_mem, output="prompt")
    with pytest.raises(InvalidInputError, match="k must be"):
        recall_node(lg_mem, k=0)
    with pytest.raises(InvalidInputError, match="max_tokens"):
        recall_node(lg_mem, max_tokens=0)


# ---------------------------------------------------------------------- consolidation_node
def test_consolidation_node_observes_the_turn(lg_mem: Memory, words: Any) -> None:
    graph = graph_with(recall_node(lg_mem, token_counter=words), consolidate=consolidation_node(lg_mem))
    graph.invoke({"messages": [HumanMessage("I adopted a parrot")]}, cfg("t"))
    assert [(e.source, e.content) for e in lg_mem.history(session_id="t", user_id="ana")] == [
        ("user", "I adopted a parrot"),
        ("assistant", "answer to: I adopted a parrot"),
    ]


def test_node_and_checkpointer_store_each_message_once(
    lg_mem: Memory, saver: UCMACheckpointer, words: Any
) -> None:
    graph = graph_with(
        recall_node(lg_mem, token_counter=words), consolidate=consolidation_node(lg_mem), checkpointer=saver
    )
    for text in ("first", "second"):
        graph.invoke({"messages": [HumanMessage(text)]}, cfg("t"))
    saver.flush()
    assert [e.content for e in lg_mem.history(session_id="t", user_id="ana")] == [
        "first",
        "answer to: first",
        "second",
        "answer to: second",
    ]


def test_consolidation_runs_every_n_turns(lg_mem: Memory, words: Any) -> None:
    node = consolidation_node(lg_mem, consolidate_every=2, timeout=30)
    graph = graph_with(recall_node(lg_mem, token_counter=words), consolidate=node)
    graph.invoke({"messages": [HumanMessage("turn one")]}, cfg("t"))
    assert node.last_report is None
    graph.invoke({"messages": [HumanMessage("turn two")]}, cfg("t"))
    assert node.last_report is not None and node.last_error is None
    node.close()


def test_a_long_consolidation_never_holds_the_turn_past_the_bound(
    lg_mem: Memory, words: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, finished = threading.Event(), threading.Event()

    def slow(*, stop: threading.Event | None = None, **_: Any) -> str:
        started.set()
        assert stop is not None
        stop.wait(10)
        finished.set()
        return "stopped"

    monkeypatch.setattr(lg_mem, "consolidate", slow)
    node = consolidation_node(lg_mem, consolidate_every=1, timeout=0.2)
    graph = graph_with(recall_node(lg_mem, token_counter=words), consolidate=node)
    began = time.perf_counter()
    graph.invoke({"messages": [HumanMessage("go")]}, cfg("t"))
    assert time.perf_counter() - began < 5.0  # the cycle itself runs 10 s
    assert started.is_set() and not finished.is_set()
    graph.invoke({"messages": [HumanMessage("again")]}, cfg("t"))  # one cycle at a time
    node.close(timeout=5)
    assert finished.is_set() and node.last_report == "stopped"


def test_consolidation_is_left_to_the_memorys_own_thread(lg_mem: Memory, words: Any) -> None:
    lg_mem.start_consolidation(interval_seconds=3600)
    try:
        node = consolidation_node(lg_mem, consolidate_every=1)
        graph_with(recall_node(lg_mem, token_counter=words), consolidate=node).invoke(
            {"messages": [HumanMessage("hi")]}, cfg("t")
        )
        assert node.last_report is None
    finally:
        lg_mem.stop_consolidation()


def test_consolidation_options_are_checked(lg_mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="consolidate_every"):
        consolidation_node(lg_mem, consolidate_every=0)
    with pytest.raises(InvalidInputError, match="timeout"):
        consolidation_node(lg_mem, timeout=-1)


async def test_nodes_in_an_async_graph(lg_mem: Memory, saver: UCMACheckpointer, words: Any) -> None:
    seed(lg_mem)
    graph = graph_with(
        recall_node(lg_mem, output="state", token_counter=words),
        consolidate=consolidation_node(lg_mem),
        checkpointer=saver,
    )
    out = await graph.ainvoke({"messages": [HumanMessage("what is my cat called?")]}, cfg("a1"))
    assert "Miso" in out["memories"]
    await saver.aflush()
    assert len(lg_mem.history(session_id="a1", user_id="ana")) == 2
