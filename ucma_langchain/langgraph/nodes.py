"""Graph nodes that read from and write to UCMA: recall before the model, consolidation after.

Both find the memory the way LangGraph nodes find their resources: the one given to
the node, else a ``memory`` in the run's context (``graph.invoke(..., context=...)``)
or ``config["configurable"]``, else the run's Store when it is a
:class:`~ucma_langchain.langgraph.UCMAStore`. The scope comes from the run too
(:class:`~ucma_langchain.langgraph.ScopeKeys`: ``user_id``, ``agent_id``,
``thread_id`` → session, read from the context first, then ``configurable``).

.. code-block:: python

    builder.add_node("recall", recall_node(k=5, max_tokens=600))
    builder.add_node("consolidate", consolidation_node(every=10), defer=True)
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from ucma_core import Memory
from ucma_core.conversation import ChatTurn, observe_turns, render_memories
from ucma_core.errors import ConfigurationError, InvalidInputError, UCMAError
from ucma_core.records import MemoryType
from ucma_core.tokens import TiktokenCounter, TokenCounter
from ucma_langchain.langgraph.mirror import RECALL_MESSAGE_NAME, message_turns
from ucma_langchain.langgraph.scope import RunScope, ScopeKeys, scope_from_config
from ucma_langchain.langgraph.store import UCMAStore

__all__ = [
    "RECALL_MESSAGE_NAME",
    "ConsolidationNode",
    "RecallNode",
    "consolidation_node",
    "find_memory",
    "recall_node",
]

logger = logging.getLogger(__name__)


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


def _scope(config: RunnableConfig | None, keys: ScopeKeys, runtime: Any) -> RunScope:
    return scope_from_config(config, keys, context=getattr(runtime, "context", None))


class RecallNode:
    """Recall memories for the latest user message and add them to the state.

    Use :func:`recall_node` to make one. The node reads the last ``HumanMessage`` in
    ``state[messages_key]``, recalls the ``k`` most useful memories of the run's user
    (from every thread: ``session_id`` is not narrowed) and renders them with
    :func:`~ucma_core.conversation.render_memories` within ``max_tokens``. With
    ``output="message"`` (default) the block becomes the last message, a
    ``SystemMessage`` named ``"ucma_recall"``; the previous turn's one is removed, so
    the state holds one at most (and the checkpointer never observes it). With
    ``output="state"`` it is written to ``state[state_key]`` for the model node to
    place (for models that want the system message first).
    """

    def __init__(
        self,
        memory: Memory | None = None,
        *,
        k: int = 5,
        max_tokens: int = 800,
        messages_key: str = "messages",
        output: Literal["message", "state"] = "message",
        state_key: str = "memories",
        scope_keys: ScopeKeys | None = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        include_generated: bool = True,
        header: str = "Relevant memories:",
        token_counter: TokenCounter | None = None,
    ) -> None:
        if output not in ("message", "state"):
            raise InvalidInputError(f"output must be 'message' or 'state', not {output!r}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInputError(f"k must be an int in 1..1000, got {k!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be a positive int, got {max_tokens!r}")
        self.memory = memory
        self.k = k
        self.max_tokens = max_tokens
        self.messages_key = messages_key
        self.output = output
        self.state_key = state_key
        self.scope_keys = scope_keys or ScopeKeys()
        self.memory_types = list(memory_types) if memory_types is not None else None
        self.include_generated = include_generated
        self.header = header
        self._counter = token_counter

    def recall(self, memory: Memory, scope: RunScope, query: str) -> str:
        """The rendered block for ``query`` in ``scope`` (``""`` when nothing is recalled)."""
        results = memory.remember(
            query,
            k=self.k,
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            memory_types=self.memory_types,
            include_generated=self.include_generated,
        )
        if self._counter is None:
            self._counter = TiktokenCounter()
        return render_memories(
            results,
            max_tokens=self.max_tokens,
            token_counter=self._counter,
            now=memory.now(),
            header=self.header,
            timezone=memory.config.timezone,
        )

    def __call__(self, state: Any, config: RunnableConfig, runtime: Any = None) -> dict[str, Any]:
        messages = _messages(state, self.messages_key)
        query = next(
            (m.text for m in reversed(messages) if isinstance(m, HumanMessage) and m.text.strip()), ""
        )
        if not query.strip():
            return {}
        memory = find_memory(self.memory, config, runtime)
        block = self.recall(memory, _scope(config, self.scope_keys, runtime), query)
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
    """Observe the finished turn, then consolidate every ``every`` runs without holding up
    the reply. Use :func:`consolidation_node` to make one, and add it with
    ``defer=True`` so it runs after the rest of the step.

    The node observes the state's messages (once each, like the checkpointer); in a
    graph compiled with :class:`~ucma_langchain.langgraph.UCMACheckpointer`, which
    observes them as they arrive (with the time they arrived), pass
    ``observe=False``.

    Consolidation runs in a worker thread; the node waits for it at most
    ``timeout`` seconds and returns, leaving a longer cycle to finish in the
    background (one at a time per memory; none while the memory's own
    ``start_consolidation`` thread runs). :meth:`close` stops and joins it.
    """

    def __init__(
        self,
        memory: Memory | None = None,
        *,
        every: int = 10,
        timeout: float = 0.5,
        messages_key: str = "messages",
        scope_keys: ScopeKeys | None = None,
        roles: Sequence[str] = ("user", "assistant"),
        observe: bool = True,
    ) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InvalidInputError(f"every must be a positive int, got {every!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise InvalidInputError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        self.memory = memory
        self.every = every
        self.timeout = float(timeout)
        self.messages_key = messages_key
        self.scope_keys = scope_keys or ScopeKeys()
        self.roles = frozenset(roles)
        self.observe_turns = observe
        self._lock = threading.Lock()
        self._runs: dict[int, int] = {}
        self._workers: dict[int, tuple[threading.Thread, threading.Event]] = {}
        self.last_report: Any = None
        self.last_error: BaseException | None = None

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
        return observe_turns(
            memory, turns, user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id
        )

    def _consolidate(self, memory: Memory, stop: threading.Event) -> None:
        try:
            self.last_report = memory.consolidate(stop=stop)
        except UCMAError as e:
            self.last_error = e
            logger.error("UCMA consolidation after a LangGraph turn failed: %s", e)

    def start(self, memory: Memory) -> threading.Thread | None:
        """Start a consolidation cycle in the background unless one is running; returns its thread."""
        with self._lock:
            worker = self._workers.get(id(memory))
            if (worker is not None and worker[0].is_alive()) or memory.consolidation_running:
                return None
            stop = threading.Event()
            thread = threading.Thread(
                target=self._consolidate, args=(memory, stop), name="ucma-langgraph-consolidate", daemon=True
            )
            self._workers[id(memory)] = (thread, stop)
            thread.start()
            return thread

    def __call__(self, state: Any, config: RunnableConfig, runtime: Any = None) -> dict[str, Any]:
        memory = find_memory(self.memory, config, runtime)
        if self.observe_turns:
            scope = _scope(config, self.scope_keys, runtime)
            self.observe(memory, scope, _messages(state, self.messages_key))
        with self._lock:
            runs = self._runs[id(memory)] = self._runs.get(id(memory), 0) + 1
        if runs % self.every == 0:
            thread = self.start(memory)
            if thread is not None:
                thread.join(self.timeout)
        return {}

    def close(self, timeout: float | None = None) -> None:
        """Ask running cycles to stop (between phases or batches) and wait for them."""
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for _, stop in workers:
            stop.set()
        for thread, _ in workers:
            thread.join(timeout)


def recall_node(memory: Memory | None = None, **options: Any) -> RecallNode:
    """A :class:`RecallNode` (``k``, ``max_tokens``, ``output``, ``state_key``, ``scope_keys``,
    ``memory_types``, ``include_generated``, ``header``, ``token_counter``)."""
    return RecallNode(memory, **options)


def consolidation_node(memory: Memory | None = None, **options: Any) -> ConsolidationNode:
    """A :class:`ConsolidationNode` (``every``, ``timeout``, ``messages_key``, ``scope_keys``,
    ``roles``, ``observe``), to add with ``defer=True``."""
    return ConsolidationNode(memory, **options)
