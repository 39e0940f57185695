"""The consolidation threads running in the background of one memory, and how they stop.

Two callers run sleep cycles on background threads of a memory: its own interval loop
(:meth:`Memory.start_consolidation <ucma_core.Memory.start_consolidation>`) and a
:class:`~ucma_core.conversation.Cadence` made with ``background=True``. Both start their
thread here, each with its own stop event, which the cycle checks between phases and
batches (``consolidate(stop=...)``). :meth:`Memory.stop_consolidation
<ucma_core.Memory.stop_consolidation>` stops them all, and
:meth:`Memory.close <ucma_core.Memory.close>` and the interpreter's exit
(:mod:`ucma_core.shutdown`) treat them alike:

1. :meth:`BackgroundCycles.close` sets every stop event and refuses new threads, first,
   so a running cycle winds down while the attachments store what they hold;
2. :meth:`BackgroundCycles.join` then waits for them (``close()`` up to 30 s, the exit up
   to :data:`~ucma_core.shutdown.LOCK_WAIT`), before the folder is closed under the
   memory's lock.

A cycle thus ends finished or stopped between two of its steps, each applied whole under
the memory's lock: it does not run on against a closed folder, nor keep taking the lock
the exit waits for. A cycle still inside one model call when the wait ends is left
behind: it holds no lock while the model answers, and its next step finds the memory
closed (:class:`~ucma_core.errors.ClosedMemoryError`) and applies nothing.

Examples:
    >>> cycles = BackgroundCycles()
    >>> seen = []
    >>> worker = cycles.start("demo", lambda stop: seen.append(stop.wait(60)))
    >>> cycles.running("demo")
    True
    >>> cycles.close()  # asks it to stop
    >>> cycles.join(60), seen, cycles.running()
    (True, [True], False)
    >>> cycles.start("demo", lambda stop: None) is None  # closed: no new thread
    True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["BackgroundCycles", "Worker"]


class Worker(NamedTuple):
    """One background thread and the event that asks it to stop."""

    thread: threading.Thread
    stop: threading.Event


class BackgroundCycles:
    """The background consolidation threads of one memory (any thread may call any method)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._workers: dict[threading.Thread, tuple[str, threading.Event]] = {}
        self._closed = False

    def start(self, name: str, run: Callable[[threading.Event], None]) -> Worker | None:
        """Run ``run(stop)`` on a daemon thread called ``name``; ``None`` (nothing started)
        once :meth:`close` was called."""
        stop = threading.Event()
        thread = threading.Thread(target=self._run, args=(run, stop), name=name, daemon=True)
        with self._guard:
            if self._closed:
                return None
            self._workers[thread] = (name, stop)
        try:
            thread.start()
        except BaseException:  # no thread (e.g. the interpreter is exiting): not running
            with self._guard:
                self._workers.pop(thread, None)
            raise
        return Worker(thread, stop)

    def _run(self, run: Callable[[threading.Event], None], stop: threading.Event) -> None:
        try:
            run(stop)
        finally:
            with self._guard:
                self._workers.pop(threading.current_thread(), None)

    def running(self, name: str | None = None) -> bool:
        """Whether a thread (called ``name``, if given) is still running."""
        with self._guard:
            return any(n == name or name is None for n, _ in self._workers.values())

    def ask_stop(self) -> None:
        """Set every running thread's stop event (each stops at its cycle's next check)."""
        with self._guard:
            stops = [stop for _, stop in self._workers.values()]
        for stop in stops:
            stop.set()

    def close(self) -> None:
        """Refuse new threads and ask the running ones to stop (the memory is closing)."""
        with self._guard:
            self._closed = True
        self.ask_stop()

    def join(self, timeout: float | None = None) -> bool:
        """Wait at most ``timeout`` seconds in all for the running threads; ``True`` if none
        runs when this returns."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._guard:  # a cycle that closes its own memory does not wait for itself
            threads = [thread for thread in self._workers if thread is not threading.current_thread()]
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in threads)

    def stop(self, timeout: float | None = None) -> bool:
        """:meth:`ask_stop`, then :meth:`join`."""
        self.ask_stop()
        return self.join(timeout)
