"""Access marks of a memory folder, kept off the path of :meth:`~ucma_core.Memory.remember`.

A retrieval records that it returned a memory (:meth:`StoreContext.retrieved
<ucma_core.stores.context.StoreContext.retrieved>`: ``access_count``, ``retrieved_at``,
``retrieval_stability``). Ranking never reads these fields ("reading is not rehearsing"),
so :class:`AccessMarks` queues them in memory and writes them later, in one graph
transaction per batch and one journal entry per memory however often it was returned:

* before anything else reads or writes the folder (the memory calls :meth:`AccessMarks.settle`
  when it takes its lock for any call but ``remember``, and before ``flush`` and ``close``),
  so every read sees every mark (read-through);
* on a background thread, ``delay`` seconds after the first mark of a batch (a memory
  folder's is ``config.retention.access_mark_delay_seconds``).

A script that simply ends without ``close()`` keeps them too: the interpreter's exit closes
every memory still open (:mod:`~ucma_core.shutdown`), and a close writes them. A crash
(``kill -9``, power loss) loses the marks still queued, at most those of the last ``delay``
seconds since the last call that settled them; never stored data.

Examples:
    >>> import threading
    >>> applied = []
    >>> marks = AccessMarks(applied.extend, threading.RLock(), delay=60.0)
    >>> marks.add(["a", "b"], 10.0)
    >>> applied, len(marks)
    ([], 2)
    >>> marks.settle()
    True
    >>> applied
    [('a', 10.0), ('b', 10.0)]
    >>> marks.close()
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ucma_core.errors import StorageError

__all__ = ["DELAY", "KEEP_AT_MOST", "AccessMarks"]

#: Seconds between a batch's first mark and its background write.
DELAY = 0.5
#: Past this many queued marks (a store that keeps refusing the write) the oldest are dropped.
KEEP_AT_MOST = 20_000
#: Marks the background thread writes per hold of the memory's lock (a caller waits at most one).
_CHUNK = 256


class AccessMarks:
    """Queued ``(memory id, time)`` access marks of one open folder.

    Args:
        apply: writes marks (in the order given); runs with ``lock`` held.
        lock: the memory's lock (the background write takes it).
        delay: seconds from a batch's first mark to its background write.
    """

    def __init__(
        self,
        apply: Callable[[list[tuple[str, float]]], None],
        lock: Any,
        *,
        delay: float = DELAY,
    ) -> None:
        self._apply = apply
        self._lock = lock
        self._delay = delay
        self._queue: list[tuple[str, float]] = []
        self._guard = threading.Lock()
        self._wake = threading.Condition(self._guard)
        #: When the next background write is due (``None``: none is).
        self._due: float | None = None
        #: The writer thread, started with the first mark and kept until :meth:`close`
        #: (starting a thread per batch made a ``remember`` wait for it to be scheduled).
        self._thread: threading.Thread | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, ids: Sequence[str], now: float) -> None:
        """Queue that a retrieval returned ``ids`` at ``now`` (any thread, lock held or not)."""
        with self._guard:
            self._queue.extend((i, now) for i in ids)
            if len(self._queue) > KEEP_AT_MOST:
                del self._queue[: len(self._queue) - KEEP_AT_MOST]
            self._arm()

    def _arm(self) -> None:
        """Make a background write due ``delay`` from now unless one is due (``_guard`` held)."""
        if self._due is not None or self._closed:
            return
        self._due = time.monotonic() + self._delay
        if self._thread is None:
            thread = threading.Thread(target=self._background, name="ucma-access-marks", daemon=True)
            self._thread = thread
            thread.start()
        else:
            self._wake.notify()

    def settle(self, limit: int | None = None) -> bool:
        """Write the queued marks (at most ``limit`` of the oldest); the caller holds the lock.

        Returns ``False`` if the store refused the write (:class:`~ucma_core.errors.StorageError`):
        the marks go back to the head of the queue, for the next call (a read is never
        refused for them)."""
        if not self._queue:
            return True
        with self._guard:
            cut = len(self._queue) if limit is None else limit
            marks, self._queue = self._queue[:cut], self._queue[cut:]
        try:
            self._apply(marks)
        except StorageError:
            with self._guard:
                self._queue[:0] = marks
                if len(self._queue) > KEEP_AT_MOST:
                    del self._queue[: len(self._queue) - KEEP_AT_MOST]
            return False
        return True

    def close(self) -> None:
        """Stop the background writes (call :meth:`settle` first to keep the queued marks)."""
        with self._guard:
            self._closed = True
            self._due = None
            self._wake.notify()

    def _next_due(self) -> bool:
        """Wait until a background write is due; ``False`` once closed."""
        with self._guard:
            while not self._closed:
                if self._due is not None:
                    left = self._due - time.monotonic()
                    if left <= 0:
                        self._due = None
                        return True
                    self._wake.wait(left)
                else:
                    self._wake.wait()
            return False

    def _background(self) -> None:
        while self._next_due():
            while True:
                with self._lock:
                    if self._closed:
                        return
                    written = self.settle(_CHUNK)
                with self._guard:
                    if not self._queue or self._closed or self._due is not None:
                        break
                    if not written:  # tried again after the delay
                        self._arm()
                        break
