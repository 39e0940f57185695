"""LlamaIndex messages ⇄ UCMA turns: text, tool calls, images and audio, empty messages."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

from ucma_core import Memory
from ucma_core.conversation import ChatTurn
from ucma_core.errors import InvalidInputError
from ucma_llamaindex.messages import from_turn, message_text, to_message, to_turn, to_turns

IMAGE = ImageBlock(url="https://example.com/cat.png")
AUDIO = AudioBlock(audio=b"RIFF0000WAVEfmt ", format="wav")


def test_text_message_round_trips() -> None:
    message = ChatMessage(role="user", content="I moved to Lisbon in May.")
    turn = to_turn(message)
    assert turn is not None and (turn.role, turn.text, turn.metadata) == ("user", message.content, {})
    back = from_turn(turn)
    assert (back.role, back.content, back.additional_kwargs) == (MessageRole.USER, message.content, {})


@pytest.mark.parametrize(
    ("role", "stored"),
    [
        ("assistant", "assistant"),
        ("model", "assistant"),
        ("chatbot", "assistant"),
        ("developer", "system"),
        ("function", "tool"),
        ("tool", "tool"),
        ("system", "system"),
    ],
)
def test_every_llamaindex_role_maps_to_a_turn_role(role: str, stored: str) -> None:
    turn = to_turn(ChatMessage(role=role, content="hello"))
    assert turn is not None and turn.role == stored


def test_images_and_audio_keep_the_text_parts_and_are_named() -> None:
    message = ChatMessage(role="user", blocks=[TextBlock(text="Look at my cat"), IMAGE, AUDIO])
    assert message_text(message) == "Look at my cat"
    turn = to_turn(message)
    assert turn is not None and turn.text == "Look at my cat"
    assert turn.metadata["llamaindex"]["dropped_blocks"] == ["audio", "image"]
    assert from_turn(turn).blocks == [TextBlock(text="Look at my cat")]


def test_a_picture_alone_is_stored_as_a_placeholder() -> None:
    turn = to_turn(ChatMessage(role="user", blocks=[IMAGE]))
    assert turn is not None and turn.text == "[image]"


@pytest.mark.parametrize(
    "message",
    [
        ChatMessage(role="user", content=""),
        ChatMessage(role="assistant", content="   \n"),
        ChatMessage(role="assistant", blocks=[]),
        ChatMessage(role="assistant", blocks=[ThinkingBlock(content="hmm")]),
    ],
)
def test_empty_messages_give_no_turn(message: ChatMessage) -> None:
    assert to_turn(message) is None
    assert to_turns([message]) == []


def test_tool_calls_are_described_in_text_and_come_back_as_blocks() -> None:
    call = ToolCallBlock(tool_call_id="c1", tool_name="recall_memory", tool_kwargs={"query": "Lisbon"})
    message = ChatMessage(role="assistant", blocks=[TextBlock(text="Let me check."), call])
    turn = to_turn(message)
    assert turn is not None
    assert turn.text == 'Let me check.\ncalled recall_memory({"query": "Lisbon"})'
    back = from_turn(turn)
    assert back.content == "Let me check."
    assert [b for b in back.blocks if isinstance(b, ToolCallBlock)] == [call]


def test_tool_results_keep_their_call_id() -> None:
    result = ChatMessage(role="tool", content='[{"id": "m1"}]', additional_kwargs={"tool_call_id": "c1"})
    back = from_turn(to_turn(result))  # type: ignore[arg-type]
    assert back.role == MessageRole.TOOL and back.additional_kwargs == {"tool_call_id": "c1"}


def test_legacy_openai_tool_calls_in_additional_kwargs() -> None:
    legacy = {
        "id": "c9",
        "type": "function",
        "function": {"name": "facts_about", "arguments": '{"entity": "Ana"}'},
    }
    message = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [legacy]})
    turn = to_turn(message)
    assert turn is not None and turn.text == 'called facts_about({"entity": "Ana"})'
    back = from_turn(turn)
    assert back.additional_kwargs["tool_calls"] == [legacy]
    assert not any(isinstance(b, ToolCallBlock) for b in back.blocks)


def test_message_id_and_name_come_from_additional_kwargs_and_session_id_is_dropped() -> None:
    message = ChatMessage(
        role="user",
        content="hi",
        additional_kwargs={"message_id": "m-7", "name": "Ana", "session_id": "s", "handle": object()},
    )
    turn = to_turn(message)
    assert turn is not None and (turn.message_id, turn.name) == ("m-7", "Ana")
    assert turn.metadata["llamaindex"]["additional_kwargs"] == {"message_id": "m-7", "name": "Ana"}


def test_not_a_message_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="ChatMessage"):
        to_turn("hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="list of ChatMessage"):
        to_turns(ChatMessage(role="user", content="hi"))  # type: ignore[arg-type]


def test_a_memory_stored_another_way_reads_back_as_a_message(mem: Memory) -> None:
    memory_id = mem.observe("the build failed on Tuesday", source="tool", session_id="s", importance=0.9)
    assert memory_id is not None
    record = mem.get(memory_id)
    assert record is not None
    message = to_message(record)
    assert (message.role, message.content) == (MessageRole.TOOL, "the build failed on Tuesday")
    assert ChatTurn.from_record(record).role == "tool"
