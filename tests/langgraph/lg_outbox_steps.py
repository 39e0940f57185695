"""Processes of the outbox stories (run by test_lg_outbox.py and the fault trials as
separate interpreters).

``python lg_outbox_steps.py STEP FOLDER [N]``:

* ``natural``: the way LangGraph's docs use a saver — ``compile(checkpointer=
  UCMACheckpointer(mem))``, invoke, ``mem.close()``.
* ``no_close``: the same, and the script simply ends (no close anywhere).
* ``hard_exit``: the same, then ``os._exit`` right after the last invoke returned (as
  a kill would: no close, no ``atexit``).
* ``run N``: N turns over three users and threads, printing ``ack <n>`` after each
  invoke returned (the fault trials kill this one at random points).
* ``catch_up``: open the memory and the checkpointer (which replays its outbox), close.
* ``count``: print one JSON line: every message of every thread's latest checkpoint
  (read without replaying) and every memory's message id.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from ucma_core import ANY, Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer

USERS = ("ana", "ben", "cleo")


def echo(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"echo: {state['messages'][-1].text}")]}


def echo_graph(saver: UCMACheckpointer) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("bot", echo)
    builder.add_edge(START, "bot")
    builder.add_edge("bot", END)
    return builder.compile(checkpointer=saver)


def config(n: int) -> dict[str, Any]:
    user = USERS[n % len(USERS)]
    return {"configurable": {"thread_id": f"thread-{user}", "user_id": user}}


def turns(graph: Any, count: int, *, report: bool = False) -> None:
    for n in range(count):
        graph.invoke({"messages": [HumanMessage(f"message {n} from {USERS[n % 3]}")]}, config(n))
        if report:
            print(f"ack {n}", flush=True)


def count(folder: Path) -> dict[str, Any]:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        checkpointed: list[str] = []
        with UCMACheckpointer(mem, messages_key=None) as reader:  # reads without replaying
            for user in USERS:
                found = reader.get_tuple({"configurable": {"thread_id": f"thread-{user}"}})
                if found is not None:
                    checkpointed += [
                        str(m.id) for m in found.checkpoint["channel_values"].get("messages", [])
                    ]
        stored = [str(r.metadata.get("message_id")) for r in mem.list_memories(user_id=ANY, limit=100_000)]
    return {"checkpointed": checkpointed, "stored": stored}


def main(step: str, folder: Path, n: int) -> None:
    if step == "count":
        print(json.dumps(count(folder)))
        return
    mem = Memory(folder, embedder=HashingEmbedder())
    if step == "catch_up":
        UCMACheckpointer(mem)
        mem.close()
        return
    linger = 0.1 if step in ("natural", "run") else 30.0
    graph = echo_graph(UCMACheckpointer(mem, linger=linger))
    turns(graph, n, report=step == "run")
    if step == "natural":
        mem.close()
    elif step == "hard_exit":
        sys.stdout.flush()
        os._exit(0)
    # no_close / run: the script simply ends


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 4)
