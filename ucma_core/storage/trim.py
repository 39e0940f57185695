"""Hand the C allocator's free pages back to the system after Chroma calls.

Chroma's Rust code and the Python objects around each call allocate and free many
megabytes on the thread that runs Chroma calls; glibc keeps what was freed in that
thread's heap, so the process's resident memory grows far past what it holds (at 10k
memories in ``benchmarks/throughput.py``: peak 210 MiB without, 198 MiB with).
:meth:`Trimmer.maybe_trim` asks glibc to
return whole free pages (``malloc_trim(0)``, which releases the GIL while it runs) at
most once per ``interval`` seconds and at most 1% of the time; elsewhere (macOS, Windows,
musl) it does nothing. The Chroma worker calls it between calls when none waits; a call
that arrives during a trim waits for it (measured under load at 10k: 57 trims in a
minute, 0.9 s in all, the longest 196 ms).

Examples:
    >>> trimmer = Trimmer(interval=3600.0)
    >>> trimmer.maybe_trim() in (True, False), trimmer.maybe_trim()
    (True, False)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import time
from collections.abc import Callable

__all__ = ["Trimmer"]


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


class Trimmer:
    """Calls ``malloc_trim(0)`` at most once per ``interval`` seconds (not thread-safe: one
    thread, the Chroma worker, calls it)."""

    def __init__(self, interval: float = 1.0) -> None:
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
