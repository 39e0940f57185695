"""LlamaIndex ``ChatMessage`` ⇄ UCMA ``ChatTurn``: the only place the two message types meet.

What a message keeps when it is stored:

* **Text**: the text of its ``TextBlock``\\ s, joined by newlines. Image, audio, video
  and document blocks carry no text UCMA could embed: they are left out and their
  kinds are noted (``dropped_blocks``), so a message with a caption and a picture is
  remembered by its caption. Thinking blocks and cache points are left out too.
* **Tool calls**: an assistant message that calls tools (``ToolCallBlock``\\ s, or
  the older ``additional_kwargs["tool_calls"]``) is stored with a line per call,
  ``called <tool>(<arguments as JSON>)``, after its text, so the memory knows what
  was done; the calls themselves are kept too, so the message reads back with the
  same blocks and a model that needs each tool result to follow its call gets them.
* **additional_kwargs** (``tool_call_id``, ``name``…) are kept where they are
  JSON-able; ``session_id`` (set by LlamaIndex's ``Memory`` when it flushes
  messages to memory blocks) is not, the episode's scope says it, nor the legacy
  ``images`` (image data, which LlamaIndex already turned into image blocks).
* A message with no text and no tool call but other blocks (a picture alone) is
  stored as a placeholder naming them (``[image]``), so the conversation keeps its
  place; an empty message (no blocks, or only blank text) gives no turn at all.

For :class:`~ucma_core.conversation.Conversation` (which decides what is stored) a turn
also says, at the top of its metadata, the tool calls it makes (``"tool_calls"``: name
and id), the call a tool result answers (``"tool_call_id"``) and, with
``"placeholder": True``, that its text only stands for calls or blocks.

``additional_kwargs["message_id"]`` (or ``["id"]``), when a string, is the turn's
``message_id``: the same message observed again, in any process, is not stored twice
(so a message id must be unique among the user's messages).
The LlamaIndex-specific parts travel in the turn's metadata under ``"llamaindex"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import (
    CachePoint,
    ChatMessage,
    MessageRole,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from pydantic import BaseModel

from ucma_core.conversation import ChatTurn
from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryRecord
from ucma_core.validation import check_depth

__all__ = ["from_turn", "message_text", "to_message", "to_messages", "to_turn", "to_turns"]

#: Key of a turn's metadata that holds what only LlamaIndex needs back.
META_KEY = "llamaindex"
#: additional_kwargs that are not stored with the message: the session (the episode's scope
#: says it) and legacy images (LlamaIndex turns them into image blocks, which are not kept).
_NOT_KEPT = frozenset({"session_id", "images"})
_ID_KEYS = ("message_id", "id")
_SKIPPED = (TextBlock, ToolCallBlock, CachePoint, ThinkingBlock)


def message_text(message: ChatMessage) -> str:
    """The text of a message: its text blocks, joined by newlines (other blocks are left out).

    Examples:
        >>> from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock
        >>> message_text(ChatMessage(role="user", blocks=[
        ...     TextBlock(text="Look at my cat"), ImageBlock(url="https://example.com/cat.png")]))
        'Look at my cat'
    """
    return "\n".join(block.text for block in message.blocks if isinstance(block, TextBlock))


def _jsonable(value: object) -> object:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON-able")


#: How deep a kept value may nest: it sits four levels down in the turn's metadata
#: (``{"llamaindex": {"additional_kwargs": {key: value}}}``), which nests 31 at most.
_KWARG_DEPTH = 27


def _kept_kwargs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able ``additional_kwargs`` (what is not, or nests too deep, is left out)."""
    kept: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in _NOT_KEPT or not isinstance(key, str):
            continue
        try:
            check_depth(value, _KWARG_DEPTH)
            kept[key] = json.loads(json.dumps(value, default=_jsonable, allow_nan=False))
        except (TypeError, ValueError):  # InvalidInputError is a ValueError
            continue
    return kept


