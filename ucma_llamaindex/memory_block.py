"""``UCMAMemoryBlock``: UCMA as a long-term memory block of LlamaIndex's ``Memory``."""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from typing import Any

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from ucma_core.conversation import aobserve_turns, bind, render_memories
from ucma_core.memory import Memory
from ucma_core.records import RetrievalResult
from ucma_core.scoped import ScopedMemory
from ucma_core.tokens import TokenCounter
from ucma_llamaindex.messages import message_text, to_turns

__all__ = ["UCMAMemoryBlock"]

_RENDERED = 32  # recent renderings kept so atruncate can drop the least useful memories


class UCMAMemoryBlock(BaseMemoryBlock[str]):
    """A block of ``llama_index.core.memory.Memory`` that remembers with UCMA.

    * When ``Memory`` flushes messages out of its short-term queue (its token limit is
      reached), the block stores them as episodes (``_aput``), each message once, in
      the LlamaIndex session they came from (unless the block is bound to a session).
    * On every ``get``, the block recalls the ``k`` memories most worth recalling for the
      latest user message, from every session of the bound user, and renders them, dated
      and most useful first, within ``max_tokens``; ``Memory`` puts that text in its
      system message (``<memory><ucma_memory>…``).
    * When the context is over ``Memory``'s token limit, ``atruncate`` drops the least
      useful memories first. Set ``priority`` as for any block: ``0`` is never truncated,
      blocks of lower priority are truncated first.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view from ``Memory.scope(...)``.
        user_id / agent_id: the scope (a view's own user and agent when omitted).
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
        token_counter: counts tokens (default: the memory's, ``memory.token_counter``).
    """

    name: str = Field(default="ucma_memory", description="The name of the memory block.")
    description: str | None = Field(
        default="Memories UCMA recalls for the conversation, most useful first.",
        description="A description of the memory block.",
    )
    priority: int = Field(default=1, description="Truncation priority (0 = never truncate).")
    k: int = Field(default=5, ge=1, le=100, description="How many memories to recall.")
    max_tokens: int = Field(default=800, gt=0, description="Token budget of the rendered memories.")
    keep_all: bool = Field(default=True, description="Store every flushed message.")
    include_generated: bool = Field(default=True, description="Recall assistant text too.")
    user_id: str | None = Field(default=None, description="The user whose memories these are.")
    agent_id: str | None = Field(default=None, description="The agent, if any.")
    session_id: str | None = Field(default=None, description="A fixed session for stored messages.")

    _view: ScopedMemory = PrivateAttr()
    _counter: TokenCounter = PrivateAttr()
    _session: str | None = PrivateAttr(default=None)
    _rendered: OrderedDict[str, list[RetrievalResult]] = PrivateAttr(default_factory=OrderedDict)

    def __init__(
        self,
        memory: Memory | ScopedMemory,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        token_counter: TokenCounter | None = None,
        **fields: Any,
    ) -> None:
        view = bind(memory, user_id=user_id, agent_id=agent_id, session_id=session_id)
        fields.update(user_id=view.user_id, agent_id=view.agent_id, session_id=session_id)
        super().__init__(**fields)
        self._view = view
        self._session = session_id
        self._counter = token_counter or view.memory.token_counter

    @property
    def memory(self) -> ScopedMemory:
        """The UCMA view this block reads and writes."""
        return self._view

    def _render(self, results: list[RetrievalResult], max_tokens: int) -> str:
        memory = self._view.memory
        return render_memories(
            results,
            max_tokens=max_tokens,
            token_counter=self._counter,
            now=memory.now(),
            timezone=memory.config.timezone,
        )

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
            await aobserve_turns(
                view.memory,
                to_turns(group),
                user_id=view.user_id,
                agent_id=view.agent_id,
                session_id=session,
                keep=self.keep_all,
            )

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        """The memories recalled for the latest user message, rendered within ``max_tokens``."""
        query = _latest_text(messages or [])
        if not query:
            return ""
        results = await self._view.aremember(query, k=self.k, include_generated=self.include_generated)
        rendered = self._render(results, self.max_tokens)
        if rendered:
            self._rendered[rendered] = results
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
        shorter = self._render(results, budget)
        return shorter or None


def _latest_text(messages: list[ChatMessage]) -> str:
    """The text of the latest user message (or, without one, of the latest message with text)."""
    texts = [(m.role.value, message_text(m)) for m in messages]
    for role, text in reversed(texts):
        if role == "user" and text.strip():
            return text
    return next((text for _, text in reversed(texts) if text.strip()), "")
