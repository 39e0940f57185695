"""The one thread that runs a vector store's Chroma calls, so a caller waits for at most a timeout.

A full disk can make Chroma wait forever inside a call, and the memory's lock must not
wait with it: every call of :class:`~ucma_core.storage.vectors.VectorStore` is queued
here, runs on a daemon thread, and its caller gets :class:`CallTimeout` after
``timeout`` seconds (the thread is then left behind and a new one started by the
store). Its start caps the process's C heaps (:func:`~ucma_core.storage.trim.limit_arenas`)
and, rarely, between calls when nothing is queued, the thread hands memory Chroma freed back
to the system (:class:`~ucma_core.storage.trim.Trimmer`).

Examples:
    >>> thread = ChromaThread(timeout=5.0)
    >>> thread.call(lambda: 6 * 7)
    42
    >>> thread.stop(wait=True)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ucma_core.errors import StorageError
from ucma_core.storage.trim import Trimmer, limit_arenas

__all__ = ["CallAbandoned", "CallTimeout", "ChromaThread"]

T = TypeVar("T")


class CallTimeout(Exception):
    """The caller stopped waiting for a Chroma call after the thread's timeout."""


class CallAbandoned(Exception):
    """The call was given up by :meth:`ChromaThread.abandon` (the reason is the message)."""


class ChromaThread:
    """One daemon thread that runs Chroma calls; the caller waits at most ``timeout`` seconds."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._jobs: list[tuple[Callable[[], Any], Future[Any]]] = []
        self._ready = threading.Condition()
        self._stopped = False
        self._current: Future[Any] | None = None
        self._trimmer = Trimmer()
        limit_arenas()  # before Chroma's client starts its threads
        self._thread = threading.Thread(target=self._loop, name="ucma-chroma", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._ready:
                while not self._jobs and not self._stopped:
                    self._ready.wait()
                if self._stopped and not self._jobs:
                    return
                fn, future = self._jobs.pop(0)
                self._current = future
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as e:  # handed to the caller, who decides
                with contextlib.suppress(InvalidStateError):  # abandoned meanwhile
                    future.set_exception(e)
            else:
                with contextlib.suppress(InvalidStateError):
                    future.set_result(result)
            if not self._jobs:
                self._trimmer.maybe_trim()  # between calls: nobody waits for it

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn``; :meth:`wait` for its answer."""
        future: Future[T] = Future()
        with self._ready:
            if self._stopped:
                raise StorageError("the Chroma worker is stopped")
            self._jobs.append((fn, future))
            self._ready.notify()
        return future

    def wait(self, future: Future[T]) -> T:
        """The answer of a call :meth:`submit` queued, waiting at most :attr:`timeout`."""
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout as e:
            future.cancel()
            raise CallTimeout() from e

    def call(self, fn: Callable[[], T]) -> T:
        return self.wait(self.submit(fn))

    def stop(self, *, wait: bool = False) -> None:
        """Let the thread end once the calls queued are done; ``wait`` (at most :attr:`timeout`)
        for that (not after a timeout: that thread is still in Chroma and is left behind)."""
        with self._ready:
            self._stopped = True
            self._ready.notify()
        if wait and threading.current_thread() is not self._thread:
            self._thread.join(self.timeout)

    def abandon(self, reason: str) -> None:
        """Make every caller waiting on this thread return now, with ``reason``: the running
        call's and those of the calls queued behind it, which then never run. The running call
        may be one nobody waits for (a read queued without waiting), and the call that should
        stop may be the one behind it.

        Examples:
            >>> import threading
            >>> thread, gate = ChromaThread(timeout=5.0), threading.Event()
            >>> running, queued = thread.submit(gate.wait), thread.submit(lambda: "never run")
            >>> thread.abandon("the disk is full")
            >>> thread.wait(queued)
            Traceback (most recent call last):
              ...
            ucma_core.storage.chromathread.CallAbandoned: the disk is full
            >>> _ = gate.set(), thread.stop(wait=True)
        """
        with self._ready:
            futures = [future for _, future in self._jobs]
            self._jobs.clear()
            if self._current is not None:
                futures.insert(0, self._current)
        for future in futures:
            with contextlib.suppress(InvalidStateError):  # finished meanwhile
                future.set_exception(CallAbandoned(reason))