def _tool_calls(message: ChatMessage, kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = [
        {"id": block.tool_call_id, "name": block.tool_name, "kwargs": block.tool_kwargs}
        for block in message.blocks
        if isinstance(block, ToolCallBlock)
    ]
    if calls:
        check_depth(calls, _KWARG_DEPTH, "a tool call")
        return json.loads(json.dumps(calls, default=_jsonable))  # type: ignore[no-any-return]
    legacy = kwargs.get("tool_calls")
    for call in legacy if isinstance(legacy, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            calls.append({"id": None, "name": function["name"], "kwargs": function.get("arguments", {})})
    return calls


def _call_line(call: Mapping[str, Any]) -> str:
    arguments = call["kwargs"]
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return f"called {call['name']}({shown})"


def to_turn(message: ChatMessage) -> ChatTurn | None:
    """The turn to store for ``message``, or ``None`` when it holds nothing to remember.

    Examples:
        >>> from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
        >>> to_turn(ChatMessage(role="user", content="I moved to Lisbon")).text
        'I moved to Lisbon'
        >>> call = ChatMessage(role="assistant", blocks=[
        ...     ToolCallBlock(tool_call_id="c1", tool_name="recall_memory", tool_kwargs={"query": "Lisbon"})])
        >>> to_turn(call).text
        'called recall_memory({"query": "Lisbon"})'
        >>> to_turn(ChatMessage(role="user", content="  ")) is None
        True
    """
    if not isinstance(message, ChatMessage):
        raise InvalidInputError(f"expected a llama_index ChatMessage, not {type(message).__name__}")
    kwargs = _kept_kwargs(message.additional_kwargs)
    text = message_text(message)
    calls = _tool_calls(message, kwargs)
    dropped = sorted({block.block_type for block in message.blocks if not isinstance(block, _SKIPPED)})
    lines = [text] if text.strip() else []
    lines += [_call_line(call) for call in calls]
    stored = "\n".join(lines) or " ".join(f"[{kind}]" for kind in dropped)
    if not stored.strip():
        return None
    extra: dict[str, Any] = {}
    if calls:
        extra["text"] = text
        extra["tool_calls"] = calls
    if kwargs:
        extra["additional_kwargs"] = kwargs
    if dropped:
        extra["dropped_blocks"] = dropped
    message_id = next(
        (kwargs[k] for k in _ID_KEYS if isinstance(kwargs.get(k), str) and kwargs[k].strip()), None
    )
    name = kwargs.get("name")
    metadata: dict[str, Any] = {META_KEY: extra} if extra else {}
    if calls:
        metadata["tool_calls"] = [{"name": call["name"], "id": call.get("id")} for call in calls]
    if isinstance(kwargs.get("tool_call_id"), str):
        metadata["tool_call_id"] = kwargs["tool_call_id"]
    if not text.strip():
        metadata["placeholder"] = True
    return ChatTurn(
        role=message.role.value,
        text=stored,
        message_id=message_id,
        name=name if isinstance(name, str) and name.strip() else None,
        metadata=metadata,
    )


def to_turns(messages: Iterable[ChatMessage]) -> list[ChatTurn]:
    """The turns to store for ``messages``, in order, leaving out those with nothing to remember."""
    if isinstance(messages, ChatMessage):
        raise InvalidInputError("expected a list of ChatMessage, got a single ChatMessage")
    return [turn for turn in map(to_turn, messages) if turn is not None]


def from_turn(turn: ChatTurn) -> ChatMessage:
    """The ``ChatMessage`` a stored turn came from (see the module docstring for what is kept)."""
    extra = turn.metadata.get(META_KEY)
    extra = extra if isinstance(extra, dict) else {}
    calls = extra.get("tool_calls")
    calls = calls if isinstance(calls, list) else []
    text = extra.get("text", turn.text) if calls else turn.text
    blocks: list[Any] = [TextBlock(text=text)] if isinstance(text, str) and text else []
    kwargs = extra.get("additional_kwargs")
    kwargs = dict(kwargs) if isinstance(kwargs, dict) else {}
    legacy = isinstance(kwargs.get("tool_calls"), list)
    if not legacy:
        blocks += [
            ToolCallBlock(
                tool_call_id=call.get("id"), tool_name=call["name"], tool_kwargs=call.get("kwargs", {})
            )
            for call in calls
            if isinstance(call, dict) and isinstance(call.get("name"), str)
        ]
    return ChatMessage(role=MessageRole(turn.role), blocks=blocks, additional_kwargs=kwargs)


def to_message(record: MemoryRecord) -> ChatMessage:
    """The ``ChatMessage`` for a stored memory (an episode of ``Memory.history``).

    A memory stored some other way than as a chat turn reads back as a message of the
    role nearest to its source, with its content as text.
    """
    return from_turn(ChatTurn.from_record(record))


def to_messages(records: Sequence[MemoryRecord]) -> list[ChatMessage]:
    """:func:`to_message` for each record, in order; the parts of a turn stored in parts
    (see :mod:`ucma_core.conversation.parts`) become one message again."""
    return [from_turn(turn) for turn in ChatTurn.from_records(records)]
