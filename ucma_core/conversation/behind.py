"""Writing chat turns behind the caller's back, without losing one.

A framework acknowledges a message (a checkpoint is stored, a turn ends) before the
memory has embedded it; :class:`WriteBehind` stores such turns on a worker thread so
the framework does not wait. It promises:

* **Per-item isolation.** Queued turns are written one scope (user, agent,
  session) at a time through :func:`~ucma_core.conversation.observe_turns`: a
  scope whose write fails never keeps another scope's turns out.
* **Nothing silently lost.** An error is recorded (:attr:`WriteBehind.failures`),
  logged, and raised by the next :meth:`~WriteBehind.flush` / :meth:`~WriteBehind.close`.
* **Drained on every way out.** The writer attaches itself to the memory, so
  ``Memory.close()`` stores what it holds first; an interpreter that exits without
  any ``close`` (a script that simply ends) closes the memory, which stores it too
  (:mod:`~ucma_core.shutdown`, which waits at most two minutes for it).
* **An outbox when the caller has one.** Each submission carries an optional
  ``token``; ``on_written(tokens)`` is called once its turns are durable in the
  memory, so an adapter whose framework keeps a durable log (LangGraph's
  checkpoint database) marks the entries done there and replays the rest when it
  next opens. Turns with a ``message_id`` are stored once however often they are
  offered, so a replay is harmless.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.conversation.turns import ChatTurn, observe_turns
from ucma_core.errors import ClosedMemoryError, InvalidInputError

if TYPE_CHECKING:
    from ucma_core.memory import Memory

__all__ = ["WriteBehind", "WriteFailure"]

logger = logging.getLogger(__name__)

#: Turns written per ``observe_turns`` call (well under ``max_batch_items``).
_CHUNK = 128
_numbers = itertools.count(1)

_Scope = tuple[str | None, str | None, str | None]


@dataclass(frozen=True)
class WriteFailure:
    """A write the worker could not make: the scope, how many turns, what went wrong, when."""

    user_id: str | None
    agent_id: str | None
    session_id: str | None
    turns: int
    error: str
    at: float


@dataclass
class _Item:
    scope: _Scope
    turns: list[ChatTurn]
    token: Hashable | None


_STOP: Any = object()
_WAKE: Any = object()


class WriteBehind:
    """A durable background writer of chat turns into one memory.

    Args:
        memory: the memory the turns go to (the writer attaches itself to it).
        linger: seconds the worker waits to gather more turns into one write (0..60).
        background: write on a worker thread (default); ``False`` writes inside
            :meth:`submit` and raises its error there.
        on_written: called on the worker with the tokens whose turns are durable
            (in submission order); an error it raises is recorded like a write's.
        on_failed: called on the worker with ``(user_id, agent_id, session_id)`` and the
            turns of a scope whose write failed (after it is recorded).
        name: the attachment name (default: a unique ``write-behind-N``).

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.conversation import ChatTurn, WriteBehind
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> done = []
        >>> writer = WriteBehind(mem, on_written=done.extend)
        >>> writer.submit([ChatTurn("user", "I moved to Lisbon.", message_id="m1")], user_id="ana", token=1)
        >>> mem.close()  # stores what the writer holds first
        >>> done
        [1]
    """

    def __init__(
        self,
        memory: Memory,
        *,
        linger: float = 0.1,
        background: bool = True,
        on_written: Callable[[list[Hashable]], object] | None = None,
        on_failed: Callable[[_Scope, list[ChatTurn]], object] | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(linger, bool) or not isinstance(linger, (int, float)) or not 0 <= linger <= 60:
            raise InvalidInputError(f"linger must be a number of seconds in 0..60, got {linger!r}")
        self.memory = memory
        self.linger = float(linger)
        self.background = bool(background)
        self.on_written = on_written
        self.on_failed = on_failed
        self._name = name or f"write-behind-{next(_numbers)}"
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._hurry = False
        self._dropped: set[_Scope] = set()
        self._drop_users: set[str] = set()
        self._errors: list[BaseException] = []
        self._failures: list[WriteFailure] = []
        self._worker: threading.Thread | None = None
        self._closed = False
        memory.attach(self)

    # ------------------------------------------------------------------ Attachment
    @property
    def name(self) -> str:
        return self._name

    def files(self) -> Sequence[Path]:
        return ()

    def verify(self) -> Sequence[str]:
        return [
            f"{f.turns} turn(s) of session {f.session_id!r} not stored: {f.error}" for f in self._failures
        ]

    def forget_user(self, user_id: str) -> None:
        """Drop the queued turns of ``user_id`` and wait for a write in progress."""
        with self._lock:
            self._drop_users.add(user_id)
        self.drain(None)
        with self._lock:
            self._drop_users.discard(user_id)

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        """Drop the queued turns of one session and wait for a write in progress."""
        with self._lock:
            self._dropped.add((user_id, agent_id, session_id))
        self.drain(None)
        with self._lock:
            self._dropped.discard((user_id, agent_id, session_id))

    # ------------------------------------------------------------------ intake
    def submit(
        self,
        turns: Sequence[ChatTurn],
        *,
        user_id: str | None,
        agent_id: str | None = None,
        session_id: str | None = None,
        token: Hashable | None = None,
    ) -> None:
        """Queue turns of one scope (``token``: reported to ``on_written`` once they are
        stored; an empty ``turns`` with a token is reported once everything before it is)."""
        item = _Item((user_id, agent_id, session_id), list(turns), token)
        with self._lock:
            if self._closed:
                raise ClosedMemoryError(f"the write-behind writer {self._name!r} is closed")
            self._pending += 1
        if not self.background:
            self._write([item], raise_errors=True)
            return
        self._start()
        self._queue.put(item)

    # ------------------------------------------------------------------ worker
    def _start(self) -> None:
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name=f"ucma-{self._name}", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            items = [] if first is _WAKE else [first]
            stop = False
            deadline = time.monotonic() + self.linger
            while True:
                wait = deadline - time.monotonic()
                try:
                    more = (
                        self._queue.get(timeout=wait)
                        if wait > 0 and not self._hurry
                        else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                if more is not _WAKE:
                    items.append(more)
            if items:
                self._write(items, raise_errors=False)
            if stop:
                return

    def _write(self, items: Sequence[_Item], *, raise_errors: bool) -> None:
        """Write each scope's turns (in order of first appearance), then report the tokens of
        the scopes that were stored."""
        groups: dict[_Scope, list[_Item]] = {}
        for item in items:
            groups.setdefault(item.scope, []).append(item)
        written: list[Hashable] = []
        try:
            for scope, group in groups.items():
                if self._is_dropped(scope):
                    continue
                turns = [t for item in group for t in item.turns]
                try:
                    for start in range(0, len(turns), _CHUNK):
                        observe_turns(
                            self.memory,
                            turns[start : start + _CHUNK],
                            user_id=scope[0],
                            agent_id=scope[1],
                            session_id=scope[2],
                        )
                except Exception as e:
                    self._record(scope, len(turns), e, raised=raise_errors)
                    if self.on_failed is not None:
                        self.on_failed(scope, turns)
                    if raise_errors:
                        raise
                    continue
                written += [item.token for item in group if item.token is not None]
            if written and self.on_written is not None:
                try:
                    self.on_written(written)
                except Exception as e:
                    self._record((None, None, None), 0, e, raised=raise_errors)
                    if raise_errors:
                        raise
        finally:
            with self._lock:
                self._pending = max(0, self._pending - len(items))
                if self._pending == 0:
                    self._idle.notify_all()

    def _is_dropped(self, scope: _Scope) -> bool:
        with self._lock:
            if scope[0] is not None and scope[0] in self._drop_users:
                return True
            return any(
                (user, session) == (scope[0], scope[2]) and agent in (None, scope[1])
                for user, agent, session in self._dropped
            )

    def _record(self, scope: _Scope, count: int, error: BaseException, *, raised: bool) -> None:
        """Keep a failure (and, unless it is raised to the caller now, the error for flush)."""
        failure = WriteFailure(*scope, turns=count, error=f"{type(error).__name__}: {error}", at=time.time())
        with self._lock:
            if not raised:
                self._errors.append(error)
            self._failures.append(failure)
        logger.error(
            "UCMA could not store %d queued turn(s) of user %r, session %r (raised at flush/close): %s",
            count,
            scope[0],
            scope[2],
            error,
        )

    # ------------------------------------------------------------------ control
    @property
    def pending(self) -> int:
        """Submissions queued and not yet written."""
        return self._pending

    @property
    def failures(self) -> tuple[WriteFailure, ...]:
        """Every write that failed in this process (kept after :meth:`flush` raised it)."""
        with self._lock:
            return tuple(self._failures)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued turn is written (``False`` on timeout); errors stay for
        :meth:`flush` to raise."""
        with self._lock:
            self._hurry = True
            if self._pending:
                self._queue.put(_WAKE)
            done = self._idle.wait_for(lambda: self._pending == 0, timeout)
            self._hurry = False
            return done

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued turn is written; ``False`` if ``timeout`` seconds passed.

        Raises:
            Exception: the first error met since the last flush (later ones are in
                :attr:`failures`).
        """
        done = self.drain(timeout)
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            raise errors[0]
        return done

    def close(self) -> None:
        """Write what is queued, stop the worker and detach from the memory. Idempotent.

        Raises:
            Exception: an error met while writing (see :meth:`flush`).
        """
        try:
            if not self._closed:
                self.flush()
        finally:
            with self._lock:
                already, self._closed = self._closed, True
                worker = self._worker
            if not already:
                if worker is not None and worker.is_alive():
                    self._queue.put(_STOP)
                    worker.join()
                self.memory.detach(self)
