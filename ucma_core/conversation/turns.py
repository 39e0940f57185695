"""Chat turns in, episodes out: what every chat adapter does with a conversation.

A framework adapter converts its message type into a :class:`ChatTurn` and calls
:func:`observe_turns` (or :func:`aobserve_turns`); it never decides sources, keys
or metadata itself. Reading the other way, :meth:`ChatTurn.from_record` turns a
stored episode (from ``Memory.history``) back into a turn.

How a turn is stored (one ``observe_many`` call per batch):

* ``role`` becomes the episode's ``source`` (``user``, ``assistant``, ``tool``,
  ``system``).
* ``message_id`` becomes the idempotency ``key`` (unique per user and agent, across
  sessions): a turn observed before, in this process or an earlier one, is not
  stored again and its existing id is returned, also when it repeats within one
  call. Turns without a ``message_id`` are always stored.
* ``participants`` is ``[name]``; a user turn without a name gets the bound
  ``user_id``, so "what did Ana say …" finds Ana's turns.
* The episode's ``metadata`` is ``{"role": ..., "message_id": ..., "name": ...,
  "extra": {...}}``: ``role`` always, ``message_id`` and ``name`` only when set
  (so ``metadata_filter={"role": "user"}`` works), and the turn's own metadata
  nested under ``"extra"`` (only when non-empty), so no key of the caller's can
  overwrite ours or the other way round.
* A turn whose text is empty or only whitespace is skipped and gets ``None`` in
  the returned list: chat frameworks produce empty assistant messages around tool
  calls, and there is nothing in them to remember.
* ``keep=True`` (the default) stores every turn whatever its importance score:
  a chat history must not lose turns.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ucma_core.conversation.binding import bind
from ucma_core.errors import InvalidInputError
from ucma_core.records import Episode, MemoryRecord
from ucma_core.validation import check_metadata

if TYPE_CHECKING:
    from ucma_core.conversation.binding import Target

__all__ = ["ChatTurn", "aobserve_turns", "observe_turns", "turn_items"]

#: The roles a :class:`ChatTurn` can have; each is also the stored ``source``.
ROLES = ("user", "assistant", "system", "tool")

#: Other frameworks' names for the same roles (LangChain message types, LlamaIndex ``MessageRole``).
_ALIASES = {
    "human": "user",
    "ai": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "developer": "system",
    "function": "tool",
}

#: Stored sources that are not chat roles, read back as the nearest role.
_SOURCE_ROLES = {"environment": "tool", "consolidation": "system"}

#: Key of the episode metadata under which a turn's own metadata is kept.
EXTRA_KEY = "extra"


@dataclass(frozen=True)
class ChatTurn:
    """One message of a conversation, independent of any framework.

    Args:
        role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"`` (case-insensitive;
            the framework names ``"human"``, ``"ai"``, ``"chatbot"``, ``"model"``,
            ``"developer"`` and ``"function"`` are read as the matching role).
        text: the message text; may be empty (such turns are skipped when observed).
        message_id: the framework's message id; used as the idempotency key.
        name: the speaker's name (a user's display name, a tool's name).
        timestamp: when it was said, as epoch seconds or a ``datetime`` (naive means
            local time); ``None`` means when it is observed.
        metadata: JSON-able data of the caller, returned under ``metadata["extra"]``.

    Raises:
        InvalidInputError: a role we do not know, text that is not a str, or a field
            of the wrong type.

    Examples:
        >>> ChatTurn("human", "I moved to Lisbon.", message_id="m1").role
        'user'
        >>> ChatTurn("robot", "beep")
        Traceback (most recent call last):
        ...
        ucma_core.errors.InvalidInputError: unknown chat role 'robot'; expected one of: user, assistant, \
