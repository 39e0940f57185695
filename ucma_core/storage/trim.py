"""Keep the C allocator's free pages from piling up: few heaps, and a rare trim.

Chroma's Rust code and the Python objects around each call allocate and free many
megabytes; glibc keeps what was freed in the heap of the thread that freed it, and gives
each new thread a heap of its own (up to 8 per core), so with Chroma's runtime and SQLite
workers and the memory's own threads (a dozen in all) the process's resident memory grows
far past what it holds. Two things keep it down, on glibc only (elsewhere both do nothing):

* :func:`limit_arenas` makes the threads share :data:`ARENAS` heaps (``mallopt``) when a
  memory opens its vector store, unless the environment's ``MALLOC_ARENA_MAX`` already
  chose: what one thread frees, the next allocation of another reuses. At 100k memories in
  ``benchmarks/throughput.py`` (hashing embedder, one run each under load) peak RSS with
  queries went from 464 to 434 MiB (plain Chroma 376); one heap gave 424 MiB but 25% more
  CPU per remember (threads queue for the one heap's lock).
* :meth:`Trimmer.maybe_trim` asks glibc to return whole free pages (``malloc_trim(0)``,
  which releases the GIL while it runs) at most once per ``interval`` seconds
  (:data:`INTERVAL`) and at most 1% of the time. The Chroma worker calls it between calls
  when none waits; a call that arrives during a trim waits for it, so the trim is rare:
  with two heaps little is left to return (at 10k, single runs under load: peak 198 MiB
  with no trim at all, 204 with one a second), and a trim once a second landed in
  remember's p95 (5 trims in 200 remembers, the longest 11.7 ms, on a quiet machine).

Examples:
    >>> trimmer = Trimmer(interval=3600.0)
    >>> trimmer.maybe_trim() in (True, False), trimmer.maybe_trim()
    (True, False)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import time
from collections.abc import Callable

__all__ = ["ARENAS", "INTERVAL", "Trimmer", "limit_arenas"]

#: Heaps (glibc "arenas") the process's threads share once a memory has opened its vector
#: store, unless the environment sets ``MALLOC_ARENA_MAX``. glibc gives each new thread its
#: own heap, up to 8 per core; Chroma's Rust runtime and SQLite workers, the Chroma worker,
#: the group-commit writer and the other memory threads then each keep their own free pages,
#: so transient allocations add up across heaps instead of reusing the same memory.
ARENAS = 2
#: Seconds at least between two trims of :class:`Trimmer` by default.
INTERVAL = 10.0


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_TRIM = _malloc_trim()
_M_ARENA_MAX = -8  # mallopt parameter (malloc.h)
_limited = False


def limit_arenas() -> bool:
    """Cap the heaps threads created from now on get at :data:`ARENAS` (``mallopt``), once
    per process; whether the cap was set (not on non-glibc systems, nor when the
    environment's ``MALLOC_ARENA_MAX`` already chose). Threads that already have a heap
    keep it; a host application that wants another cap sets ``MALLOC_ARENA_MAX``.
    """
    global _limited
    if _limited or _TRIM is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        done = bool(libc.mallopt(_M_ARENA_MAX, ARENAS))
    except (OSError, AttributeError):  # pragma: no cover - glibc has mallopt
        return False
    _limited = done
    return done


class Trimmer:
    """Calls ``malloc_trim(0)`` at most once per ``interval`` seconds (not thread-safe: one
    thread, the Chroma worker, calls it)."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self._next = 0.0

    def maybe_trim(self) -> bool:
        """Trim if the interval has passed since the last trim; whether it trimmed."""
        now = time.monotonic()
        if _TRIM is None or now < self._next:
            return False
        _TRIM(0)
        took = time.monotonic() - now
        # a slow trim (a large, fragmented heap) waits longer: at most 1% of the thread's time
        self._next = now + took + max(self.interval, 100 * took)
        return True
