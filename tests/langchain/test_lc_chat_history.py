"""UCMAChatMessageHistory: ordered, per session, durable, and usable by RunnableWithMessageHistory."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from tests.langchain.lc_fakes import ScriptedChatModel, prompt_text
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_langchain import UCMAChatMessageHistory


def conversation(n: int) -> list[HumanMessage | AIMessage]:
    return [HumanMessage(f"question {i}") if i % 2 == 0 else AIMessage(f"answer {i}") for i in range(n)]


def test_messages_come_back_in_order_per_session(mem: Memory) -> None:
    one = UCMAChatMessageHistory(mem, "one", user_id="ana")
    two = UCMAChatMessageHistory(mem, "two", user_id="ana")
    sent = conversation(12)
    for message in sent[:5]:
        one.add_message(message)
    one.add_messages(sent[5:])
    two.add_user_message("another conversation")
    assert [m.content for m in one.messages] == [m.content for m in sent]
    assert [type(m) for m in one.messages] == [type(m) for m in sent]
    assert [m.content for m in two.messages] == ["another conversation"]
    assert [m.content for m in UCMAChatMessageHistory(mem, "one", user_id="ben").messages] == []
    assert [m.content for m in UCMAChatMessageHistory(mem, "one", user_id="ana", limit=2).messages] == [
        "question 10",
        "answer 11",
    ]


def test_messages_with_ids_are_stored_once(mem: Memory) -> None:
    history = UCMAChatMessageHistory(mem, "s", user_id="ana")
    message = HumanMessage("hello", id="m1")
    history.add_messages([message])
    history.add_messages([message, AIMessage("hi", id="m2")])
    assert [m.id for m in history.messages] == ["m1", "m2"]


def test_history_survives_a_restart(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        UCMAChatMessageHistory(mem, "s", user_id="ana").add_messages(conversation(4))
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        history = UCMAChatMessageHistory(mem, "s", user_id="ana")
        assert [m.content for m in history.messages] == [m.content for m in conversation(4)]
        assert history.messages[0].id == UCMAChatMessageHistory(mem, "s", user_id="ana").messages[0].id


def test_clear_forgets_only_the_session(mem: Memory) -> None:
    one = UCMAChatMessageHistory(mem, "one", user_id="ana")
    two = UCMAChatMessageHistory(mem, "two", user_id="ana")
    one.add_messages(conversation(3))
    two.add_messages(conversation(2))
    one.clear()
    assert one.messages == []
    assert len(two.messages) == 2


async def test_async_methods(mem: Memory) -> None:
    history = UCMAChatMessageHistory(mem, "s", user_id="ana")
    await history.aadd_messages(conversation(3))
    assert [m.content for m in await history.aget_messages()] == [m.content for m in conversation(3)]
    await history.aclear()
    assert await history.aget_messages() == []


def test_a_bound_view_picks_the_session(mem: Memory) -> None:
    view = mem.scope(user_id="ana")
    UCMAChatMessageHistory(view, "s").add_user_message("via the view")
    assert [m.content for m in UCMAChatMessageHistory(mem, "s", user_id="ana").messages] == ["via the view"]
    with pytest.raises(InvalidInputError, match="contradicts"):
        UCMAChatMessageHistory(view, "s", user_id="ben")


def test_bad_arguments(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="session_id"):
        UCMAChatMessageHistory(mem, "")
    with pytest.raises(InvalidInputError, match="limit"):
        UCMAChatMessageHistory(mem, "s", limit=-1)


def chain_with_history(mem: Memory, model: ScriptedChatModel) -> RunnableWithMessageHistory:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a helpful assistant."), MessagesPlaceholder("history"), ("human", "{question}")]
    )

    def history_for(session_id: str) -> BaseChatMessageHistory:
        return UCMAChatMessageHistory(mem, session_id, user_id="ana")

    return RunnableWithMessageHistory(
        prompt | model, history_for, input_messages_key="question", history_messages_key="history"
    )


def test_runnable_with_message_history(mem: Memory) -> None:
    model = ScriptedChatModel(script=["Nice to meet you, Ana.", "You told me your name is Ana."])
    chain = chain_with_history(mem, model)
    config = {"configurable": {"session_id": "chat-1"}}
    chain.invoke({"question": "Hi, my name is Ana."}, config=config)  # type: ignore[arg-type]
    answer = chain.invoke({"question": "What is my name?"}, config=config)  # type: ignore[arg-type]
    assert answer.content == "You told me your name is Ana."
    assert "human: Hi, my name is Ana." in prompt_text(model.prompts[1])
    assert "ai: Nice to meet you, Ana." in prompt_text(model.prompts[1])
    stored = UCMAChatMessageHistory(mem, "chat-1", user_id="ana").messages
    assert [m.content for m in stored] == [
        "Hi, my name is Ana.",
        "Nice to meet you, Ana.",
        "What is my name?",
        "You told me your name is Ana.",
    ]


def _round_trip(history: BaseChatMessageHistory) -> list[BaseMessage]:
    added: list[BaseMessage] = [
        SystemMessage("be brief"),
        HumanMessage("Hi, I'm Ana.", name="ana"),
        AIMessage("Hello Ana!"),
        HumanMessage("with an id", id="m-1"),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "tea"}, "id": "call-1"}]),
        ToolMessage("green tea", tool_call_id="call-1"),
    ]
    history.add_messages(added[:3])
    history.add_message(added[3])
    history.add_messages(added[4:])
    assert history.messages == added  # equal to what was added, ids included (or their absence)
    return history.messages


def test_read_back_equals_what_was_added_as_in_memory(mem: Memory) -> None:
    reference = _round_trip(InMemoryChatMessageHistory())
    got = _round_trip(UCMAChatMessageHistory(mem, "s", user_id="ana"))
    assert got == reference
    assert [m.id for m in got] == [None, None, None, "m-1", None, None]


def test_a_message_with_an_id_is_still_stored_once(mem: Memory) -> None:
    history = UCMAChatMessageHistory(mem, "s", user_id="ana")
    history.add_messages([HumanMessage("once", id="m-1"), HumanMessage("no id")])
    history.add_messages([HumanMessage("once", id="m-1")])
    assert [(m.content, m.id) for m in history.messages] == [("once", "m-1"), ("no id", None)]
