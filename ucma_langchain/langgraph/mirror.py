"""Mirror the messages that reach a checkpointed state into UCMA, once each.

:class:`UCMACheckpointer` hands every stored checkpoint's message list to a
:class:`MessageMirror`. The mirror skips messages it has already seen in this
process, converts the rest to :class:`~ucma_core.conversation.ChatTurn` and hands
them to the core's :class:`~ucma_core.conversation.WriteBehind`, which stores them
(one scope at a time, through ``observe_turns``) with the message id as the
idempotency key, so a message is stored once even when a later process offers
the same thread again. Each offer carries the checkpoint's outbox number; the
checkpointer takes it out of its outbox once the turns are durable.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace

from langchain_core.messages import BaseMessage

from ucma_core import Memory
from ucma_core.conversation import DEFAULT_ROLES, RECALL_NAME, ChatTurn, WriteBehind, WriteFailure
from ucma_core.conversation.loop import check_roles, kept_turns
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_langchain.langgraph.scope import RunScope
from ucma_langchain.messages import to_turn

__all__ = ["RECALL_MESSAGE_NAME", "MessageMirror", "message_key", "message_turn", "message_turns"]

logger = logging.getLogger(__name__)

#: ``name`` of the system message :func:`~ucma_langchain.langgraph.recall_node` writes;
#: never observed (recalled memories must not become new memories).
RECALL_MESSAGE_NAME = RECALL_NAME


def message_key(scope: RunScope, position: int, message: BaseMessage) -> str:
    """The idempotency key of a message: its id, or for a message without one a digest of
    its thread, position and text."""
    if isinstance(message.id, str) and message.id:
        return message.id
    digest = hashlib.sha256(
        f"{scope.session_id}\x1f{position}\x1f{message.type}\x1f{message.text}".encode()
    ).hexdigest()
    return f"lg-msg:{digest[:32]}"


def message_turn(key: str, message: object) -> ChatTurn | None:
    """The turn of a message, keyed by ``key``, or ``None`` for one that gives no turn (not a
    message, unreadable: logged). Which turns are stored is the core's rule
    (:func:`~ucma_core.conversation.loop.kept_turns`)."""
    if not isinstance(message, BaseMessage):
        return None
    try:
        turn = to_turn(message)
    except InvalidInputError as e:
        logger.warning("UCMA skips a checkpointed message it cannot read: %s", e)
        return None
    if turn is None:
        return None
    return turn if turn.message_id == key else replace(turn, message_id=key)


def message_turns(scope: RunScope, messages: Sequence[object], roles: Iterable[str]) -> list[ChatTurn]:
    """The turns to observe for a list of messages, in order: the core's rule for what a
    conversation stores (roles, no recall block, no memory-tool traffic, no placeholders)."""
    turns = [
        turn
        for position, message in enumerate(messages)
        if isinstance(message, BaseMessage)
        and (turn := message_turn(message_key(scope, position, message), message)) is not None
    ]
    return [turns[n] for n in kept_turns(turns, frozenset(roles))]


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
            the memory together; :meth:`flush` cuts the wait short.
        seen_capacity: how many message keys to remember in this process; older ones
            fall back on the core's key check (still stored once).
        on_written: called with the tokens (outbox numbers) whose turns are durable.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        roles: Iterable[str] = DEFAULT_ROLES,
        background: bool = True,
        linger: float = 0.1,
        seen_capacity: int = 100_000,
        on_written: Callable[[list[Hashable]], object] | None = None,
    ) -> None:
        self.memory = memory
        self.roles = check_roles(roles)
        self.background = background
        self._last_stamp = 0.0
        self._capacity = seen_capacity
        self._seen: OrderedDict[tuple[str | None, str | None, str], None] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False
        self._writer = WriteBehind(
            memory, linger=linger, background=background, on_written=on_written, on_failed=self._unsee
        )

    # ------------------------------------------------------------------ intake
    def offer(self, scope: RunScope, messages: object, *, token: Hashable | None = None) -> int:
        """Queue the messages not yet observed for ``scope``; returns how many were new.

        Anything that is not a list of LangChain messages is ignored (a state
        channel may hold anything). ``token`` is reported as written once every turn
        offered so far for the scope is durable.
        """
        turns: list[ChatTurn] = []
        keys: list[tuple[str | None, str | None, str]] = []
        with self._lock:
            if self._closed:
                raise ClosedMemoryError("the checkpointer's message mirror is closed")
            fresh: list[ChatTurn] = []
            for position, message in enumerate(messages if isinstance(messages, (list, tuple)) else ()):
                if not isinstance(message, BaseMessage):
                    continue
                key = message_key(scope, position, message)
                seen_key = (scope.user_id, scope.agent_id, key)
                if seen_key in self._seen:
                    self._seen.move_to_end(seen_key)
                    continue
                keys.append(seen_key)
                turn = message_turn(key, message)
                if turn is not None:
                    fresh.append(turn)
            for n in kept_turns(fresh, self.roles):
                turn = fresh[n]
                if turn.timestamp is None:  # said now, whenever the worker observes it
                    turn = replace(turn, timestamp=self._stamp())
                turns.append(turn)
            for seen_key in keys:
                self._seen[seen_key] = None
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)
        if turns or token is not None:
            self._writer.submit(
                turns,
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                session_id=scope.session_id,
                token=token,
            )
        return len(turns)

    def _stamp(self) -> float:
        """The memory's time now, strictly after the previous stamp (keeps turn order)."""
        self._last_stamp = max(self.memory.now(), self._last_stamp + 1e-6)
        return self._last_stamp

    def _unsee(self, scope: tuple[str | None, str | None, str | None], turns: list[ChatTurn]) -> None:
        """A failed write: offer these turns again with the thread's next checkpoint."""
        with self._lock:
            for turn in turns:
                self._seen.pop((scope[0], scope[1], str(turn.message_id)), None)

    def forget(self, scope: RunScope) -> None:
        """Drop this process's record of the messages seen for ``scope``'s user and agent."""
        with self._lock:
            for seen_key in [k for k in self._seen if k[:2] == (scope.user_id, scope.agent_id)]:
                del self._seen[seen_key]

    def forget_user(self, user_id: str) -> None:
        """Drop the user's queued turns (waiting for a write in progress) and seen keys."""
        self._writer.forget_user(user_id)
        with self._lock:
            for seen_key in [k for k in self._seen if k[0] == user_id]:
                del self._seen[seen_key]

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        """Drop one session's queued turns (waiting for a write in progress)."""
        self._writer.forget_session(session_id, user_id=user_id, agent_id=agent_id)

    # ------------------------------------------------------------------ control
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued message is observed; ``False`` on timeout.

        Raises:
            Exception: the error the worker met while observing, if any.
        """
        return self._writer.flush(timeout)

    def drain(self, timeout: float | None = None) -> bool:
        """:meth:`flush` that leaves errors to be raised by a later flush."""
        return self._writer.drain(timeout)

    def close(self) -> None:
        """Observe what is queued, then stop the worker. Idempotent."""
        with self._lock:
            self._closed = True
        self._writer.close()

    @property
    def pending(self) -> int:
        """Offers queued and not yet observed."""
        return self._writer.pending

    @property
    def failures(self) -> tuple[WriteFailure, ...]:
        """Writes that failed in this process."""
        return self._writer.failures
