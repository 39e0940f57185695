"""LangChain messages <-> chat turns: every kind of message, and the awkward ones."""

from __future__ import annotations

import pytest
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from ucma_core import Memory
from ucma_core.conversation import observe_turns
from ucma_core.errors import InvalidInputError
from ucma_langchain import UCMAChatMessageHistory, from_episode, to_turn, to_turns

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def test_roles_ids_and_names() -> None:
    turns = [
        to_turn(HumanMessage("hi", id="m1", name="Ana")),
        to_turn(AIMessage("hello", id="m2")),
        to_turn(SystemMessage("be brief")),
        to_turn(ToolMessage("42", tool_call_id="c1", name="calc")),
        to_turn(ChatMessage(content="from a human", role="human")),
    ]
    assert [(t.role, t.text) for t in turns if t] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("system", "be brief"),
        ("tool", "42"),
        ("user", "from a human"),
    ]
    first, tool = turns[0], turns[3]
    assert first is not None and tool is not None
    assert (first.message_id, first.name) == ("m1", "Ana")
    assert tool.metadata == {"tool_call_id": "c1", "tool_status": "success"}


def test_content_blocks_keep_the_text_and_name_the_rest() -> None:
    turn = to_turn(HumanMessage([{"type": "text", "text": "What is in this photo?"}, IMAGE, "Be brief."]))
    assert turn is not None
    assert turn.text == "What is in this photo?\nBe brief."
    assert turn.metadata == {"omitted_blocks": ["image_url"]}


def test_a_message_with_only_an_image_is_a_placeholder() -> None:
    turn = to_turn(HumanMessage([IMAGE]))
    assert turn is not None
    assert (turn.text, turn.metadata) == (
        "[image_url]",
        {"omitted_blocks": ["image_url"], "placeholder": True},
    )


def test_empty_messages_and_removals_give_none() -> None:
    assert to_turn(HumanMessage("")) is None
    assert to_turn(AIMessage("   ")) is None
    assert to_turn(AIMessage([])) is None
    assert to_turn(RemoveMessage(id="m1")) is None
    assert to_turns([HumanMessage(""), HumanMessage("kept")])[0].text == "kept"


def test_non_string_content_is_stored_as_json() -> None:
    tool = ToolMessage(content="x", tool_call_id="c1")
    object.__setattr__(tool, "content", {"temperature": 21})  # some tools return a dict
    assert to_turn(tool).text == '{"temperature": 21}'  # type: ignore[union-attr]
    assert to_turn(ToolMessage(content=123, tool_call_id="c2")).text == "123"  # type: ignore[call-overload, union-attr]


def test_tool_calls_are_kept_and_described() -> None:
    message = AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Porto"}, "id": "c1"}])
    turn = to_turn(message)
    assert turn is not None
    assert turn.text == 'Called tool weather with {"city": "Porto"}'
    assert turn.metadata["tool_calls"] == [{"name": "weather", "args": {"city": "Porto"}, "id": "c1"}]


def test_to_turns_accepts_message_likes_and_refuses_junk() -> None:
    turns = to_turns([("user", "hi"), {"role": "assistant", "content": "hello"}])
    assert [(t.role, t.text) for t in turns] == [("user", "hi"), ("assistant", "hello")]
    with pytest.raises(InvalidInputError, match="LangChain messages"):
        to_turns([42])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="LangChain message"):
        to_turn("hi")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="unknown chat role 'critic'"):
        to_turn(ChatMessage(content="meh", role="critic"))


def test_round_trip_through_the_memory(keep_all: Memory) -> None:
    sent = [
        HumanMessage("What's the weather in Porto?", id="u1", name="Ana"),
        AIMessage("", id="a1", tool_calls=[{"name": "weather", "args": {"city": "Porto"}, "id": "c1"}]),
        ToolMessage("sunny, 24C", tool_call_id="c1", name="weather", id="t1"),
        AIMessage("It is sunny in Porto.", id="a2"),
        HumanMessage([{"type": "text", "text": "And this?"}, IMAGE], id="u2"),
        SystemMessage("Be brief.", id="s1"),
    ]
    observe_turns(keep_all, to_turns(sent), user_id="ana", session_id="s")
    back = [from_episode(e) for e in keep_all.history(user_id="ana", session_id="s")]
    assert [type(m) for m in back] == [type(m) for m in sent]
    assert [m.id for m in back] == [m.id for m in sent]
    assert back[0].name == "Ana"
    assert back[1].content == "" and back[1].tool_calls == sent[1].tool_calls  # type: ignore[attr-defined]
    assert (back[2].tool_call_id, back[2].content) == ("c1", "sunny, 24C")  # type: ignore[attr-defined]
    assert back[3].content == "It is sunny in Porto."
    assert back[4].content == "And this?"  # the image is not stored


def test_a_memory_stored_without_a_role_reads_by_its_source(keep_all: Memory) -> None:
    memory_id = keep_all.observe("a plain observation", source="tool", session_id="s")
    message = from_episode(keep_all.history(session_id="s")[0])
    assert isinstance(message, ToolMessage)
    assert message.id == memory_id


def test_a_bad_message_stores_nothing(keep_all: Memory) -> None:
    history = UCMAChatMessageHistory(keep_all, "s", user_id="ana")
    history.add_messages([HumanMessage("kept", id="k1")])
    with pytest.raises(InvalidInputError):
        history.add_messages([HumanMessage("fine"), ChatMessage(content="x", role="critic")])
    assert [m.content for m in history.messages] == ["kept"]
