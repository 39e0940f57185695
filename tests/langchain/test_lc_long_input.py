"""Ordinary chat input through UCMAMiddleware: a pasted 150,000-character log, a NUL and a lone
surrogate get an answer, and every message is stored (the log in parts)."""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from tests.langchain.lc_fakes import ScriptedChatModel
from ucma_core import Memory
from ucma_core.conversation import ChatTurn
from ucma_langchain import UCMAChatMessageHistory, UCMAMiddleware


def pasted_log(chars: int) -> str:
    line = "2026-03-04 10:00:00 INFO worker step ok\n"
    return (line * (chars // len(line) + 1))[: chars - 30] + "\nERROR deploy failed zqlog42"


def test_a_150000_character_message_gets_an_answer(keep_all: Memory) -> None:
    log = pasted_log(150_000)
    model = ScriptedChatModel(script=["The deploy failed at the end."])
    agent = create_agent(model, tools=[], middleware=[UCMAMiddleware(keep_all, user_id="ana")])
    out = agent.invoke({"messages": [HumanMessage(f"Why did this fail?\n{log}")]})
    assert isinstance(out["messages"][-1], AIMessage)
    assert out["messages"][-1].text == "The deploy failed at the end."
    turns = ChatTurn.from_records(keep_all.list_memories(user_id="ana", newest_first=False))
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].text == f"Why did this fail?\n{log}"
    assert any("zqlog42" in h.content for h in keep_all.remember("deploy failed zqlog42", user_id="ana"))


def test_nul_and_lone_surrogate_messages_get_answers(keep_all: Memory) -> None:
    model = ScriptedChatModel(script=["ok one", "ok two"])
    agent = create_agent(model, tools=[], middleware=[UCMAMiddleware(keep_all, user_id="ana")])
    first = agent.invoke({"messages": [HumanMessage("my code is 12\x0034")]})
    second = agent.invoke({"messages": [*first["messages"], HumanMessage("a broken emoji \ud83d in Porto")]})
    assert second["messages"][-1].text == "ok two"
    stored = [r.content for r in keep_all.list_memories(user_id="ana", newest_first=False)]
    assert stored == ["my code is 12 34", "ok one", "a broken emoji \ufffd in Porto", "ok two"]


def test_chat_history_reads_a_long_message_back_whole(keep_all: Memory) -> None:
    log = pasted_log(150_000)
    history = UCMAChatMessageHistory(keep_all, "s", user_id="ana")
    history.add_messages([HumanMessage(log, id="m1"), AIMessage("Seen.", id="m2")])
    assert len(keep_all.history(user_id="ana", session_id="s")) == 3  # the log in two parts
    messages = history.messages
    assert [(m.type, m.id) for m in messages] == [("human", "m1"), ("ai", "m2")]
    assert messages[0].text == log
