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

Ordinary chat text is never refused:

* Text the core cannot keep (NUL characters, lone surrogate halves; also in the
  message id and name) is cleaned with :func:`~ucma_core.conversation.clean_text`,
  and the episode's metadata lists what changed under ``"cleaned"``.
* A turn longer than ``MemoryConfig.max_content_chars`` is stored in parts (see
  :mod:`ucma_core.conversation.parts`); its id in the returned list is its first
  part's, and :meth:`ChatTurn.from_records` reads the parts back as one turn.
* One turn the core still refuses (metadata over the memory's limits, a timestamp
  in milliseconds…) never blocks the others: it gets ``None``, the others are
  stored, and it is recorded without its text in the memory's skipped record
  (:meth:`Memory.skipped <ucma_core.Memory.skipped>`, ``verify()``, ``stats()``,
  ``ucma info``). A storage error (disk full, a closed memory) still raises.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ucma_core.config import LimitsConfig
from ucma_core.conversation.binding import bind
from ucma_core.conversation.parts import group_parts, part_key, part_metadata, split_text
from ucma_core.conversation.seam import clean_text
from ucma_core.errors import InvalidInputError
from ucma_core.records import Episode, MemoryRecord
from ucma_core.storage.skipped import Skipped, reason_of
from ucma_core.validation import check_metadata

if TYPE_CHECKING:
    from ucma_core.conversation.binding import Target
    from ucma_core.scoped import ScopedMemory

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

#: Key of the episode metadata that lists what cleaning or splitting changed.
CLEANED_KEY = "cleaned"

