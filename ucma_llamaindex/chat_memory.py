"""``UCMAChatMemory``: UCMA as the ``memory=`` of LlamaIndex chat engines and agents."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.llm import LLM
from llama_index.core.memory.types import BaseMemory

from ucma_core.conversation import (
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    DEFAULT_ROLES,
    UNSET,
    ChatTurn,
    Conversation,
    Recalled,
    RecallOptions,
    Unset,
    stated_view,
)
from ucma_core.errors import InvalidInputError
from ucma_core.memory import Memory
from ucma_core.records import MemoryRecord
from ucma_core.scoped import ScopedMemory
from ucma_core.tokens import TokenCounter
from ucma_llamaindex.messages import message_text, to_message, to_turn

__all__ = ["UCMAChatMemory"]

_DEFAULT_TOKEN_LIMIT = 3000
_TOKEN_LIMIT_RATIO = 0.75  # share of an LLM's context window given to the history, as ChatMemoryBuffer
_ORIGINALS = 256  # multimodal messages kept as they were put, per chat memory
_FIRST_PAGE = 32  # messages read per get; four times more while they all fit
_TOKEN_COUNTS = 8192  # token counts of recent messages kept, by memory id


class UCMAChatMemory(BaseMemory):
    """A LlamaIndex chat memory kept in UCMA: one session's messages plus what UCMA recalls.

    Give it to ``SimpleChatEngine``, ``ContextChatEngine``, ``CondensePlusContextChatEngine``
    or a workflow agent (``FunctionAgent``, ``ReActAgent``) as ``memory=``.

    * ``put`` / ``aput`` (and ``put_messages``) store each message of the ``roles``
      (default: user and assistant; tool results only with ``"tool"``, never those of
      UCMA's own memory tools) once as an episode of the bound session (every message
      is kept, whatever its importance); a message
      with an ``additional_kwargs["message_id"]`` is never stored twice, even by another
      process. See :mod:`ucma_llamaindex.messages` for what a message keeps (text,
      tool calls; images and audio are left out and named).
    * ``get(input)`` returns the session's most recent messages that fit in
      ``token_limit`` (minus ``initial_token_count``, as ``ChatMemoryBuffer`` does;
      the window never starts with an assistant or tool message) and, first, a system
      message with the memories UCMA recalls for ``input`` (default: the latest user
      message) from every session of the user, within ``recall_token_limit`` tokens,
      by :class:`ucma_core.conversation.Conversation` (messages already in the window,
      duplicates and content-free turns are left out).
    * ``get_all`` returns the whole session; ``set`` replaces it; ``reset`` forgets it
      (its episodes are deleted from UCMA).

    Everything lives in the memory folder, so the same ``session_id`` in a new process
    continues the conversation, and memories of earlier sessions are recalled.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view from ``Memory.scope(...)``.
        user_id: the user; required with a :class:`~ucma_core.Memory`
            (:class:`~ucma_core.errors.UserNotStatedError` without one), ``None`` for an
            app without users; a view's own user when omitted.
        agent_id: the agent (a view's own when omitted).
        session_id: the conversation; default: the view's session, else the memory's
            current session (``memory.session_id``) when this object is made.
        token_limit: token budget of the recent messages.
        recall_k: how many memories to recall per ``get`` (0 turns recall off).
        recall_token_limit: token budget of the recalled-memories system message.
        include_generated: recall the assistant's own earlier words too.
        roles: the roles whose messages are stored.
        token_counter: counts tokens (default: the memory's, ``memory.token_counter``).

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> from llama_index.core.llms import ChatMessage
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> chat = UCMAChatMemory(mem, user_id="ana", session_id="s1")
        >>> chat.put(ChatMessage(role="user", content="My sister lives in Porto."))
        >>> [m.content for m in chat.get_all()]
        ['My sister lives in Porto.']
        >>> mem.close()
    """

    user_id: str | None = Field(default=None, description="The user whose memories these are.")
    agent_id: str | None = Field(default=None, description="The agent, if any.")
    session_id: str = Field(description="The conversation whose messages this memory holds.")
    token_limit: int = Field(
        default=_DEFAULT_TOKEN_LIMIT, gt=0, description="Token budget of recent messages."
    )
    recall_k: int = Field(default=DEFAULT_K, ge=0, le=100, description="Memories recalled per get (0: none).")
    recall_token_limit: int = Field(
        default=DEFAULT_MAX_TOKENS, gt=0, description="Token budget of recalled memories."
    )
    include_generated: bool = Field(default=True, description="Recall assistant text too.")

    _view: ScopedMemory = PrivateAttr()
    _talk: Conversation = PrivateAttr()
    _counter: TokenCounter = PrivateAttr()
    _token_counts: OrderedDict[str, int] = PrivateAttr(default_factory=OrderedDict)
    _originals: OrderedDict[str, ChatMessage] = PrivateAttr(default_factory=OrderedDict)

    def __init__(
        self,
        memory: Memory | ScopedMemory,
        *,
        user_id: str | Unset | None = UNSET,
        agent_id: str | None = None,
        session_id: str | None = None,
        token_limit: int = _DEFAULT_TOKEN_LIMIT,
        recall_k: int = DEFAULT_K,
        recall_token_limit: int = DEFAULT_MAX_TOKENS,
        include_generated: bool = True,
        roles: Iterable[str] = DEFAULT_ROLES,
        token_counter: TokenCounter | None = None,
    ) -> None:
        view = stated_view(
            memory, user_id, adapter="UCMAChatMemory", agent_id=agent_id, session_id=session_id
        )
        # Fix the session now: an unbound view would follow the memory's current session.
        view = view.memory.scope(user_id=view.user_id, agent_id=view.agent_id, session_id=view.session_id)
        fields: dict[str, Any] = {
            "user_id": view.user_id,
            "agent_id": view.agent_id,
            "session_id": view.session_id,
            "token_limit": token_limit,
            "recall_k": recall_k,
            "recall_token_limit": recall_token_limit,
            "include_generated": include_generated,
        }
        super().__init__(**fields)
        self._view = view
        self._counter = token_counter or view.memory.token_counter
        options = RecallOptions(
            k=max(recall_k, 1), max_tokens=recall_token_limit, include_generated=include_generated
        )
        self._talk = Conversation(view, options, roles=roles, token_counter=self._counter)

    @classmethod
    def class_name(cls) -> str:
        return "UCMAChatMemory"

    @classmethod
    def from_defaults(
        cls,
        memory: Memory | ScopedMemory | None = None,
        chat_history: list[ChatMessage] | None = None,
        llm: LLM | None = None,
        token_limit: int | None = None,
        **kwargs: Any,
    ) -> UCMAChatMemory:
        """A chat memory on ``memory``; ``token_limit`` defaults to 75% of ``llm``'s context
        window (as ``ChatMemoryBuffer``), and ``chat_history`` replaces the session's messages."""
        if memory is None:
            raise InvalidInputError("UCMAChatMemory.from_defaults needs memory=Memory(...)")
        if token_limit is None:
            token_limit = (
                int(llm.metadata.context_window * _TOKEN_LIMIT_RATIO)
                if llm is not None
                else _DEFAULT_TOKEN_LIMIT
            )
        chat = cls(memory, token_limit=token_limit, **kwargs)
        if chat_history is not None:
            chat.set(chat_history)
        return chat

    @property
    def memory(self) -> ScopedMemory:
        """The UCMA view this chat memory reads and writes (bound to its session)."""
        return self._view

    # ------------------------------------------------------------------ writes
    def _put(self, messages: list[ChatMessage]) -> list[str | None]:
        kept, turns = _turns(messages)
        ids = self._talk.observe(turns)
        self._remember_originals(kept, ids)
        return ids

    async def _aput(self, messages: list[ChatMessage]) -> list[str | None]:
        kept, turns = _turns(messages)
        ids = await self._talk.aobserve(turns)
        self._remember_originals(kept, ids)
        return ids

    def _remember_originals(self, messages: Sequence[ChatMessage], ids: list[str | None]) -> None:
        """Keep messages with blocks UCMA does not store (images, audio…) as they were put, so
        this process reads them back whole."""
        for message, memory_id in zip(messages, ids, strict=True):
            if memory_id is None or all(b.block_type in ("text", "tool_call") for b in message.blocks):
                continue
            self._originals[memory_id] = message.model_copy(deep=True)
            self._originals.move_to_end(memory_id)
            while len(self._originals) > _ORIGINALS:
                self._originals.popitem(last=False)

    def put(self, message: ChatMessage) -> None:
        """Store one message (nothing for an empty one)."""
        self.put_messages([message])

    async def aput(self, message: ChatMessage) -> None:
        """Async :meth:`put`."""
        await self.aput_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Store messages in order with one write."""
        self._put(messages)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        """Async :meth:`put_messages`."""
        await self._aput(messages)

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the session's messages with ``messages``.

        The new messages are stored first and the old ones deleted after, so a message
        that is refused (``InvalidInputError``) leaves the session as it was.
        """
        old = [record.id for record in self._view.history()]
        for memory_id in _stale(old, self._put(messages)):
            self._view.forget(memory_id)

    async def aset(self, messages: list[ChatMessage]) -> None:
        """Async :meth:`set`."""
        old = [record.id for record in await self._view.ahistory()]
        for memory_id in _stale(old, await self._aput(messages)):
            await self._view.aforget(memory_id)

    def reset(self) -> None:
        """Forget the session: its messages are deleted from UCMA."""
        self._view.forget_session()
        self._originals.clear()

    async def areset(self) -> None:
        """Async :meth:`reset`."""
        await self._view.aforget_session()
        self._originals.clear()

    # ------------------------------------------------------------------ reads
    def get_all(self) -> list[ChatMessage]:
        """Every message of the session, oldest first."""
        return [self._message(e) for e in self._view.history()]

    async def aget_all(self) -> list[ChatMessage]:
        """Async :meth:`get_all`."""
        return [self._message(e) for e in await self._view.ahistory()]

    def get(
        self, input: str | ChatMessage | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """The recalled memories (as a system message, when there are any) and the recent messages."""
        budget, limit = self._budget(initial_token_count), _FIRST_PAGE
        while (window := self._window(self._view.history(limit=limit), budget, limit)) is None:
            limit *= 4
        turns, query, shown = self._ask(input, window)
        recalled = self._talk.recall(turns, query=query, shown=shown) if self.recall_k else None
        return self._compose(window, recalled)

    async def aget(
        self, input: str | ChatMessage | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """Async :meth:`get`."""
        budget, limit = self._budget(initial_token_count), _FIRST_PAGE
        while (window := self._window(await self._view.ahistory(limit=limit), budget, limit)) is None:
            limit *= 4
        turns, query, shown = self._ask(input, window)
        recalled = await self._talk.arecall(turns, query=query, shown=shown) if self.recall_k else None
        return self._compose(window, recalled)

    # ------------------------------------------------------------------ helpers (no I/O)
    def _message(self, record: MemoryRecord) -> ChatMessage:
        original = self._originals.get(record.id)
        return original.model_copy(deep=True) if original is not None else to_message(record)

    def _budget(self, initial_token_count: int) -> int:
        if isinstance(initial_token_count, bool) or not isinstance(initial_token_count, int):
            raise InvalidInputError(f"initial_token_count must be an int, not {initial_token_count!r}")
        if initial_token_count > self.token_limit:
            raise InvalidInputError(
                f"initial_token_count {initial_token_count} exceeds the token limit {self.token_limit}"
            )
        return self.token_limit - initial_token_count

    def _tokens(self, record: MemoryRecord) -> int:
        count = self._token_counts.get(record.id)
        if count is None:
            count = self._counter.count(record.content)
            self._token_counts[record.id] = count
            if len(self._token_counts) > _TOKEN_COUNTS:
                self._token_counts.popitem(last=False)
        return count

    def _window(self, records: Sequence[MemoryRecord], budget: int, asked: int) -> list[MemoryRecord] | None:
        """The newest of ``records`` that fit in ``budget`` (a cut window does not start with an
        assistant or tool turn); ``None`` when all ``asked`` records fit and older ones may too."""
        used, start = 0, len(records)
        while start > 0 and used + self._tokens(records[start - 1]) <= budget:
            start -= 1
            used += self._tokens(records[start])
        if start == 0 and len(records) == asked:
            return None
        if start == len(records) and records:
            start = len(records) - 1  # one message over the limit: return it, the model will say so
        while 0 < start < len(records) - 1 and records[start].source in ("assistant", "tool"):
            start += 1
        return list(records[start:])

    def _ask(
        self, input: str | ChatMessage | None, window: list[MemoryRecord]
    ) -> tuple[list[ChatTurn], str | None, list[str]]:
        """What the loop recalls for: the window's turns, the query (``input`` when it has
        text, else the window's latest user turn) and the window's memory ids."""
        if isinstance(input, ChatMessage):
            input = message_text(input)
        query = input if isinstance(input, str) and input.strip() else None
        return [ChatTurn.from_record(r) for r in window], query, [r.id for r in window]

    def _compose(self, window: list[MemoryRecord], recalled: Recalled | None) -> list[ChatMessage]:
        messages = [self._message(record) for record in window]
        if recalled is not None and recalled.block:
            messages.insert(0, ChatMessage(role=MessageRole.SYSTEM, content=recalled.block))
        return messages


def _turns(messages: list[ChatMessage]) -> tuple[list[ChatMessage], list[ChatTurn]]:
    """The messages that give a turn, and their turns (in order)."""
    if isinstance(messages, ChatMessage):
        raise InvalidInputError("expected a list of ChatMessage, got a single ChatMessage")
    pairs = [(message, turn) for message in messages if (turn := to_turn(message)) is not None]
    return [m for m, _ in pairs], [t for _, t in pairs]


def _stale(old: list[str], kept: list[str | None]) -> list[str]:
    """The ids of ``old`` that ``kept`` does not name again (a message stored before, by id)."""
    again = set(kept)
    return [memory_id for memory_id in old if memory_id not in again]
