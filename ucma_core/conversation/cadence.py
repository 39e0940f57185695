"""One consolidation cadence for every adapter: a sleep cycle every N conversation turns.

:class:`Cadence` counts the turns an adapter reports (``tick``) per memory, and on
every ``consolidate_every``-th one runs :meth:`~ucma_core.Memory.consolidate`,
inline or on a background thread. One cycle runs at a time per memory, across every
cadence in the process: a due turn while a cycle runs (or while the memory's own
``start_consolidation`` thread is active) starts none, and the next due turn tries
again.

A background cycle is a thread of the memory's (:mod:`ucma_core.background`):
``Memory.close()``, ``Memory.stop_consolidation()`` and the interpreter's exit ask it to
stop between two steps and wait for it, as they do for ``start_consolidation``'s thread.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Final

from ucma_core.background import Worker
from ucma_core.consolidation import ConsolidationReport
from ucma_core.errors import ClosedMemoryError, InvalidInputError, UCMAError
from ucma_core.memory import Memory

__all__ = ["Cadence", "check_every"]

logger = logging.getLogger(__name__)

_REGISTRY_LOCK: Final = threading.Lock()
#: One lock per memory, held while a cycle started by any cadence runs.
_BUSY: weakref.WeakKeyDictionary[Memory, threading.Lock] = weakref.WeakKeyDictionary()


def _busy_lock(memory: Memory) -> threading.Lock:
    with _REGISTRY_LOCK:
        lock = _BUSY.get(memory)
        if lock is None:
            lock = _BUSY[memory] = threading.Lock()
        return lock


def check_every(value: object, what: str = "consolidate_every") -> int | None:
    """``value`` if it is a positive int or ``None``; otherwise :class:`InvalidInputError`."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidInputError(f"{what} must be a positive int or None, got {value!r}")
    return value


class Cadence:
    """Consolidation every ``consolidate_every`` turns of a conversation.

    Args:
        consolidate_every: run a cycle on every this many-th turn (per memory);
            ``None`` never runs one.
        background: run the cycle on a background thread instead of inline.
        wait_seconds: with ``background``, how long :meth:`tick` waits for the cycle
            before returning (a longer cycle goes on in the background).

    Attributes:
        last_report: the report of the last cycle this cadence ran (``None`` before).
        last_error: the error of the last background cycle that failed, if any.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
        ...     cadence = Cadence(2)
        ...     [cadence.tick(mem) is not None for _ in range(4)]
        [False, True, False, True]
    """

    def __init__(
        self, consolidate_every: int | None, *, background: bool = False, wait_seconds: float = 0.0
    ) -> None:
        self.consolidate_every = check_every(consolidate_every)
        if not isinstance(background, bool):
            raise InvalidInputError(f"background must be a bool, not {type(background).__name__}")
        if isinstance(wait_seconds, bool) or not isinstance(wait_seconds, (int, float)) or wait_seconds < 0:
            raise InvalidInputError(f"wait_seconds must be a number of seconds >= 0, got {wait_seconds!r}")
        self.background = background
        self.wait_seconds = float(wait_seconds)
        self.last_report: ConsolidationReport | None = None
        self.last_error: BaseException | None = None
        self._lock = threading.Lock()
        self._turns: dict[int, int] = {}
        self._workers: dict[int, Worker] = {}

    # ------------------------------------------------------------------ decisions (no I/O)
    def due(self, memory: Memory) -> bool:
        """Count one turn on ``memory``; whether a cycle is due on it."""
        if self.consolidate_every is None:
            return False
        with self._lock:
            turns = self._turns[id(memory)] = self._turns.get(id(memory), 0) + 1
        return turns % self.consolidate_every == 0

    # ------------------------------------------------------------------ shells
    def tick(self, memory: Memory) -> ConsolidationReport | None:
        """Count one finished turn; run a cycle if one is due (inline: its report)."""
        if not self.due(memory):
            return None
        if self.background:
            self.start(memory)
            return None
        return self.run(memory)

    async def atick(self, memory: Memory) -> ConsolidationReport | None:
        """Async :meth:`tick` (an inline cycle runs through ``aconsolidate``)."""
        if not self.due(memory):
            return None
        if self.background:
            self.start(memory)
            return None
        lock = _busy_lock(memory)
        if memory.consolidation_running or not lock.acquire(blocking=False):
            return None
        try:
            self.last_report = await memory.aconsolidate()
        finally:
            lock.release()
        return self.last_report

    def run(self, memory: Memory) -> ConsolidationReport | None:
        """Run one cycle inline now, unless one is running on ``memory`` (then ``None``)."""
        lock = _busy_lock(memory)
        if memory.consolidation_running or not lock.acquire(blocking=False):
            return None
        try:
            self.last_report = memory.consolidate()
        finally:
            lock.release()
        return self.last_report

    def start(self, memory: Memory) -> threading.Thread | None:
        """Start one cycle on a background thread unless one is running on ``memory``; waits
        ``wait_seconds`` for it and returns its thread (``None`` when none was started)."""
        lock = _busy_lock(memory)
        if memory.consolidation_running or not lock.acquire(blocking=False):
            return None
        try:  # a thread of the memory's: its close() stops it and waits for it
            worker = memory._background.start(
                "ucma-consolidation-cadence", lambda stop: self._cycle(memory, stop, lock)
            )
        except BaseException:
            lock.release()
            raise
        if worker is None:  # the memory is closing
            lock.release()
            return None
        with self._lock:
            self._workers[id(memory)] = worker
        if self.wait_seconds:
            worker.thread.join(self.wait_seconds)
        return worker.thread

    def _cycle(self, memory: Memory, stop: threading.Event, lock: threading.Lock) -> None:
        try:
            self.last_report = memory.consolidate(stop=stop)
        except ClosedMemoryError:
            return  # the memory was closed while the cycle waited: nothing left to do
        except UCMAError as e:
            self.last_error = e
            logger.error("UCMA consolidation after a conversation turn failed: %s", e)
        finally:
            lock.release()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for background cycles to finish; ``True`` if none is running now."""
        with self._lock:
            threads = [thread for thread, _ in self._workers.values()]
        for thread in threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in threads)

    def close(self, timeout: float | None = None) -> None:
        """Ask running background cycles to stop (between phases or batches) and wait for them."""
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for _, stop in workers:
            stop.set()
        for thread, _ in workers:
            thread.join(timeout)
