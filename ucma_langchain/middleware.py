"""Long-term memory for ``langchain.agents.create_agent``: recall before the model, observe after the turn.

Needs the ``langchain`` package (``pip install 'ucma[agents]'``).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from typing_extensions import NotRequired

from ucma_langchain._deps import missing

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
        PrivateStateAttr,
    )
    from langgraph.channels.untracked_value import UntrackedValue
    from langgraph.runtime import Runtime
except ImportError as e:
    raise missing(e, extra="agents", feature="ucma_langchain.UCMAMiddleware") from e

from ucma_core import ConsolidationReport, Memory, ScopedMemory
from ucma_core.conversation import aobserve_turns, observe_turns, recall_query, render_memories
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_core.records import RetrievalResult
from ucma_langchain._scope import MemoryLike, view_of
from ucma_langchain.messages import to_turn, to_turns
from ucma_langchain.tools import MEMORY_TOOL_NAMES

__all__ = ["UCMAMiddleware", "UCMAState"]

_SCOPE_FIELDS = ("user_id", "agent_id", "session_id")


class UCMAState(AgentState[Any]):
    """The agent state :class:`UCMAMiddleware` adds to: the recalled block of the current run,
    kept out of the input, the output and the checkpoints."""

    ucma_recalled: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]


def _context_value(context: object, name: str) -> object:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def _latest_user_text(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            turn = to_turn(message)
            return (
                None if turn is None or turn.metadata.get("placeholder") else recall_query(turn.text) or None
            )
    return None


def _turn_start(messages: Sequence[BaseMessage]) -> int:
    """Where the current turn starts: after the last final answer (an ``AIMessage`` without
    tool calls) that precedes the latest user message."""
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=len(messages))
    for i in range(last_user - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AIMessage) and not message.tool_calls:
            return i + 1
    return 0


def _memory_tool_traffic(message: BaseMessage) -> bool:
    """A call of UCMA's own memory tools, or its result: copies of memories, not news."""
    if isinstance(message, ToolMessage):
        return message.name in MEMORY_TOOL_NAMES
    if isinstance(message, AIMessage) and message.tool_calls and not message.text.strip():
        return all(call["name"] in MEMORY_TOOL_NAMES for call in message.tool_calls)
    return False


def _with_block(system: SystemMessage | None, block: str) -> SystemMessage:
    if system is None:
        return SystemMessage(block)
    if isinstance(system.content, str):
        return SystemMessage(f"{system.content}\n\n{block}" if system.content else block)
    return SystemMessage([*system.content, {"type": "text", "text": block}])


