"""A LangChain chat message history kept in UCMA, one session per history."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from ucma_core.conversation import UNSET, Unset, aobserve_turns, observe_turns, stated_view
from ucma_core.errors import InvalidInputError
from ucma_langchain._scope import MemoryLike
from ucma_langchain.messages import from_episodes, to_turns

__all__ = ["UCMAChatMessageHistory"]


class UCMAChatMessageHistory(BaseChatMessageHistory):
    """The messages of one conversation, stored as UCMA episodes.

    Messages come back in the order they were added, also after a restart, from
    any process that opens the same memory folder; each one is also a memory that
    ``remember`` and the retriever can recall. A message comes back equal to the one
    added (a message added without an id comes back without one, as with LangChain's
    ``InMemoryChatMessageHistory``). A message with an id is stored once, however often
    it is added (its id is the memory's idempotency key); one without an id is stored
    each time it is added, as the in-memory history appends it. Messages are converted
    as :mod:`ucma_langchain.messages` describes: text parts are kept (other content
    blocks are listed in the metadata), tool calls and tool results keep their ids,
    and empty messages are skipped.

    Works anywhere LangChain takes a ``BaseChatMessageHistory``, such as
    ``RunnableWithMessageHistory(chain, lambda session_id:
    UCMAChatMessageHistory(memory, session_id, user_id="ana"))``.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``.
        session_id: the conversation.
        user_id: whose conversation it is; must be stated (``None``: an app without users;
            a view's own user when left out).
        agent_id: the agent of the conversation (``None``: stored without one).
        limit: read only the last ``limit`` messages (``None``: all of them).

    Examples:
        >>> import tempfile
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> history = UCMAChatMessageHistory(mem, "chat-1", user_id="ana")
        >>> history.add_messages([HumanMessage("Hi, I'm Ana."), AIMessage("Hello Ana!")])
        >>> [(m.type, m.content) for m in history.messages]
        [('human', "Hi, I'm Ana."), ('ai', 'Hello Ana!')]
        >>> history.clear()
        >>> history.messages
        []
        >>> mem.close()
    """

    def __init__(
        self,
        memory: MemoryLike,
        session_id: str,
        *,
        user_id: str | Unset | None = UNSET,
        agent_id: str | None = None,
        limit: int | None = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInputError(f"session_id must be a non-empty str, got {session_id!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInputError(f"limit must be a non-negative int or None, got {limit!r}")
        self.view = stated_view(
            memory, user_id, adapter="UCMAChatMessageHistory", agent_id=agent_id, session_id=session_id
        )
        self.session_id = session_id
        self.limit = limit

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The session's messages, oldest first."""
        return from_episodes(self.view.history(limit=self.limit), fill_id=False)

    async def aget_messages(self) -> list[BaseMessage]:
        return from_episodes(await self.view.ahistory(limit=self.limit), fill_id=False)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store messages at the end of the session (one write for all of them)."""
        observe_turns(self.view, to_turns(messages))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await aobserve_turns(self.view, to_turns(messages))

    def clear(self) -> None:
        """Forget every memory of this session."""
        self.view.forget_session()

    async def aclear(self) -> None:
        await self.view.aforget_session()

    def __repr__(self) -> str:
        return f"UCMAChatMessageHistory(session_id={self.session_id!r}, user_id={self.view.user_id!r})"
