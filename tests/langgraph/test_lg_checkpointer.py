"""UCMACheckpointer in real graphs: threads persist, and their messages become memories once each."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from ucma_core import ANY, Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ClosedMemoryError, UserNotStatedError
from ucma_langchain.langgraph import ScopeKeys, UCMACheckpointer
from ucma_langchain.langgraph.checkpointer import CHECKPOINT_FILE


def echo(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"echo: {state['messages'][-1].text}")]}


def echo_graph(saver: UCMACheckpointer) -> CompiledStateGraph[Any, Any, Any, Any]:
    builder = StateGraph(MessagesState)
    builder.add_node("bot", echo)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", END)
    return builder.compile(checkpointer=saver)


def cfg(thread: str, **extra: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, **extra}}


def turns(mem: Memory, thread: str, user: str | None = "ana") -> list[tuple[str, str]]:
    return [(e.source, e.content) for e in mem.history(session_id=thread, user_id=user)]


def test_thread_state_and_memories(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    for text in ("I moved to Lisbon in May", "I like green tea"):
        graph.invoke({"messages": [HumanMessage(text)]}, cfg("t1", user_id="ana"))
    saver.flush()
    assert [m.text for m in graph.get_state(cfg("t1")).values["messages"]] == [
        "I moved to Lisbon in May",
        "echo: I moved to Lisbon in May",
        "I like green tea",
        "echo: I like green tea",
    ]
    assert turns(lg_mem, "t1") == [
        ("user", "I moved to Lisbon in May"),
        ("assistant", "echo: I moved to Lisbon in May"),
        ("user", "I like green tea"),
        ("assistant", "echo: I like green tea"),
    ]
    [hit, *_] = lg_mem.remember("where did I move?", user_id="ana")
    assert hit.content == "I moved to Lisbon in May" and hit.record.session_id == "t1"
    assert saver.path == lg_mem.path / CHECKPOINT_FILE and saver.path.exists()


def test_each_message_is_observed_once_even_by_a_new_checkpointer(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem) as first:
        graph = echo_graph(first)
        graph.invoke({"messages": [HumanMessage("one")]}, cfg("t", user_id="ana"))
        graph.invoke({"messages": [HumanMessage("two")]}, cfg("t", user_id="ana"))
    with UCMACheckpointer(lg_mem) as second:  # a new process would start like this: nothing seen yet
        graph = echo_graph(second)
        graph.invoke({"messages": [HumanMessage("three")]}, cfg("t", user_id="ana"))
        second.flush()
    assert [c for _, c in turns(lg_mem, "t")] == [
        "one",
        "echo: one",
        "two",
        "echo: two",
        "three",
        "echo: three",
    ]
    assert len(lg_mem.list_memories()) == 6


def test_scope_keys_map_the_run_onto_ucma(lg_mem: Memory) -> None:
    keys = ScopeKeys(user_id="tenant_user", agent_id="assistant_id", session_id="conversation")
    with UCMACheckpointer(lg_mem, scope_keys=keys) as saver:
        graph = echo_graph(saver)
        graph.invoke(
            {"messages": [HumanMessage("hello")]},
            cfg("t9", tenant_user="zoe", assistant_id="helper", conversation="c1"),
        )
        saver.flush()
    [user_turn, _] = lg_mem.history(session_id="c1", user_id="zoe")
    assert (user_turn.user_id, user_turn.agent_id, user_turn.session_id) == ("zoe", "helper", "c1")
    assert user_turn.participants == ("zoe",)


def test_a_run_without_a_user_is_refused_before_anything_is_written(
    lg_mem: Memory, saver: UCMACheckpointer
) -> None:
    with pytest.raises(UserNotStatedError, match=r"UCMACheckpointer\(memory, user_id=None\)"):
        echo_graph(saver).invoke({"messages": [HumanMessage("anonymous")]}, cfg("anon"))
    assert saver.get_tuple(cfg("anon")) is None
    assert lg_mem.list_memories(user_id=ANY) == []


def test_without_a_user_stated_as_none_the_turns_have_no_user(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, user_id=None) as saver:
        echo_graph(saver).invoke({"messages": [HumanMessage("anonymous")]}, cfg("anon"))
        saver.flush()
    assert turns(lg_mem, "anon", user=None) == [("user", "anonymous"), ("assistant", "echo: anonymous")]


def test_a_fixed_user_applies_to_runs_without_one_and_refuses_another(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, user_id="ana") as saver:
        graph = echo_graph(saver)
        graph.invoke({"messages": [HumanMessage("mine")]}, cfg("t"))
        with pytest.raises(UserNotStatedError, match="contradicts"):
            graph.invoke({"messages": [HumanMessage("theirs")]}, cfg("t", user_id="ben"))
        saver.flush()
    assert turns(lg_mem, "t") == [("user", "mine"), ("assistant", "echo: mine")]


def tool_graph(saver: UCMACheckpointer) -> CompiledStateGraph[Any, Any, Any, Any]:
    def bot(state: MessagesState) -> dict[str, Any]:
        return {
            "messages": [
                SystemMessage("You are terse."),
                AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "x"}, "id": "c1"}]),
                ToolMessage("looked up: x", tool_call_id="c1", name="lookup"),
                AIMessage("the answer is x"),
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("bot", bot)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", END)
    return builder.compile(checkpointer=saver)


def test_roles_default_to_user_and_assistant_text(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    tool_graph(saver).invoke({"messages": [HumanMessage("what is x?")]}, cfg("t", user_id="ana"))
    saver.flush()
    assert turns(lg_mem, "t") == [("user", "what is x?"), ("assistant", "the answer is x")]


def test_roles_can_include_tools(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, roles=("user", "assistant", "tool")) as saver:
        tool_graph(saver).invoke({"messages": [HumanMessage("what is x?")]}, cfg("t", user_id="ana"))
        saver.flush()
    assert turns(lg_mem, "t") == [  # the call and its result, as every adapter stores them
        ("user", "what is x?"),
        ("assistant", 'Called tool lookup with {"q": "x"}'),
        ("tool", "looked up: x"),
        ("assistant", "the answer is x"),
    ]


def test_other_channels_and_no_mirroring(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, messages_key=None) as saver:
        echo_graph(saver).invoke({"messages": [HumanMessage("not remembered")]}, cfg("t", user_id="ana"))
        saver.flush()
        assert saver.get_tuple(cfg("t")) is not None
    assert lg_mem.list_memories() == []
    with UCMACheckpointer(lg_mem, messages_key="chat") as saver:
        stored = saver.put(
            cfg("t2", user_id="ana")
            | {"configurable": {"thread_id": "t2", "checkpoint_ns": "", "user_id": "ana"}},
            {**empty_checkpoint(), "channel_values": {"chat": [HumanMessage("in chat", id="m1")]}},
            {},
            {"chat": 1},
        )
        saver.flush()
        assert stored["configurable"]["thread_id"] == "t2"
    assert turns(lg_mem, "t2") == [("user", "in chat")]


def test_messages_without_ids_are_observed_once(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, background=False) as saver:
        config: RunnableConfig = {"configurable": {"thread_id": "raw", "checkpoint_ns": "", "user_id": "ana"}}
        history = [HumanMessage("no id here"), AIMessage("nor here")]
        for _ in range(3):
            checkpoint = {**empty_checkpoint(), "channel_values": {"messages": history}}
            config = saver.put(config, checkpoint, {}, {"messages": 1}) | {
                "configurable": {**config["configurable"]}
            }
    assert turns(lg_mem, "raw") == [("user", "no id here"), ("assistant", "nor here")]


def test_inline_mode_observes_inside_put(lg_mem: Memory) -> None:
    with UCMACheckpointer(lg_mem, background=False) as saver:
        echo_graph(saver).invoke({"messages": [HumanMessage("now")]}, cfg("t", user_id="ana"))
        assert saver.backlog == 0
        assert turns(lg_mem, "t") == [("user", "now"), ("assistant", "echo: now")]


def test_delete_thread_keeps_memories_unless_asked(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    for thread in ("t1", "t2"):
        graph.invoke({"messages": [HumanMessage(f"said in {thread}")]}, cfg(thread, user_id="ana"))
    saver.flush()
    saver.delete_thread("t1")
    assert saver.get_tuple(cfg("t1")) is None
    assert len(turns(lg_mem, "t1")) == 2
    saver.delete_thread("t2", forget_memories=True)
    assert saver.get_tuple(cfg("t2")) is None
    assert turns(lg_mem, "t2") == []
    assert len(turns(lg_mem, "t1")) == 2
    graph.invoke({"messages": [HumanMessage("said in t2 again")]}, cfg("t2", user_id="ana"))
    saver.flush()
    assert [c for _, c in turns(lg_mem, "t2")] == ["said in t2 again", "echo: said in t2 again"]


async def test_async_delete_with_memories(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    await graph.ainvoke({"messages": [HumanMessage("async turn")]}, cfg("ta", user_id="ana"))
    await saver.aflush()
    assert len(turns(lg_mem, "ta")) == 2
    await saver.adelete_thread("ta", forget_memories=True)
    assert turns(lg_mem, "ta") == [] and await saver.aget_tuple(cfg("ta")) is None


def test_copy_thread_continues_without_duplicating_memories(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("original")]}, cfg("src", user_id="ana"))
    saver.copy_thread("src", "dst")
    graph.invoke({"messages": [HumanMessage("continued")]}, cfg("dst", user_id="ana"))
    saver.flush()
    assert [m.text for m in graph.get_state(cfg("dst")).values["messages"]] == [
        "original",
        "echo: original",
        "continued",
        "echo: continued",
    ]
    assert [c for _, c in turns(lg_mem, "src")] == ["original", "echo: original"]
    assert [c for _, c in turns(lg_mem, "dst")] == ["continued", "echo: continued"]


def test_interrupt_and_resume(lg_mem: Memory, saver: UCMACheckpointer) -> None:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("name?")
        return {"messages": [AIMessage(f"hello {answer}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"messages": [HumanMessage("hi")]}, cfg("hitl", user_id="ana"))
    assert graph.get_state(cfg("hitl")).next == ("ask",)
    graph.invoke(Command(resume="Ana"), cfg("hitl", user_id="ana"))
    saver.flush()
    assert graph.get_state(cfg("hitl")).values["messages"][-1].text == "hello Ana"
    assert turns(lg_mem, "hitl") == [("user", "hi"), ("assistant", "hello Ana")]


def test_history_and_time_travel(saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    for text in ("a", "b"):
        graph.invoke({"messages": [HumanMessage(text)]}, cfg("tt", user_id="ana"))
    states = list(graph.get_state_history(cfg("tt")))
    assert len(states) == 6
    first_turn = next(s for s in states if len(s.values.get("messages", [])) == 2)
    assert [m.text for m in graph.get_state(first_turn.config).values["messages"]] == ["a", "echo: a"]


def test_closing_the_memory_stores_the_queue_and_closes_the_checkpointer(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m", embedder=HashingEmbedder())
    saver = UCMACheckpointer(mem, linger=30.0)
    echo_graph(saver).invoke({"messages": [HumanMessage("queued")]}, cfg("t", user_id="ana"))
    mem.close()
    with pytest.raises(ClosedMemoryError):
        saver.get_tuple(cfg("t"))
    saver.close()  # idempotent
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as again:
        assert turns(again, "t") == [("user", "queued"), ("assistant", "echo: queued")]


def test_custom_path_and_close(lg_mem: Memory, tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.sqlite3"
    saver = UCMACheckpointer(lg_mem, path=path)
    echo_graph(saver).invoke({"messages": [HumanMessage("x")]}, cfg("t", user_id="ana"))
    saver.close()
    saver.close()
    assert path.exists()
    with UCMACheckpointer(lg_mem, path=path) as again:
        assert again.get_tuple(cfg("t")) is not None


def test_messages_of_a_linger_window_go_in_one_write(lg_mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[int] = []
    observe_many = lg_mem.observe_many

    def counting(items: Any, **kwargs: Any) -> Any:
        items = list(items)
        writes.append(len(items))
        return observe_many(items, **kwargs)

    monkeypatch.setattr(lg_mem, "observe_many", counting)
    with UCMACheckpointer(lg_mem, linger=30.0) as saver:
        graph = echo_graph(saver)
        for n in range(3):
            graph.invoke({"messages": [HumanMessage(f"message {n}")]}, cfg(f"thread-{n}", user_id=f"u{n}"))
        began = time.perf_counter()
        saver.flush()  # cuts the 30 s wait short
        assert time.perf_counter() - began < 5
    assert writes == [2, 2, 2]  # one write per scope (isolation), all after the one wait
    assert [len(lg_mem.history(session_id=f"thread-{n}", user_id=f"u{n}")) for n in range(3)] == [2, 2, 2]


async def test_delta_channel_history_is_langgraphs(saver: UCMACheckpointer) -> None:
    graph = echo_graph(saver)
    graph.invoke({"messages": [HumanMessage("one")]}, cfg("d", user_id="ana"))
    graph.invoke({"messages": [HumanMessage("two")]}, cfg("d", user_id="ana"))
    latest = saver.get_tuple(cfg("d"))
    assert latest is not None
    history = saver.get_delta_channel_history(config=latest.config, channels=["messages"])
    assert set(history) == {"messages"} and "writes" in history["messages"]
    assert await saver.aget_delta_channel_history(config=latest.config, channels=["messages"]) == history
