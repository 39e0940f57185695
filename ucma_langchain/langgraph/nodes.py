"""Graph nodes that read from and write to UCMA: recall before the model, consolidation after.

Both find the memory the way LangGraph nodes find their resources: the one given to
the node, else a ``memory`` in the run's context (``graph.invoke(..., context=...)``)
or ``config["configurable"]``, else the run's Store when it is a
:class:`~ucma_langchain.langgraph.UCMAStore`. The scope comes from the run too
(:class:`~ucma_langchain.langgraph.ScopeKeys`: ``user_id``, ``agent_id``,
``thread_id`` → session, read from the context first, then ``configurable``).

.. code-block:: python

    builder.add_node("recall", recall_node(k=5, max_tokens=800))
    builder.add_node("consolidate", consolidation_node(consolidate_every=10), defer=True)

The run's user must be stated: a node made without ``user_id`` raises
:class:`~ucma_core.errors.UserNotStatedError` for a run that names none; an app
without users says so with ``user_id=None``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from langchain_core.messages import BaseMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from ucma_core import ConsolidationReport, Memory
from ucma_core.conversation import (
    DEFAULT_HEADER,
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    DEFAULT_ROLES,
    UNSET,
    Cadence,
    ChatTurn,
    Conversation,
    RecallOptions,
    Unset,
    stated_user,
)
from ucma_core.conversation.loop import check_roles
from ucma_core.errors import ConfigurationError, InvalidInputError
from ucma_core.records import MemoryType
from ucma_core.tokens import TokenCounter
from ucma_langchain.langgraph.mirror import RECALL_MESSAGE_NAME, message_turns
from ucma_langchain.langgraph.scope import RunScope, ScopeKeys, scope_from_config
from ucma_langchain.langgraph.store import UCMAStore
from ucma_langchain.messages import to_turns

__all__ = [
    "RECALL_MESSAGE_NAME",
    "ConsolidationNode",
    "RecallNode",
    "consolidation_node",
    "find_memory",
    "recall_node",
    "run_scope",
]


def _context_value(context: object, key: str) -> object:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(key)
    return getattr(context, key, None)


def find_memory(memory: Memory | None, config: RunnableConfig | None, runtime: Any = None) -> Memory:
    """The memory a node uses: ``memory`` if given, else ``memory`` in the run's context or
    ``configurable``, else the run's :class:`UCMAStore`'s memory.

    Raises:
        ConfigurationError: none of them holds a :class:`~ucma_core.Memory`.
    """
    if memory is not None:
        return memory
    context = getattr(runtime, "context", None)
    configurable = (config or {}).get("configurable") or {}
    for candidate in (_context_value(context, "memory"), configurable.get("memory")):
        if isinstance(candidate, Memory):
            return candidate
    store = getattr(runtime, "store", None)
    if isinstance(store, UCMAStore):
        return store.memory
    raise ConfigurationError(
        "this node found no UCMA memory: give it one (recall_node(memory=mem)), compile the graph with "
        "store=UCMAStore(mem), or pass context={'memory': mem}"
    )


def _messages(state: Any, key: str) -> Sequence[BaseMessage]:
    value = state.get(key) if isinstance(state, Mapping) else getattr(state, key, None)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise InvalidInputError(f"state[{key!r}] must be a list of messages, not {type(value).__name__}")
    return [m for m in value if isinstance(m, BaseMessage)]


def run_scope(
    config: RunnableConfig | None,
    keys: ScopeKeys,
    runtime: Any,
    user_id: str | Unset | None,
    *,
    adapter: str,
) -> RunScope:
    """The run's scope, with its user stated: the node's fixed ``user_id``, else the run's.

    Raises:
        UserNotStatedError: neither names a user and the node was not made with
            ``user_id=None``.
    """
    scope = scope_from_config(config, keys, context=getattr(runtime, "context", None))
    where = f"config={{'configurable': {{{keys.user_id or 'user_id'!r}: ...}}}} (or the run's context)"
    user = stated_user(user_id, scope.user_id, adapter=adapter, where=where)
    return scope._replace(user_id=user)


class RecallNode:
    """Recall memories for the latest user message and add them to the state.

    Use :func:`recall_node` to make one. The node reads ``state[messages_key]`` and
    recalls, for its latest user message, the ``k`` most useful memories of the run's
    user (from every thread: ``session_id`` is not narrowed), rendered within
    ``max_tokens`` by :class:`ucma_core.conversation.Conversation` (messages already
    in the state, duplicates and content-free turns are left out). With
    ``output="message"`` (default) the block becomes the last message, a
    ``SystemMessage`` named ``"ucma_recall"``; the previous turn's one is removed, so
    the state holds one at most (and the checkpointer never observes it). With
    ``output="state"`` it is written to ``state[state_key]`` for the model node to
    place (for models that want the system message first).

    ``user_id``: fixed for every run; left out, each run must name its user
    (``scope_keys``), else :class:`~ucma_core.errors.UserNotStatedError`; ``None``
    says the app has no users.
    """

    def __init__(
        self,
        memory: Memory | None = None,
        *,
        user_id: str | Unset | None = UNSET,
        k: int = DEFAULT_K,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        messages_key: str = "messages",
        output: Literal["message", "state"] = "message",
        state_key: str = "memories",
        scope_keys: ScopeKeys | None = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        include_generated: bool = True,
        header: str = DEFAULT_HEADER,
        token_counter: TokenCounter | None = None,
    ) -> None:
        if output not in ("message", "state"):
            raise InvalidInputError(f"output must be 'message' or 'state', not {output!r}")
        self.options = RecallOptions(
            k=k,
            max_tokens=max_tokens,
            header=header,
            memory_types=tuple(memory_types) if memory_types is not None else None,
            include_generated=include_generated,
        )
        self.memory = memory
        self.user_id = user_id
        self.messages_key = messages_key
        self.output = output
        self.state_key = state_key
        self.scope_keys = scope_keys or ScopeKeys()
        self.token_counter = token_counter

    def conversation(self, memory: Memory, scope: RunScope) -> Conversation:
        """The conversation loop of one run's scope."""
        return Conversation(
            memory,
            self.options,
            token_counter=self.token_counter,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=scope.session_id,
        )

    def recall(self, memory: Memory, scope: RunScope, query: str) -> str:
        """The rendered block for ``query`` in ``scope`` (``""`` when nothing is recalled)."""
        return self.conversation(memory, scope).recall(query=query).block

    def __call__(self, state: Any, config: RunnableConfig, runtime: Any = None) -> dict[str, Any]:
        messages = _messages(state, self.messages_key)
        memory = find_memory(self.memory, config, runtime)
        scope = run_scope(config, self.scope_keys, runtime, self.user_id, adapter="RecallNode")
        block = self.conversation(memory, scope).recall(to_turns(messages)).block
        if self.output == "state":
            return {self.state_key: block}
        update: list[BaseMessage] = [
            RemoveMessage(id=m.id) for m in messages if m.name == RECALL_MESSAGE_NAME and m.id
        ]
        if block:
            update.append(
                SystemMessage(content=block, id=f"ucma-recall-{uuid.uuid4().hex}", name=RECALL_MESSAGE_NAME)
            )
        return {self.messages_key: update} if update else {}


