"""Mirror the messages that reach a checkpointed state into UCMA, once each.

:class:`UCMACheckpointer` hands every stored checkpoint's message list to a
:class:`MessageMirror`. The mirror skips messages it has already seen in this
process, converts the rest to :class:`~ucma_core.conversation.ChatTurn` and
observes them with the message id as the idempotency key, so a message is stored
once even when a later process sees the same thread again (the core derives the
memory id from the key). By default a single worker thread does the observing, so
a checkpoint write does not wait for the embedding and the vector-store write;
what arrives within ``linger`` seconds goes into the memory in one
``observe_many`` call. :meth:`MessageMirror.flush` waits for the worker, and an
error it met is raised there.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage

from ucma_core import Memory
from ucma_core.conversation import ChatTurn, turn_items
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_langchain.langgraph.scope import RunScope
from ucma_langchain.messages import to_turn

__all__ = ["RECALL_MESSAGE_NAME", "MessageMirror", "message_key", "message_turn", "message_turns"]

logger = logging.getLogger(__name__)

#: ``name`` of the system message :func:`~ucma_langchain.langgraph.recall_node` writes;
#: the mirror never observes it (recalled memories must not become new memories).
RECALL_MESSAGE_NAME = "ucma_recall"

_Batch = tuple[RunScope, list[ChatTurn]]

#: Queued by :meth:`MessageMirror.flush` to end the worker's wait for more batches.
_WAKE: Any = object()


def message_key(scope: RunScope, position: int, message: BaseMessage) -> str:
    """The idempotency key of a message: its id, or for a message without one a digest of
    its thread, position and text."""
    if isinstance(message.id, str) and message.id:
        return message.id
    digest = hashlib.sha256(
        f"{scope.session_id}\x1f{position}\x1f{message.type}\x1f{message.text}".encode()
    ).hexdigest()
    return f"lg-msg:{digest[:32]}"


def message_turn(key: str, message: object, roles: frozenset[str] | set[str]) -> ChatTurn | None:
    """The turn to observe for a message, or ``None`` for one that is not remembered: not a
    message, the recall block, a role left out, no text of its own (tool calls only, an
    image alone), or unreadable (logged)."""
    if not isinstance(message, BaseMessage) or message.name == RECALL_MESSAGE_NAME:
        return None
    try:
        turn = to_turn(message)
    except InvalidInputError as e:
        logger.warning("UCMA skips a checkpointed message it cannot read: %s", e)
        return None
    if turn is None or turn.role not in roles or turn.metadata.get("placeholder"):
        return None
    return turn if turn.message_id == key else replace(turn, message_id=key)


def message_turns(scope: RunScope, messages: Sequence[object], roles: Iterable[str]) -> list[ChatTurn]:
    """The turns to observe for a list of messages, in order (see :func:`message_turn`)."""
    wanted = frozenset(roles)
    turns = []
    for position, message in enumerate(messages):
        if isinstance(message, BaseMessage):
            turn = message_turn(message_key(scope, position, message), message, wanted)
            if turn is not None:
                turns.append(turn)
    return turns


class MessageMirror:
    """Observe new chat messages of checkpointed threads into a memory.

    Args:
        memory: the memory that receives the turns.
        roles: the roles observed (``"user"``, ``"assistant"``, ``"tool"``, ``"system"``).
            Default: user and assistant turns; tool results and system prompts are
            left out (tool output of a memory tool would otherwise be stored again).
            Messages without text (an assistant turn that only calls tools, an image
            alone) are never observed.
        background: observe in a worker thread (default) rather than in the caller.
        linger: how long (seconds) the worker waits for more messages before it
            observes, so the messages of a turn (and of concurrent threads) go into
            the memory in one write; :meth:`flush` cuts the wait short.
        seen_capacity: how many message keys to remember in this process; older ones
            fall back on the core's key check (still stored once).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        roles: Iterable[str] = ("user", "assistant"),
        background: bool = True,
        linger: float = 0.1,
        seen_capacity: int = 100_000,
    ) -> None:
        self.memory = memory
        self.roles = frozenset(roles)
        unknown = self.roles - {"user", "assistant", "tool", "system"}
        if unknown:
            raise InvalidInputError(f"unknown role(s) {sorted(unknown)}; use user, assistant, tool, system")
        self.background = background
        if isinstance(linger, bool) or not isinstance(linger, (int, float)) or not 0 <= linger <= 60:
            raise InvalidInputError(f"linger must be a number of seconds in 0..60, got {linger!r}")
        self.linger = float(linger)
        self._hurry = False
        self._last_stamp = 0.0
        self._capacity = seen_capacity
        self._seen: OrderedDict[tuple[str | None, str | None, str], None] = OrderedDict()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._error: BaseException | None = None
        self._queue: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._closed = False

    # ------------------------------------------------------------------ intake
    def offer(self, scope: RunScope, messages: object) -> int:
        """Queue the messages not yet observed for ``scope``; returns how many were new.

        Anything that is not a list of LangChain messages is ignored (a state
        channel may hold anything).
        """
        if not isinstance(messages, (list, tuple)):
            return 0
        turns: list[ChatTurn] = []
        keys: list[tuple[str | None, str | None, str]] = []
        with self._lock:
            if self._closed:
                raise ClosedMemoryError("the checkpointer's message mirror is closed")
            for position, message in enumerate(messages):
                if not isinstance(message, BaseMessage):
                    continue
                key = message_key(scope, position, message)
                seen_key = (scope.user_id, scope.agent_id, key)
                if seen_key in self._seen:
                    self._seen.move_to_end(seen_key)
                    continue
                turn = message_turn(key, message, self.roles)
                keys.append(seen_key)
                if turn is not None:
                    if turn.timestamp is None:  # said now, whenever the worker observes it
                        turn = replace(turn, timestamp=self._stamp())
                    turns.append(turn)
            for seen_key in keys:
                self._seen[seen_key] = None
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
            if turns:
                self._pending += 1
        if not turns:
            return 0
        if self.background:
            self._start()
            self._queue.put((scope, turns))
        else:
            self._observe([(scope, turns)])
        return len(turns)

    def _stamp(self) -> float:
        """The memory's time now, strictly after the previous stamp (keeps turn order)."""
        self._last_stamp = max(self.memory.now(), self._last_stamp + 1e-6)
        return self._last_stamp

    def forget(self, scope: RunScope) -> None:
        """Drop this process's record of the messages seen for ``scope``'s user and agent."""
        with self._lock:
            for seen_key in [k for k in self._seen if k[:2] == (scope.user_id, scope.agent_id)]:
                del self._seen[seen_key]

    # ------------------------------------------------------------------ worker
    def _start(self) -> None:
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="ucma-langgraph-mirror", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batches = [] if first is _WAKE else [first]
            stop = False
            deadline = time.monotonic() + self.linger
            while True:
                wait = deadline - time.monotonic()
                try:
                    lingering = wait > 0 and not self._hurry
                    more = self._queue.get(timeout=wait) if lingering else self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                if more is not _WAKE:
                    batches.append(more)
            if batches:
                self._observe(batches)
            if stop:
                return

    def _observe(self, batches: Sequence[_Batch]) -> None:
        """Observe queued batches with one ``observe_many`` call (one embedding batch, one
        Chroma write), each turn in its own scope."""
        try:
            items: list[dict[str, Any]] = []
            for scope, turns in batches:
                scoped, _ = turn_items(turns, user_id=scope.user_id, keep=True)
                for item in scoped:
                    item.update(user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id)
                items.extend(scoped)
            if items:
                self.memory.observe_many(items)
        except Exception as e:
            with self._lock:
                for scope, turns in batches:
                    for turn in turns:
                        self._seen.pop((scope.user_id, scope.agent_id, str(turn.message_id)), None)
                if self.background:
                    self._error = self._error or e
            if not self.background:
                raise
            logger.error("UCMA could not observe checkpointed messages (raised at flush()): %s", e)
        finally:
            self._finish(len(batches))

    def _finish(self, count: int) -> None:
        with self._lock:
            self._pending = max(0, self._pending - count)
            if self._pending == 0:
                self._idle.notify_all()

    # ------------------------------------------------------------------ control
    def raise_error(self) -> None:
        """Raise (once) the error the worker met, if any."""
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued message is observed (the worker stops lingering);
        ``False`` on timeout.

        Raises:
            Exception: the error the worker met while observing, if any.
        """
        with self._lock:
            self._hurry = True
            if self._pending:
                self._queue.put(_WAKE)
            done = self._idle.wait_for(lambda: self._pending == 0, timeout)
            self._hurry = False
        self.raise_error()
        return done

    def close(self) -> None:
        """Observe what is queued, then stop the worker. Idempotent."""
        try:
            self.flush()
        finally:
            with self._lock:
                self._closed = True
                worker = self._worker
            if worker is not None and worker.is_alive():
                self._queue.put(None)
                worker.join()

    @property
    def pending(self) -> int:
        """Batches queued and not yet observed."""
        return self._pending
