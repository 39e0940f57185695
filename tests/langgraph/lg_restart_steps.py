"""The two processes of the restart story (run by test_lg_restart.py as separate interpreters).

``python lg_restart_steps.py first <folder>``: a conversation on thread t1 (with the
checkpointer and the Store on the folder), then everything is closed.
``python lg_restart_steps.py second <folder>``: resume t1, and ask in a new thread t2.
Each step prints one JSON line with what the test checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore, create_memory_agent
from ucma_langchain.testing import ScriptedChatModel


class WordCounter:
    def count(self, text: str) -> int:
        return len(text.split())


def _messages(state: dict[str, Any]) -> list[list[str]]:
    return [[m.type, m.id, m.text] for m in state["messages"]]


def main(step: str, folder: Path) -> None:
    mem = Memory(folder, embedder=HashingEmbedder())
    saver = UCMACheckpointer(mem)
    store = UCMAStore(mem, index={"fields": ["text"]})
    model = ScriptedChatModel()
    agent = create_memory_agent(mem, model, checkpointer=saver, store=store, token_counter=WordCounter())
    t1 = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    out: dict[str, Any] = {}
    if step == "first":
        agent.invoke({"messages": [("user", "Remember that my cat is called Miso")]}, t1)
        agent.invoke({"messages": [("user", "I also moved to Lisbon in May")]}, t1)
        store.put(("memories", "ana"), "language", {"text": "Ana wants answers in Portuguese"})
        out["t1"] = _messages(agent.get_state(t1).values)
    else:
        out["t1_resumed"] = _messages(agent.get_state(t1).values)
        t2 = {"configurable": {"thread_id": "t2", "user_id": "ana"}}
        answer = agent.invoke({"messages": [("user", "What is my cat called?")]}, t2)
        out["t2_answer"] = answer["messages"][-1].text
        out["t2_prompt"] = model.prompts[-1][0].text
        language = agent.invoke({"messages": [("user", "Which language do I want answers in?")]}, t2)
        out["language_memories"] = language["memories"]
        agent.invoke({"messages": [("user", "Back in the first thread")]}, t1)
        out["t1_continued"] = _messages(agent.get_state(t1).values)
        saver.flush()
        out["t1_turns"] = [e.content for e in mem.history(session_id="t1", user_id="ana")]
    saver.close()
    mem.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
