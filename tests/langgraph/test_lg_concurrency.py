"""Eight threads of one async graph at once, on one memory: no checkpoint lost, no message
observed twice, Store writes all kept."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime

from ucma_core import ANY, Memory
from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore, consolidation_node, recall_node

THREADS = 8
TURNS = 3


async def test_eight_threads_at_once(lg_mem: Memory, saver: UCMACheckpointer, words: Any) -> None:
    store = UCMAStore(lg_mem)

    async def model(state: MessagesState, config: RunnableConfig, runtime: Runtime[Any]) -> dict[str, Any]:
        thread = config["configurable"]["thread_id"]
        question = next(m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
        assert runtime.store is not None
        await runtime.store.aput(("threads", thread), f"turn-{len(state['messages'])}", {"q": question})
        await asyncio.sleep(0)
        return {"messages": [AIMessage(f"reply in {thread} to: {question}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", recall_node(token_counter=words))
    builder.add_node("model", model)
    builder.add_node("consolidate", consolidation_node(consolidate_every=5, timeout=0.1), defer=True)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "consolidate")
    builder.add_edge("consolidate", END)
    graph = builder.compile(checkpointer=saver, store=store)

    async def conversation(graph: Any, n: int) -> None:
        config: RunnableConfig = {"configurable": {"thread_id": f"t{n}", "user_id": f"user{n % 3}"}}
        for turn in range(TURNS):
            await graph.ainvoke({"messages": [HumanMessage(f"thread {n} turn {turn}")]}, config)

    reference = InMemorySaver()
    await conversation(builder.compile(checkpointer=reference, store=UCMAStore(lg_mem)), -1)
    per_thread = len(list(reference.list({"configurable": {"thread_id": "t-1"}})))

    await asyncio.gather(*(conversation(graph, n) for n in range(THREADS)))
    await saver.aflush()

    for n in range(THREADS):
        config: RunnableConfig = {"configurable": {"thread_id": f"t{n}"}}
        messages = (await graph.aget_state(config)).values["messages"]
        humans = [m.text for m in messages if isinstance(m, HumanMessage)]
        assert humans == [f"thread {n} turn {t}" for t in range(TURNS)]
        assert len([t async for t in saver.alist(config)]) == per_thread  # as many as InMemorySaver keeps
        turns = lg_mem.history(session_id=f"t{n}", user_id=f"user{n % 3}")
        assert [e.content for e in turns if e.source == "user"] == humans
        assert len(turns) == 2 * TURNS

    conversation_memories = [
        m
        for m in lg_mem.list_memories(user_id=ANY, memory_types=["episodic"], limit=10_000)
        if m.session_id != "t-1"
    ]
    keys = Counter(
        m.metadata.get("message_id") for m in conversation_memories if m.metadata.get("message_id")
    )
    assert len(keys) == THREADS * TURNS * 2 and set(keys.values()) == {1}
    for n in range(THREADS):
        assert len(await store.asearch(("threads", f"t{n}"), limit=100)) == TURNS