#: A turn's metadata sits one level down in the episode's (under ``"extra"``), so it may
#: nest one level less than the memory's limit.
_TURN_LIMITS = replace(LimitsConfig(), max_metadata_depth=LimitsConfig().max_metadata_depth - 1)


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
            check_metadata(self.metadata, limits=_TURN_LIMITS)
        except InvalidInputError as e:
            raise InvalidInputError(f"a turn's metadata is not usable: {e}") from e

    @property
    def is_empty(self) -> bool:
        """True when the text is empty or only whitespace (such turns are not stored)."""
        return not self.text.strip()

    @classmethod
    def from_records(cls, records: Iterable[MemoryRecord]) -> list[ChatTurn]:
        """The turns stored memories came from (e.g. ``Memory.history``), oldest first,
        with the parts of an over-long turn joined into one turn again.

        Consecutive parts of one turn (see :mod:`ucma_core.conversation.parts`) become
        one turn with their texts joined in part order, the first part's timestamp and
        the turn's message id. Parts that are missing (cut off by ``history(limit=...)``,
        or forgotten) are left out of the text; the others are still joined.

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory, MemoryConfig
            >>> from ucma_core.embedders import HashingEmbedder
            >>> config = MemoryConfig(max_content_chars=40)
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder(), config=config) as mem:
            ...     long = "The log starts here. " + "line of output. " * 5
            ...     _ = observe_turns(mem, [ChatTurn("user", long, message_id="m1")], session_id="s")
            ...     episodes = mem.history(session_id="s")
            ...     turns = ChatTurn.from_records(episodes)
            >>> len(episodes), len(turns), turns[0].text == long.rstrip(), turns[0].message_id
            (3, 1, True, 'm1')
        """
        listed = list(records)
        for record in listed:
            if not isinstance(record, MemoryRecord):
                raise InvalidInputError(f"record must be a MemoryRecord, not {type(record).__name__}")
        return [cls.from_part_records(group) for group in group_parts(listed)]

    @classmethod
    def from_part_records(cls, parts: Sequence[MemoryRecord]) -> ChatTurn:
        """One turn from the records of its parts, in part order (a group of
        :func:`~ucma_core.conversation.parts.group_parts`): the first part's turn with the
        parts' texts joined. One record gives :meth:`from_record`."""
        if not parts:
            raise InvalidInputError("from_part_records needs at least one record")
        first = cls.from_record(parts[0])
        return first if len(parts) == 1 else replace(first, text="".join(r.content for r in parts))

    @classmethod
    def from_record(cls, record: MemoryRecord) -> ChatTurn:
        """The turn a stored memory came from (e.g. an episode of ``Memory.history``).

        Role, message id, name and the turn's own metadata come from what
        :func:`observe_turns` stored; for a memory stored some other way the role
        is its ``source`` (``environment`` reads as ``tool``, ``consolidation`` as
        ``system``), the name its first participant, and the metadata all of its
        metadata. One part of an over-long turn gives that part's text; use
        :meth:`from_records` to read the parts back as one turn.
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
    turns: Iterable[ChatTurn],
    *,
    user_id: str | None = None,
    keep: bool = True,
    max_chars: int | None = None,
) -> tuple[list[dict[str, Any]], list[int]]:
    """The ``observe_many`` items for ``turns`` and, for each item, its turn's position.

    A pure function (no I/O), shared by :func:`observe_turns` and
    :func:`aobserve_turns`. Empty turns (also those that are blank once cleaned) get
    no item; text, message id and name are cleaned (see the module docstring); a
    turn longer than ``max_chars`` gets one item per part (consecutive, in order,
    all with ``keep=True``), so a position can repeat. ``user_id`` is the scope's
    user, the participant of user turns that have no name. Scope arguments are not
    in the items: the bound view sets them.

    Examples:
        >>> items, positions = turn_items(
        ...     [ChatTurn("user", "Hi, I'm Ana", message_id="m1"), ChatTurn("assistant", " ")],
        ...     user_id="ana",
        ... )
        >>> positions
        [0]
        >>> items[0]["source"], items[0]["key"], items[0]["participants"], items[0]["metadata"]
        ('user', 'm1', ['ana'], {'role': 'user', 'message_id': 'm1'})
        >>> items, positions = turn_items([ChatTurn("user", "a\\x00b " * 4)], max_chars=10)
        >>> positions, [i["content"] for i in items], items[0]["metadata"]["parts"]
        ([0, 0], ['a b a b a ', 'b a b'], 2)
    """
    if not isinstance(keep, bool):
        raise InvalidInputError(f"keep must be a bool, not {type(keep).__name__}")
    if max_chars is not None and (
        isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1
    ):
        raise InvalidInputError(f"max_chars must be a positive int or None, got {max_chars!r}")
    items: list[dict[str, Any]] = []
    positions: list[int] = []
    for n, turn in enumerate(_turn_list(turns)):
        group = _items_of(turn, user_id=user_id, keep=keep, max_chars=max_chars)
        items += group
        positions += [n] * len(group)
    return items, positions


def _items_of(
    turn: ChatTurn, *, user_id: str | None, keep: bool, max_chars: int | None
) -> list[dict[str, Any]]:
    """The items of one turn: none (empty), one, or one per part."""
    text, notes = clean_text(turn.text)
    if not text.strip():
        return []
    message_id, name = turn.message_id, turn.name
    if message_id is not None:
        message_id, changed = clean_text(message_id)
        notes += [f"message_id: {note}" for note in changed]
    if name is not None:
        name, changed = clean_text(name)
        notes += [f"name: {note}" for note in changed]
    parts, split_notes = split_text(text, max_chars) if max_chars is not None else ([text], [])
    notes += split_notes
    metadata: dict[str, Any] = {"role": turn.role}
    if message_id is not None:
        metadata["message_id"] = message_id
    if name is not None:
        metadata["name"] = name
    if turn.metadata:
        metadata[EXTRA_KEY] = turn.metadata
    speaker = name if name is not None else (user_id if turn.role == "user" else None)
    part_of = message_id if message_id is not None else uuid.uuid4().hex
    items = []
    for number, part in enumerate(parts, 1):
        meta = dict(metadata)
        if notes and number == 1:
            meta[CLEANED_KEY] = notes
        if len(parts) > 1:
            meta.update(part_metadata(number, len(parts), part_of))
        items.append(
            {
                "content": part,
                "source": turn.role,
                "timestamp": turn.timestamp,
                "metadata": meta,
                "participants": [speaker] if speaker is not None else None,
                "key": None if message_id is None else part_key(message_id, number),
                "keep": keep or len(parts) > 1,
            }
        )
    return items


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


#: One turn to store: its position in the call and its items (one, or one per part).
_Group = tuple[int, list[dict[str, Any]]]


def _batches(groups: list[_Group], cap: int) -> Iterator[list[_Group]]:
    """``groups`` in runs of at most ``cap`` items (a turn with more parts is a run alone)."""
    run: list[_Group] = []
    size = 0
    for group in groups:
        if run and size + len(group[1]) > cap:
            yield run
            run, size = [], 0
        run.append(group)
        size += len(group[1])
    if run:
        yield run


def _store(view: ScopedMemory, run: list[_Group], ids: list[str | None], turns: list[ChatTurn]) -> None:
    """Store one run of turns in one write; if the memory refuses one of them, store them one
    by one and record the turns it refuses (a storage error is raised)."""
    try:
        stored = view.observe_many([item for _, items in run for item in items])
    except InvalidInputError:
        pass
    else:
        at = 0
        for position, items in run:
            ids[position] = stored[at]
            at += len(items)
        return
    skipped: list[Skipped] = []
    for position, items in run:
        try:
            ids[position] = view.observe_many(items)[0]
        except InvalidInputError as e:
            turn = turns[position]
            skipped.append(
                Skipped(
                    at=view.memory.now(),
                    user_id=view.user_id,
                    agent_id=view.agent_id,
                    session_id=view.session_id,
                    message_id=items[0]["metadata"].get("message_id"),
                    role=turn.role,
                    chars=len(turn.text),
                    reason=reason_of(e),
                )
            )
    view.memory.record_skipped(skipped)


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
            importance threshold drop unimportant turns (their position gets ``None``;
            a turn stored in parts is always kept).

    Returns:
        For each turn, in order: its memory id (its first part's for a turn stored in
        parts; the existing one for a turn whose ``message_id`` was observed before),
        or ``None`` for an empty turn, one that was not kept, or one the memory
        refused (recorded in :meth:`Memory.skipped <ucma_core.Memory.skipped>`).

    Raises:
        InvalidInputError: ``turns`` is not a list of :class:`ChatTurn`, or scope
            arguments are not valid or contradict a bound view. No text is refused
            (see the module docstring).
        StorageError: the memory could not store them (disk full, …); turns of
            earlier writes of this call may be stored (observing them again stores
            nothing twice).
        ClosedMemoryError: the memory is closed.
    """
    view = bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)
    turn_list = _turn_list(turns)
    if not isinstance(keep, bool):
        raise InvalidInputError(f"keep must be a bool, not {type(keep).__name__}")
    config = view.memory.config
    ids: list[str | None] = [None] * len(turn_list)
    groups: list[_Group] = []
    for position, turn in enumerate(turn_list):
        items = _items_of(turn, user_id=view.user_id, keep=keep, max_chars=config.max_content_chars)
        if len(items) > 1 and items[0]["key"] is not None:
            # stored in parts before (maybe with another limit): the first part stands for the turn
            existing = view.get_by_key(items[0]["key"])
            if existing is not None:
                ids[position] = existing.id
                continue
        if items:
            groups.append((position, items))
    for run in _batches(groups, config.limits.max_batch_items):
        _store(view, run, ids, turn_list)
    return ids


async def aobserve_turns(
    target: Target,
    turns: Iterable[ChatTurn],
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    keep: bool = True,
) -> list[str | None]:
    """Async :func:`observe_turns` (the same call, run in a worker thread)."""
    return await asyncio.to_thread(
        observe_turns,
        target,
        turns,
        user_id=user_id,
        agent_id=agent_id,
        session_id=session_id,
        keep=keep,
    )
