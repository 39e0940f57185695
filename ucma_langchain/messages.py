"""LangChain messages <-> UCMA chat turns and episodes.

Every LangChain adapter (chat history, classic memory, middleware, the LangGraph
side) converts messages here and nowhere else.

Message to turn (:func:`to_turn`):

* ``HumanMessage`` → ``user``, ``AIMessage`` → ``assistant``, ``SystemMessage`` →
  ``system``, ``ToolMessage`` → ``tool``; a ``ChatMessage`` maps by its ``role`` the
  way :class:`~ucma_core.conversation.ChatTurn` reads it (``human`` is ``user``, ``ai``
  is ``assistant``…; an unknown role is an :class:`~ucma_core.errors.InvalidInputError`).
* The text is the message's text parts (a str content, str items and ``text``
  blocks of a content list), joined by newlines. Other blocks (images, audio,
  files, reasoning, provider-specific blocks) are not stored: their types are
  listed in the turn's metadata under ``"omitted_blocks"``, and a message with no
  text at all becomes a placeholder naming them, such as ``"[image]"``.
* A non-str, non-list content (a tool that returned a number or a dict) is stored
  as its JSON text.
* An ``AIMessage``'s tool calls are kept in the metadata (``"tool_calls"``: name,
  args, id); if it has no text, its text describes the calls.
* A ``ToolMessage`` keeps ``tool_call_id`` and ``status`` in the metadata.
* A message with neither text, other blocks nor tool calls (an empty message) and a
  ``RemoveMessage`` give ``None``: there is nothing to remember.

The message id becomes the turn's ``message_id`` (UCMA's idempotency key, so a
message observed twice is stored once) and the message name its ``name``.
:func:`from_episode` turns a stored turn back into the message it came from (text
and the fields above; omitted blocks stay omitted).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langchain_core.messages.utils import MessageLikeRepresentation

from ucma_core.conversation import ChatTurn
from ucma_core.conversation.parts import group_parts
from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryRecord
from ucma_core.validation import check_depth

__all__ = ["from_episode", "from_episodes", "message_role", "to_turn", "to_turns"]

#: How deep the tool calls may nest: they sit one level down in the turn's metadata
#: (``{"tool_calls": [...]}``), which nests 31 levels at most.
_CALLS_DEPTH = 30


def message_role(message: BaseMessage) -> str:
    """The UCMA role (``user``, ``assistant``, ``system`` or ``tool``) of a LangChain message.

    Raises:
        InvalidInputError: ``message`` is not a message, or a ``ChatMessage`` with a role
            UCMA does not know.
    """
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, (ToolMessage, FunctionMessage)):
        return "tool"
    if isinstance(message, ChatMessage):
        return ChatTurn(message.role, "").role
    if isinstance(message, BaseMessage):
        raise InvalidInputError(f"cannot remember a {type(message).__name__} (type {message.type!r})")
    raise InvalidInputError(f"expected a LangChain message, got {type(message).__name__}")


def _split_content(content: object) -> tuple[str, list[str]]:
    """The text of a message content, and the types of the blocks that are not text."""
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False, default=str), []
    texts: list[str] = []
    omitted: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif (
            isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ):
            texts.append(block["text"])
        elif isinstance(block, Mapping):
            omitted.append(str(block.get("type", "unknown")))
        else:
            omitted.append(type(block).__name__)
    return "\n".join(t for t in texts if t.strip()), omitted


def _tool_calls(message: BaseMessage) -> list[dict[str, Any]]:
    if not isinstance(message, AIMessage):
        return []
    calls = [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in message.tool_calls]
    check_depth(calls, _CALLS_DEPTH, "a tool call")
    return calls


def _describe_calls(calls: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"Called tool {c['name']} with {json.dumps(c['args'], ensure_ascii=False, default=str)}"
        for c in calls
    )


def to_turn(message: BaseMessage) -> ChatTurn | None:
    """The chat turn for one LangChain message, or ``None`` if it has nothing to remember.

    Args:
        message: Any LangChain chat message.

    Returns:
        A :class:`~ucma_core.conversation.ChatTurn`, or ``None`` for an empty message or a
        ``RemoveMessage``.

    Raises:
        InvalidInputError: ``message`` is not a LangChain message, or a ``ChatMessage`` with
            an unknown role.

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> turn = to_turn(HumanMessage("I moved to Lisbon", id="m1", name="ana"))
        >>> (turn.role, turn.text, turn.message_id, turn.name)
        ('user', 'I moved to Lisbon', 'm1', 'ana')
        >>> to_turn(HumanMessage("")) is None
        True
    """
    if isinstance(message, RemoveMessage):
        return None
    role = message_role(message)
    text, omitted = _split_content(message.content)
    calls = _tool_calls(message)
    metadata: dict[str, Any] = {}
    if omitted:
        metadata["omitted_blocks"] = omitted
    if calls:
        metadata["tool_calls"] = calls
    if isinstance(message, ToolMessage):
        metadata["tool_call_id"] = message.tool_call_id
        metadata["tool_status"] = message.status
    if not text.strip():
        if calls:
            text = _describe_calls(calls)
        elif omitted:
            text = " ".join(f"[{kind}]" for kind in omitted)
        else:
            return None
        metadata["placeholder"] = True
    return ChatTurn(
        role=role,
        text=text,
        message_id=message.id or None,
        name=message.name or None,
        metadata=metadata,
    )


def to_turns(messages: Iterable[MessageLikeRepresentation]) -> list[ChatTurn]:
    """The chat turns for several messages, in order, skipping empty ones.

    Args:
        messages: LangChain messages, or anything ``convert_to_messages`` accepts
            (``("user", "hi")`` tuples, ``{"role": ..., "content": ...}`` dicts).

    Raises:
        InvalidInputError: An item is not a message and cannot be converted to one.
    """
    items = list(messages)
    if all(isinstance(m, BaseMessage) for m in items):
        converted: list[BaseMessage] = items  # type: ignore[assignment]
    else:
        try:
            converted = convert_to_messages(items)
        except (ValueError, TypeError, KeyError, NotImplementedError) as e:
            raise InvalidInputError(f"cannot read these messages as LangChain messages: {e}") from e
    return [turn for turn in map(to_turn, converted) if turn is not None]


def from_episode(record: MemoryRecord, *, fill_id: bool = True) -> BaseMessage:
    """The LangChain message for a stored chat turn (the inverse of :func:`to_turn`).

    The role, message id and name come from what the turn was stored with (see
    :meth:`ucma_core.conversation.ChatTurn.from_record`; a memory stored some other way
    reads by its ``source``); the id is the original message id, or, for a turn stored
    without one, the memory id (``fill_id=False``: ``None``, the message exactly as it
    was added, as LangChain's chat histories return it).

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
        ...     _ = mem.observe("hello", source="assistant", session_id="s", keep=True)
        ...     message = from_episode(mem.history(session_id="s")[0])
        >>> (message.type, message.content)
        ('ai', 'hello')
    """
    return _from_parts([record], fill_id=fill_id)


def _from_parts(records: Sequence[MemoryRecord], *, fill_id: bool = True) -> BaseMessage:
    turn = ChatTurn.from_part_records(records)
    meta = turn.metadata
    message_id = turn.message_id or (records[0].id if fill_id else None)
    if turn.role == "assistant":
        calls = meta.get("tool_calls") or []
        return AIMessage(
            content="" if calls and meta.get("placeholder") else turn.text,
            tool_calls=[{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in calls],
            id=message_id,
            name=turn.name,
        )
    if turn.role == "tool":
        status = meta.get("tool_status")
        return ToolMessage(
            content=turn.text,
            tool_call_id=str(meta.get("tool_call_id") or ""),
            status=status if status in ("success", "error") else "success",
            id=message_id,
            name=turn.name,
        )
    if turn.role == "system":
        return SystemMessage(content=turn.text, id=message_id, name=turn.name)
    return HumanMessage(content=turn.text, id=message_id, name=turn.name)


def from_episodes(records: Iterable[MemoryRecord], *, fill_id: bool = True) -> list[BaseMessage]:
    """:func:`from_episode` for each record, in order; the parts of a turn stored in parts
    (see :mod:`ucma_core.conversation.parts`) become one message again."""
    return [_from_parts(group, fill_id=fill_id) for group in group_parts(records)]
