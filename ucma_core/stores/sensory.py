"""The sensory buffer: a bounded ring of raw input, kept for a short time.

Every observation passes through it, whether or not it is important enough to be
stored; the ones that were stored carry their memory id. Entries fall out when the
ring is full or when they are older than the TTL.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from ucma_core.protocols import Clock

__all__ = ["SensoryBuffer", "SensoryEntry"]


@dataclass(frozen=True)
class SensoryEntry:
    content: str
    source: str
    timestamp: float
    received_at: float
    importance: float
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    memory_id: str | None


class SensoryBuffer:
    """Thread-safe ring buffer with a time-to-live (in the memory's clock)."""

    def __init__(self, capacity: int, ttl_seconds: float, clock: Clock) -> None:
        self._entries: deque[SensoryEntry] = deque(maxlen=capacity)
        self._ttl = ttl_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self.total_ingested = 0

    def ingest(self, entry: SensoryEntry) -> None:
        with self._lock:
            self._entries.append(entry)
            self.total_ingested += 1

    def _expire(self) -> None:
        cutoff = self._clock() - self._ttl
        while self._entries and self._entries[0].received_at < cutoff:
            self._entries.popleft()

    def recent(self) -> list[SensoryEntry]:
        """Entries still within the TTL, oldest first."""
        with self._lock:
            self._expire()
            return list(self._entries)

    def drain(self) -> list[SensoryEntry]:
        """Remove and return every live entry."""
        with self._lock:
            self._expire()
            entries = list(self._entries)
            self._entries.clear()
            return entries

    def forget_user(self, user_id: str) -> None:
        with self._lock:
            kept = [e for e in self._entries if e.user_id != user_id]
            self._entries.clear()
            self._entries.extend(kept)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._entries)