class UCMAMiddleware(AgentMiddleware[UCMAState, Any, Any]):
    """Agent middleware that gives a ``create_agent`` agent UCMA's long-term memory.

    * **Before the agent runs** (once per invocation) it recalls the ``k`` memories
      most worth recalling for the latest user message, from every session of the
      scope, and renders them as one dated block within ``max_tokens``. Memories
      that are messages already in the conversation are left out.
    * **Before each model call** the block is appended to the system message of the
      model request. It is not added to the agent's messages, so it never enters the
      saved history or the checkpoints.
    * **After the agent turn** the turn's new user, assistant and tool messages are
      observed, once each: a message's id is its idempotency key, so a message seen
      before (with a checkpointer, or when you pass back the messages the agent
      returned) is not stored again, also after a restart. System messages are not
      observed, nor are the calls and results of UCMA's own memory tools (they are
      copies of memories). Messages are converted as :mod:`ucma_langchain.messages`
      describes.
    * With ``consolidate_every=N``, every N-th turn runs a sleep cycle
      (:meth:`~ucma_core.Memory.consolidate`), inline or, with
      ``consolidate_in_background=True``, on a background thread (one at a time).

    Scope: ``user_id`` / ``agent_id`` / ``session_id`` given here are fixed; those left
    unset are read from the run's context (``create_agent(..., context_schema=...)``
    and ``agent.invoke(..., context={"user_id": "ana"})``, a mapping or an object with
    those attributes). A context value that contradicts a fixed one is an error. The
    session defaults to the run's ``thread_id`` (when the agent has a checkpointer),
    else the memory's current session. With a view from ``Memory.scope(...)``, its
    user and agent are fixed, a session from the run's context narrows it, and the
    thread id is not used (the view keeps its own session).

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``.
        user_id / agent_id / session_id: the scope (see above).
        k: how many memories to recall.
        max_tokens: token budget of the recalled block.
        header: the block's first line.
        include_generated: ``False`` recalls only what users and tools said.
        consolidate_every: run consolidation every this many turns (``None``: never).
        consolidate_in_background: run it on a background thread instead of inline.

    Examples:
        ``create_agent(model, tools=create_memory_tools(mem, user_id="ana"),
        middleware=[UCMAMiddleware(mem, user_id="ana")])``; see ``docs/langchain.md``.
    """

    state_schema = UCMAState

    def __init__(
        self,
        memory: MemoryLike,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = 5,
        max_tokens: int = 800,
        header: str = "Relevant memories from earlier conversations:",
        include_generated: bool = True,
        consolidate_every: int | None = None,
        consolidate_in_background: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(memory, (Memory, ScopedMemory)):
            raise InvalidInputError(
                f"memory must be a Memory or a view from Memory.scope(...), not {type(memory).__name__}"
            )
        for what, value in (("k", k), ("max_tokens", max_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{what} must be a positive int, got {value!r}")
        if consolidate_every is not None and (
            isinstance(consolidate_every, bool)
            or not isinstance(consolidate_every, int)
            or consolidate_every < 1
        ):
            raise InvalidInputError(
                f"consolidate_every must be a positive int or None, got {consolidate_every!r}"
            )
        self.memory = memory
        self.bound = {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}
        view_of(memory, user_id=user_id, agent_id=agent_id, session_id=session_id)  # fail early on bad ids
        self.k = k
        self.max_tokens = max_tokens
        self.header = header
        self.include_generated = include_generated
        self.consolidate_every = consolidate_every
        self.consolidate_in_background = consolidate_in_background
        #: The report of the last consolidation this middleware ran.
        self.last_consolidation: ConsolidationReport | None = None
        self._turns = 0
        self._lock = threading.Lock()
        self._background: threading.Thread | None = None

    # ------------------------------------------------------------------ scope
    def view(self, runtime: Runtime[Any] | None = None) -> ScopedMemory:
        """The memory view for one run: the fixed scope completed from the run's context."""
        scope: dict[str, str | None] = {}
        context = None if runtime is None else runtime.context
        for what in _SCOPE_FIELDS:
            fixed, given = self.bound[what], _context_value(context, what)
            if given is not None and not isinstance(given, str):
                raise InvalidInputError(f"the run context's {what} must be a str, not {type(given).__name__}")
            if fixed is not None and given is not None and given != fixed:
                raise InvalidInputError(
                    f"the run context's {what}={given!r} contradicts this middleware's {what}={fixed!r}"
                )
            scope[what] = fixed if fixed is not None else given
        if scope["session_id"] is None and isinstance(self.memory, Memory) and runtime is not None:
            info = runtime.execution_info
            scope["session_id"] = None if info is None else info.thread_id
        return view_of(self.memory, **scope)

    # ------------------------------------------------------------------ recall
    def _block(
        self, view: ScopedMemory, results: list[RetrievalResult], messages: Sequence[BaseMessage]
    ) -> str:
        present = {m.id for m in messages if m.id}
        fresh = [r for r in results if r.record.metadata.get("message_id") not in present]
        memory = view.memory
        return render_memories(
            fresh,
            max_tokens=self.max_tokens,
            now=memory.now(),
            header=self.header,
            timezone=memory.config.timezone,
        )

    def before_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall for the latest user message; the block goes into this run's private state."""
        query = _latest_user_text(state["messages"])
        if query is None:
            return {"ucma_recalled": ""}
        view = self.view(runtime)
        results = view.remember(query, k=self.k, include_generated=self.include_generated)
        return {"ucma_recalled": self._block(view, results, state["messages"])}

    async def abefore_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        query = _latest_user_text(state["messages"])
        if query is None:
            return {"ucma_recalled": ""}
        view = self.view(runtime)
        results = await view.aremember(query, k=self.k, include_generated=self.include_generated)
        return {"ucma_recalled": self._block(view, results, state["messages"])}

    @staticmethod
    def _request(request: ModelRequest[Any]) -> ModelRequest[Any]:
        block = request.state.get("ucma_recalled")
        if not isinstance(block, str) or not block:
            return request
        return request.override(system_message=_with_block(request.system_message, block))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Call the model with the recalled block appended to the system message."""
        return handler(self._request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._request(request))

    # ------------------------------------------------------------------ observe
    @staticmethod
    def _new_messages(messages: Sequence[AnyMessage]) -> list[BaseMessage]:
        return [
            m
            for m in messages[_turn_start(messages) :]
            if not isinstance(m, SystemMessage) and not _memory_tool_traffic(m)
        ]

    def after_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Observe the turn's new messages (once each), then consolidate if one is due."""
        view = self.view(runtime)
        observe_turns(view, to_turns(self._new_messages(state["messages"])))
        if self._due():
            self._consolidate(view.memory)
        return None

    async def aafter_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        view = self.view(runtime)
        await aobserve_turns(view, to_turns(self._new_messages(state["messages"])))
        if self._due():
            if self.consolidate_in_background:
                self._consolidate(view.memory)
            else:
                self.last_consolidation = await view.memory.aconsolidate()
        return None

    # ------------------------------------------------------------------ consolidation
    def _due(self) -> bool:
        if self.consolidate_every is None:
            return False
        with self._lock:
            self._turns += 1
            return self._turns % self.consolidate_every == 0

    def _consolidate(self, memory: Memory) -> None:
        if not self.consolidate_in_background:
            self.last_consolidation = memory.consolidate()
            return
        with self._lock:
            if self._background is not None and self._background.is_alive():
                return  # one cycle at a time; the next due turn starts another
            self._background = threading.Thread(
                target=self._consolidate_quietly,
                args=(memory,),
                name="ucma-middleware-consolidation",
                daemon=True,
            )
            self._background.start()

    def _consolidate_quietly(self, memory: Memory) -> None:
        try:
            self.last_consolidation = memory.consolidate()
        except ClosedMemoryError:
            return  # the memory was closed while the cycle waited: nothing left to do

    def wait_for_consolidation(self, timeout: float | None = None) -> bool:
        """Wait for a background consolidation to finish; ``True`` if none is running now."""
        thread = self._background
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()
