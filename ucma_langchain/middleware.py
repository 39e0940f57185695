"""Long-term memory for ``langchain.agents.create_agent``: recall before the model, observe after the turn.

Needs the ``langchain`` package (``pip install 'ucma[agents]'``). The loop itself (what to
recall, what was already shown, what to store, when to consolidate) is
:class:`ucma_core.conversation.Conversation`; this module converts and plugs it in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
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
from ucma_core.conversation import (
    DEFAULT_HEADER,
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    DEFAULT_ROLES,
    UNSET,
    Cadence,
    Conversation,
    RecallOptions,
    Unset,
    stated_user,
)
from ucma_core.conversation.loop import check_roles
from ucma_core.errors import InvalidInputError
from ucma_langchain._scope import MemoryLike, view_of
from ucma_langchain.messages import to_turns

__all__ = ["UCMAMiddleware", "UCMAState"]

_WHERE = "agent.invoke(..., context={'user_id': ...})"


class UCMAState(AgentState[Any]):
    """The agent state :class:`UCMAMiddleware` adds to: the recalled block of the current run,
    kept out of the input, the output and the checkpoints."""

    ucma_recalled: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]


def _context_value(context: object, name: str) -> str | None:
    value = context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"the run context's {name} must be a str, not {type(value).__name__}")
    return value


def _turn_start(messages: Sequence[BaseMessage]) -> int:
    """Where the current turn starts: after the last final answer (an ``AIMessage`` without
    tool calls) that precedes the latest user message."""
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=len(messages))
    for i in range(last_user - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AIMessage) and not message.tool_calls:
            return i + 1
    return 0


def _with_block(system: SystemMessage | None, block: str) -> SystemMessage:
    if system is None:
        return SystemMessage(block)
    if isinstance(system.content, str):
        return SystemMessage(f"{system.content}\n\n{block}" if system.content else block)
    return SystemMessage([*system.content, {"type": "text", "text": block}])


class UCMAMiddleware(AgentMiddleware[UCMAState, Any, Any]):
    """Agent middleware that gives a ``create_agent`` agent UCMA's long-term memory.

    * **Before the agent runs** (once per invocation) it recalls, for the latest user
      message, the ``k`` memories most worth recalling from every session of the
      scope, and renders them as one dated block within ``max_tokens``
      (:class:`ucma_core.conversation.Conversation`: messages already in the
      conversation, duplicates and content-free turns are left out).
    * **Before each model call** the block is appended to the system message of the
      model request. It is not added to the agent's messages, so it never enters the
      saved history or the checkpoints.
    * **After the agent turn** the turn's new messages of the ``roles`` (default: user
      and assistant) are observed, once each: a message's id is its idempotency key,
      so a message seen before (with a checkpointer, or when you pass back the
      messages the agent returned) is not stored again, also after a restart. Tool
      results are stored only with ``"tool"`` in ``roles``; the calls and results of
      UCMA's own memory tools never are (they are copies of memories).
    * With ``consolidate_every=N``, every N-th turn runs a sleep cycle
      (:meth:`~ucma_core.Memory.consolidate`), inline or, with
      ``consolidate_in_background=True``, on a background thread (one at a time).

    Scope: the user must be stated. ``user_id`` given here is fixed; left out, each
    run's context must carry one (``create_agent(..., context_schema=...)`` and
    ``agent.invoke(..., context={"user_id": "ana"})``, a mapping or an object with that
    attribute), else the run raises :class:`~ucma_core.errors.UserNotStatedError`. An
    app without users says so with ``user_id=None``. ``agent_id`` / ``session_id``
    work the same way but may be left out. A context value that contradicts a fixed
    one is an error. The session defaults to the run's ``thread_id`` (when the agent
    has a checkpointer), else the memory's current session. With a view from
    ``Memory.scope(...)``, its user and agent are fixed, a session from the run's
    context narrows it, and the thread id is not used.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``.
        user_id: the user (a str), ``None`` for an app without users, or left out to read
            it from each run's context.
        agent_id / session_id: the rest of the scope (see above).
        k: how many memories to recall.
        max_tokens: token budget of the recalled block.
        header: the block's first line.
        include_generated: ``False`` recalls only what users and tools said.
        roles: the roles whose messages are stored (``"user"``, ``"assistant"``,
            ``"tool"``, ``"system"``).
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
        user_id: str | Unset | None = UNSET,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = DEFAULT_K,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        header: str = DEFAULT_HEADER,
        include_generated: bool = True,
        roles: Iterable[str] = DEFAULT_ROLES,
        consolidate_every: int | None = None,
        consolidate_in_background: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(memory, (Memory, ScopedMemory)):
            raise InvalidInputError(
                f"memory must be a Memory or a view from Memory.scope(...), not {type(memory).__name__}"
            )
        self.options = RecallOptions(
            k=k, max_tokens=max_tokens, header=header, include_generated=include_generated
        )
        self.roles = check_roles(roles)
        self.cadence = Cadence(consolidate_every, background=consolidate_in_background)
        fixed = None if isinstance(user_id, Unset) else user_id
        view_of(memory, user_id=fixed, agent_id=agent_id, session_id=session_id)  # fail early on bad ids
        self.memory = memory
        self.user_id: str | Unset | None = memory.user_id if isinstance(memory, ScopedMemory) else user_id
        self.agent_id = agent_id
        self.session_id = session_id

    @property
    def last_consolidation(self) -> ConsolidationReport | None:
        """The report of the last consolidation this middleware ran."""
        return self.cadence.last_report

    # ------------------------------------------------------------------ scope
    def view(self, runtime: Runtime[Any] | None = None) -> ScopedMemory:
        """The memory view for one run: the fixed scope completed from the run's context.

        Raises:
            UserNotStatedError: no user here nor in the run's context, and this middleware
                was not made with ``user_id=None``.
        """
        context = None if runtime is None else runtime.context
        user = stated_user(
            self.user_id, _context_value(context, "user_id"), adapter="UCMAMiddleware", where=_WHERE
        )
        scope: dict[str, str | None] = {"user_id": user}
        for what, fixed in (("agent_id", self.agent_id), ("session_id", self.session_id)):
            given = _context_value(context, what)
            if fixed is not None and given is not None and given != fixed:
                raise InvalidInputError(
                    f"the run context's {what}={given!r} contradicts this middleware's {what}={fixed!r}"
                )
            scope[what] = fixed if fixed is not None else given
        if scope["session_id"] is None and isinstance(self.memory, Memory) and runtime is not None:
            info = runtime.execution_info
            scope["session_id"] = None if info is None else info.thread_id
        return view_of(self.memory, **scope)

    def conversation(self, runtime: Runtime[Any] | None = None) -> Conversation:
        """The conversation loop for one run (see :meth:`view`)."""
        return Conversation(self.view(runtime), self.options, roles=self.roles, cadence=self.cadence)

    # ------------------------------------------------------------------ recall
    def before_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall for the latest user message; the block goes into this run's private state."""
        recalled = self.conversation(runtime).recall(to_turns(state["messages"]))
        return {"ucma_recalled": recalled.block}

    async def abefore_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        recalled = await self.conversation(runtime).arecall(to_turns(state["messages"]))
        return {"ucma_recalled": recalled.block}

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
    def after_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Observe the turn's new messages (once each), then consolidate if one is due."""
        talk = self.conversation(runtime)
        talk.observe(_new_turns(state["messages"]))
        talk.after_turn()
        return None

    async def aafter_agent(self, state: UCMAState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        talk = self.conversation(runtime)
        await talk.aobserve(_new_turns(state["messages"]))
        await talk.aafter_turn()
        return None

    def wait_for_consolidation(self, timeout: float | None = None) -> bool:
        """Wait for a background consolidation to finish; ``True`` if none is running now."""
        return self.cadence.wait(timeout)


def _new_turns(messages: Sequence[AnyMessage]) -> list[Any]:
    return to_turns(messages[_turn_start(messages) :])
