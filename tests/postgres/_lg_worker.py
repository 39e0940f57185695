"""A LangGraph worker process on a shared memory (run by the tests with ``python -m``).

``python -m tests.postgres._lg_worker URL CHROMA_PORT NAME THREADS TURNS`` runs TURNS turns
on each of THREADS threads (``<NAME>-<n>``, user ``<NAME>``) through a graph checkpointed by
:class:`UCMACheckpointer` on the memory, waits until every message is stored, and prints
one JSON line: each thread's message texts. With ``UCMA_TEST_HOLD=1`` the mirror holds the
messages (a long linger) and, once every checkpoint is stored and the line printed, the
process waits to be killed without storing them.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer


def echo_graph(saver: UCMACheckpointer):  # type: ignore[no-untyped-def]
    """A graph whose one node answers every user message with an echo."""
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, MessagesState, StateGraph

    def answer(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(f"echo: {state['messages'][-1].text}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    return graph.compile(checkpointer=saver)


def main() -> None:
    url, port, name, threads, turns = sys.argv[1:]
    config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(port)))
    out: dict[str, list[str]] = {}
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        hold = os.environ.get("UCMA_TEST_HOLD") == "1"
        saver = UCMACheckpointer(mem, linger=60.0 if hold else 0.1)
        app = echo_graph(saver)
        for n in range(int(threads)):
            run = {"configurable": {"thread_id": f"{name}-{n}", "user_id": name}}
            for turn in range(int(turns)):
                app.invoke({"messages": [("user", f"{name} says turn {turn} of thread {n}")]}, run)
            out[f"{name}-{n}"] = [m.text for m in app.get_state(run).values["messages"]]
        if hold:
            print(json.dumps(out), flush=True)
            time.sleep(600)  # killed here: the checkpoints are stored, their messages are not
        assert saver.flush(60)
        saver.close()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
