"""No poison through the checkpointer: a thread that received a pasted log, a NUL and a
lone surrogate keeps mirroring, and other threads written in the same batch are stored."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from ucma_core import Memory
from ucma_core.conversation import ChatTurn
from ucma_langchain.langgraph import UCMACheckpointer

LOG = "\n".join(f"2026-11-26 10:{n // 60:02d}:{n % 60:02d} worker-{n % 7} retry {n}" for n in range(4000))


def echo(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"echo: {state['messages'][-1].text[:40]}")]}


def cfg(thread: str, user: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def said(mem: Memory, thread: str, user: str) -> list[tuple[str, str]]:
    records = mem.history(session_id=thread, user_id=user)
    return [(t.role, t.text) for t in ChatTurn.from_records(records)]


def test_a_refused_message_never_stops_a_thread_or_its_batch(lg_mem: Memory) -> None:
    assert len(LOG) > 150_000
    # a long linger puts every checkpoint of both threads into one write of the mirror
    with UCMACheckpointer(lg_mem, linger=30.0) as saver:
        builder = StateGraph(MessagesState)
        builder.add_node("bot", echo)
        builder.add_edge(START, "bot")
        builder.add_edge("bot", END)
        graph = builder.compile(checkpointer=saver)
        for text in (LOG, "a\x00b", "half \ud800 a pair", "I drink green tea."):
            graph.invoke({"messages": [HumanMessage(text)]}, cfg("ana-thread", "ana"))
            graph.invoke({"messages": [HumanMessage(f"ben says {len(text)}")]}, cfg("ben-thread", "ben"))
        assert saver.flush(timeout=120)

    ana = said(lg_mem, "ana-thread", "ana")
    assert [role for role, _ in ana] == ["user", "assistant"] * 4
    assert ana[0][1].replace(" ", "").replace("\n", "") == LOG.replace(" ", "").replace("\n", "")
    assert ana[2][1] == "a b"
    assert ana[4][1] == "half \ufffd a pair"
    assert ana[6][1] == "I drink green tea."
    ben = said(lg_mem, "ben-thread", "ben")
    assert [text for role, text in ben if role == "user"] == [
        f"ben says {n}" for n in (len(LOG), 3, len("half \ud800 a pair"), len("I drink green tea."))
    ]
    assert lg_mem.skipped() == []
    hits = lg_mem.remember("what does she drink?", user_id="ana", k=3)
    assert any("green tea" in h.content for h in hits)
    assert any("worker-3 retry" in h.content for h in lg_mem.remember("worker-3 retry", user_id="ana", k=5))