system, tool (or human, ai, chatbot, model, developer, function)
    """

    role: str
    text: str
    message_id: str | None = None
    name: str | None = None
    timestamp: datetime | float | None = None
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", _check_role(self.role))
        if not isinstance(self.text, str):
            raise InvalidInputError(
                f"a {self.role} turn's text must be a str, not {type(self.text).__name__}; "
                "convert content blocks to text first"
            )
        for what in ("message_id", "name"):
            value = getattr(self, what)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidInputError(f"a turn's {what} must be a non-blank str or None, got {value!r}")
        _check_timestamp(self.timestamp)
        if self.metadata is None:
            object.__setattr__(self, "metadata", {})
        elif isinstance(self.metadata, Mapping) and not isinstance(self.metadata, dict):
            object.__setattr__(self, "metadata", dict(self.metadata))
        try:
            check_metadata(self.metadata)
        except InvalidInputError as e:
            raise InvalidInputError(f"a turn's metadata is not usable: {e}") from e

    @property
    def is_empty(self) -> bool:
        """True when the text is empty or only whitespace (such turns are not stored)."""
        return not self.text.strip()

    @classmethod
    def from_record(cls, record: MemoryRecord) -> ChatTurn:
        """The turn a stored memory came from (e.g. an episode of ``Memory.history``).

        Role, message id, name and the turn's own metadata come from what
        :func:`observe_turns` stored; for a memory stored some other way the role
        is its ``source`` (``environment`` reads as ``tool``, ``consolidation`` as
        ``system``), the name its first participant, and the metadata all of its
        metadata.
        """
        if not isinstance(record, MemoryRecord):
            raise InvalidInputError(f"record must be a MemoryRecord, not {type(record).__name__}")
        meta = record.metadata
        if meta.get("role") in ROLES:
            role, message_id, name = meta["role"], meta.get("message_id"), meta.get("name")
            extra = meta.get(EXTRA_KEY) or {}
        else:
            role, message_id, extra = _SOURCE_ROLES.get(record.source, record.source), None, dict(meta)
            participants = record.participants if isinstance(record, Episode) else ()
            name = participants[0] if participants else None
        return cls(
            role=role,
            text=record.content,
            message_id=message_id if isinstance(message_id, str) else None,
            name=name if isinstance(name, str) else None,
            timestamp=record.timestamp,
            metadata=extra if isinstance(extra, dict) else {},
        )


def _check_role(role: object) -> str:
    if not isinstance(role, str):
        raise InvalidInputError(f"a turn's role must be a str, not {type(role).__name__}")
    lowered = role.strip().lower()
    if lowered in ROLES:
        return lowered
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    raise InvalidInputError(
        f"unknown chat role {role!r}; expected one of: {', '.join(ROLES)} (or {', '.join(_ALIASES)})"
    )


def _check_timestamp(value: object) -> None:
    if value is None or isinstance(value, datetime):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInputError(
            f"a turn's timestamp must be epoch seconds (a finite number), a datetime or None, got {value!r}"
        )


def turn_items(
    turns: Iterable[ChatTurn], *, user_id: str | None = None, keep: bool = True
) -> tuple[list[dict[str, Any]], list[int]]:
    """The ``observe_many`` items for ``turns`` and, for each item, its turn's position.

    A pure function (no I/O), shared by :func:`observe_turns` and
    :func:`aobserve_turns`. Empty turns get no item. ``user_id`` is the scope's user,
    the participant of user turns that have no name. Scope arguments are not in
    the items: the bound view sets them.

    Examples:
        >>> items, positions = turn_items(
        ...     [ChatTurn("user", "Hi, I'm Ana", message_id="m1"), ChatTurn("assistant", " ")],
        ...     user_id="ana",
        ... )
        >>> positions
        [0]
        >>> items[0]["source"], items[0]["key"], items[0]["participants"], items[0]["metadata"]
        ('user', 'm1', ['ana'], {'role': 'user', 'message_id': 'm1'})
    """
    if not isinstance(keep, bool):
        raise InvalidInputError(f"keep must be a bool, not {type(keep).__name__}")
    items: list[dict[str, Any]] = []
    positions: list[int] = []
    for n, turn in enumerate(_turn_list(turns)):
        if turn.is_empty:
            continue
        metadata: dict[str, Any] = {"role": turn.role}
        if turn.message_id is not None:
            metadata["message_id"] = turn.message_id
        if turn.name is not None:
            metadata["name"] = turn.name
        if turn.metadata:
            metadata[EXTRA_KEY] = turn.metadata
        speaker = turn.name if turn.name is not None else (user_id if turn.role == "user" else None)
        items.append(
            {
                "content": turn.text,
                "source": turn.role,
                "timestamp": turn.timestamp,
                "metadata": metadata,
                "participants": [speaker] if speaker is not None else None,
                "key": turn.message_id,
                "keep": keep,
            }
        )
        positions.append(n)
    return items, positions


def _turn_list(turns: object) -> list[ChatTurn]:
    if isinstance(turns, (str, bytes, ChatTurn, Mapping)) or not isinstance(turns, Iterable):
        raise InvalidInputError(f"turns must be a list of ChatTurn, not {type(turns).__name__}")
    out = list(turns)
    for n, turn in enumerate(out):
        if not isinstance(turn, ChatTurn):
            raise InvalidInputError(
                f"turn {n} must be a ChatTurn, not {type(turn).__name__}; convert framework messages first"
            )
    return out


def _place(ids: list[str | None], positions: list[int], count: int) -> list[str | None]:
    out: list[str | None] = [None] * count
    for memory_id, position in zip(ids, positions, strict=True):
        out[position] = memory_id
    return out


def observe_turns(
    target: Target,
    turns: Iterable[ChatTurn],
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    keep: bool = True,
) -> list[str | None]:
    """Store chat turns as episodes, once each; return one memory id (or ``None``) per turn.

    Args:
        target: a :class:`~ucma_core.Memory` (then the scope arguments say where the
            turns go) or a bound ``Memory.scope(...)`` view (then they must be
            omitted or equal to the view's).
        turns: the turns, oldest first.
        user_id: the user the turns belong to.
        agent_id: the agent the turns belong to.
        session_id: the conversation (``None``: the memory's current session).
        keep: store every turn whatever its importance (default); ``False`` lets the
            importance threshold drop unimportant turns (their position gets ``None``).

    Returns:
        For each turn, in order: its memory id (the existing one for a turn whose
        ``message_id`` was observed before), or ``None`` for an empty turn or one
        that was not kept.

    Raises:
        InvalidInputError: a turn that is not a :class:`ChatTurn`, a turn the memory
            refuses (too long, NUL characters…), or scope arguments that contradict a
            bound view. Nothing is stored when any turn is refused.
    """
    view = bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)
    turn_list = _turn_list(turns)
    items, positions = turn_items(turn_list, user_id=view.user_id, keep=keep)
    ids = view.observe_many(items) if items else []
    return _place(ids, positions, len(turn_list))


async def aobserve_turns(
    target: Target,
    turns: Iterable[ChatTurn],
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    keep: bool = True,
) -> list[str | None]:
    """Async :func:`observe_turns`, through the memory's async path (``aobserve_many``)."""
    view = bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)
    turn_list = _turn_list(turns)
    items, positions = turn_items(turn_list, user_id=view.user_id, keep=keep)
    ids = await view.aobserve_many(items) if items else []
    return _place(ids, positions, len(turn_list))