class ConsolidationNode:
    """Observe the finished turn, then consolidate every ``consolidate_every`` runs without
    holding up the reply. Use :func:`consolidation_node` to make one, and add it with
    ``defer=True`` so it runs after the rest of the step.

    The node observes the state's messages of the ``roles`` (once each, like the
    checkpointer); in a graph compiled with
    :class:`~ucma_langchain.langgraph.UCMACheckpointer`, which observes them as they
    arrive (with the time they arrived), pass ``observe=False``. Observing needs the
    run's user, stated as for :class:`RecallNode`.

    Consolidation follows the core's :class:`~ucma_core.conversation.Cadence`: a cycle
    in a worker thread that the node waits for at most ``timeout`` seconds, leaving a
    longer cycle to finish in the background (one at a time per memory; none while the
    memory's own ``start_consolidation`` thread runs). :meth:`close` stops and joins it.
    """

    def __init__(
        self,
        memory: Memory | None = None,
        *,
        user_id: str | Unset | None = UNSET,
        consolidate_every: int = 10,
        timeout: float = 0.5,
        messages_key: str = "messages",
        scope_keys: ScopeKeys | None = None,
        roles: Iterable[str] = DEFAULT_ROLES,
        observe: bool = True,
    ) -> None:
        if consolidate_every is None:
            raise InvalidInputError("consolidate_every must be a positive int, got None")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise InvalidInputError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        self.cadence = Cadence(consolidate_every, background=True, wait_seconds=timeout)
        self.memory = memory
        self.user_id = user_id
        self.messages_key = messages_key
        self.scope_keys = scope_keys or ScopeKeys()
        self.roles = check_roles(roles)
        self.observe_turns = observe

    @property
    def last_report(self) -> ConsolidationReport | None:
        """The report of the last cycle this node ran."""
        return self.cadence.last_report

    @property
    def last_error(self) -> BaseException | None:
        """The error of the last cycle that failed, if any."""
        return self.cadence.last_error

    def observe(self, memory: Memory, scope: RunScope, messages: Sequence[BaseMessage]) -> list[str | None]:
        """Observe the messages not stored yet (each is stored once: its id is the key), dated
        now in their order."""
        now = memory.now()
        turns: list[ChatTurn] = [
            t if t.timestamp is not None else replace(t, timestamp=now + n * 1e-6)
            for n, t in enumerate(message_turns(scope, messages, self.roles))
        ]
        if not turns:
            return []
        talk = Conversation(
            memory,
            roles=self.roles,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            session_id=scope.session_id,
        )
        return talk.observe(turns)

    def __call__(self, state: Any, config: RunnableConfig, runtime: Any = None) -> dict[str, Any]:
        memory = find_memory(self.memory, config, runtime)
        if self.observe_turns:
            scope = run_scope(config, self.scope_keys, runtime, self.user_id, adapter="ConsolidationNode")
            self.observe(memory, scope, _messages(state, self.messages_key))
        self.cadence.tick(memory)
        return {}

    def close(self, timeout: float | None = None) -> None:
        """Ask running cycles to stop (between phases or batches) and wait for them."""
        self.cadence.close(timeout)


def recall_node(memory: Memory | None = None, **options: Any) -> RecallNode:
    """A :class:`RecallNode` (``user_id``, ``k``, ``max_tokens``, ``output``, ``state_key``,
    ``scope_keys``, ``memory_types``, ``include_generated``, ``header``, ``token_counter``)."""
    return RecallNode(memory, **options)


def consolidation_node(memory: Memory | None = None, **options: Any) -> ConsolidationNode:
    """A :class:`ConsolidationNode` (``user_id``, ``consolidate_every``, ``timeout``,
    ``messages_key``, ``scope_keys``, ``roles``, ``observe``), to add with ``defer=True``."""
    return ConsolidationNode(memory, **options)
