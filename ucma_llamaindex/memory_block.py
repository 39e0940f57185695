"""``UCMAMemoryBlock``: UCMA as a long-term memory block of LlamaIndex's ``Memory``."""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from ucma_core.conversation import (
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    DEFAULT_ROLES,
    UNSET,
    Conversation,
    RecallOptions,
    Unset,
    stated_view,
)
from ucma_core.memory import Memory
from ucma_core.records import RetrievalResult
from ucma_core.scoped import ScopedMemory
from ucma_core.tokens import TokenCounter
from ucma_llamaindex.messages import to_turns

__all__ = ["UCMAMemoryBlock"]

_RENDERED = 32  # recent renderings kept so atruncate can drop the least useful memories


class UCMAMemoryBlock(BaseMemoryBlock[str]):
    """A block of ``llama_index.core.memory.Memory`` that remembers with UCMA.

    * When ``Memory`` flushes messages out of its short-term queue (its token limit is
      reached), the block stores those of the ``roles`` (default: user and assistant;
      tool results only with ``"tool"``, never those of UCMA's own memory tools) as
      episodes (``_aput``), each message once, in the LlamaIndex session they came from
      (unless the block is bound to a session).
    * On every ``get``, the block recalls the ``k`` memories most worth recalling for the
      latest user message, from every session of the bound user, and renders them, dated
      and most useful first, within ``max_tokens``, by
      :class:`ucma_core.conversation.Conversation` (messages still in the short-term
      queue, duplicates and content-free turns are left out); ``Memory`` puts that text
      in its system message (``<memory><ucma_memory>…``).
    * When the context is over ``Memory``'s token limit, ``atruncate`` drops the least
      useful memories first. Set ``priority`` as for any block: ``0`` is never truncated,
      blocks of lower priority are truncated first.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view from ``Memory.scope(...)``.
        user_id: the user; required with a :class:`~ucma_core.Memory`
            (:class:`~ucma_core.errors.UserNotStatedError` without one), ``None`` for an
            app without users; a view's own user when omitted.
        agent_id: the agent (a view's own when omitted).
        session_id: the session flushed messages are stored in; by default each goes to
            its LlamaIndex ``Memory``'s ``session_id`` (else the view's session). Recall
            reads every session.
        name: the block's name (the tag it gets in the system message).
        k: how many memories to recall.
        max_tokens: token budget of the rendered memories.
        priority: LlamaIndex truncation priority (default 1).
        keep_all: store every flushed message whatever its importance (default); with
            ``False`` UCMA's importance threshold decides.
        include_generated: recall the assistant's own earlier words too.
        roles: the roles whose flushed messages are stored.
        token_counter: counts tokens (default: the memory's, ``memory.token_counter``).
    """

    name: str = Field(default="ucma_memory", description="The name of the memory block.")
    description: str | None = Field(
        default="Memories UCMA recalls for the conversation, most useful first.",
        description="A description of the memory block.",
    )
    priority: int = Field(default=1, description="Truncation priority (0 = never truncate).")
    k: int = Field(default=DEFAULT_K, ge=1, le=100, description="How many memories to recall.")
    max_tokens: int = Field(
        default=DEFAULT_MAX_TOKENS, gt=0, description="Token budget of the rendered memories."
    )
    keep_all: bool = Field(default=True, description="Store every flushed message.")
    include_generated: bool = Field(default=True, description="Recall assistant text too.")
    user_id: str | None = Field(default=None, description="The user whose memories these are.")
    agent_id: str | None = Field(default=None, description="The agent, if any.")
    session_id: str | None = Field(default=None, description="A fixed session for stored messages.")

    _view: ScopedMemory = PrivateAttr()
    _talk: Conversation = PrivateAttr()
    _roles: tuple[str, ...] = PrivateAttr()
    _counter: TokenCounter = PrivateAttr()
    _session: str | None = PrivateAttr(default=None)
    _rendered: OrderedDict[str, list[RetrievalResult]] = PrivateAttr(default_factory=OrderedDict)

    def __init__(
        self,
        memory: Memory | ScopedMemory,
        *,
        user_id: str | Unset | None = UNSET,
        agent_id: str | None = None,
        session_id: str | None = None,
        roles: Iterable[str] = DEFAULT_ROLES,
        token_counter: TokenCounter | None = None,
        **fields: Any,
    ) -> None:
        view = stated_view(
            memory, user_id, adapter="UCMAMemoryBlock", agent_id=agent_id, session_id=session_id
        )
        fields.update(user_id=view.user_id, agent_id=view.agent_id, session_id=session_id)
        super().__init__(**fields)
        self._view = view
        self._session = session_id
        self._counter = token_counter or view.memory.token_counter
        self._roles = tuple(roles)
        options = RecallOptions(
            k=self.k, max_tokens=self.max_tokens, include_generated=self.include_generated
        )
        self._talk = Conversation(view, options, roles=self._roles, token_counter=self._counter)

    @property
    def memory(self) -> ScopedMemory:
        """The UCMA view this block reads and writes."""
        return self._view

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store the messages flushed from short-term memory, grouped by their session."""
        by_session: defaultdict[str, list[ChatMessage]] = defaultdict(list)
        for message in messages:
            session = message.additional_kwargs.get("session_id")
            if self._session is not None or not isinstance(session, str):
                session = self._session or self._view.session_id
            by_session[session].append(message)
        view = self._view
        for session, group in by_session.items():
            talk = Conversation(
                view.memory,
                roles=self._roles,
                keep=self.keep_all,
                user_id=view.user_id,
                agent_id=view.agent_id,
                session_id=session,
            )
            await talk.aobserve(to_turns(group))

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The memories recalled for the latest user message, rendered within ``max_tokens``."""
        recalled = await self._talk.arecall(to_turns(messages or []))
        rendered = recalled.block
        if rendered:
            self._rendered[rendered] = recalled.results
            while len(self._rendered) > _RENDERED:
                self._rendered.popitem(last=False)
        return rendered

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """``content`` shortened by about ``tokens_to_truncate`` tokens, dropping the least
        useful memories first; ``None`` when nothing is left."""
        results = self._rendered.get(content)
        budget = self._counter.count(content) - tokens_to_truncate
        if results is None or budget <= 0:
            return None
        shorter = self._talk.render(results, budget)
        return shorter or None
