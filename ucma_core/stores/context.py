"""What every store shares: the folder's backend, the embedder, the clock and the config."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ucma_core.config import MemoryConfig
from ucma_core.dynamics.retention import initial_stability, reinforced_stability
from ucma_core.protocols import Clock, Embedder
from ucma_core.storage.backend import Backend
from ucma_core.storage.graph import EdgeType
from ucma_core.storage.nodes import MemoryNode

__all__ = ["StoreContext", "new_id", "stable_id"]

_last_tick = 0
_tick_lock = threading.Lock()


def new_id() -> str:
    """A fresh 32-hex-digit id that sorts in creation order (nanosecond tick + randomness),
    so memories with equal timestamps keep the order they were written in."""
    global _last_tick
    with _tick_lock:
        _last_tick = max(_last_tick + 1, time.time_ns())
        tick = _last_tick
    return f"{tick:016x}{secrets.token_hex(8)}"


def stable_id(*parts: str | None) -> str:
    """A deterministic 32-hex-digit id from ``parts`` (``None`` and ``""`` hash alike)."""
    key = "\x1f".join(p or "" for p in parts)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass
class StoreContext:
    backend: Backend
    embedder: Embedder
    config: MemoryConfig
    clock: Clock

    def now(self) -> float:
        return float(self.clock())

    def fresh_state(self, importance: float, now: float) -> dict[str, Any]:
        """Retention fields of a memory stored at ``now``."""
        return {
            "stability": initial_stability(importance, self.config.retention),
            "last_access": now,
            "access_count": 0,
        }

    def known(self, ids: Iterable[str]) -> tuple[str, ...]:
        """Those of ``ids`` that are memories in this folder (provenance may name forgotten ones)."""
        graph = self.backend.graph
        return tuple(i for i in ids if i in graph)

    def link_sources(self, memory_id: str, edge_type: EdgeType, weight: float = 0.8) -> None:
        """Link ``memory_id`` to each of its ``source_ids`` that still exists."""
        node = self.backend.graph.node_as(memory_id, MemoryNode)
        for source in self.known(node.get("source_ids", ()) if node is not None else ()):
            self.backend.graph.add_edge(memory_id, source, edge_type, weight)

    def retrieved(self, memory_id: str, now: float) -> None:
        """Record that a retrieval returned the memory (it was read, not necessarily used).

        The access counts against forgetting — ``retrieved_at`` restarts its clock and
        ``retrieval_stability`` grows as a review would grow the stability — but
        ``stability`` and ``last_access``, which the rank reads, stay as they were: what
        one query returned cannot reorder the answer to another."""
        self.retrieved_many([(memory_id, now)])

    def retrieved_many(self, marks: Iterable[tuple[str, float]]) -> None:
        """:meth:`retrieved` for each ``(memory_id, now)`` in turn, with one state write per
        memory however often it appears (a memory that is gone is skipped)."""
        times: dict[str, list[float]] = {}
        for memory_id, now in marks:
            times.setdefault(memory_id, []).append(now)
        retention = self.config.retention
        for memory_id, when in times.items():
            node = self.backend.graph.node_as(memory_id, MemoryNode)
            if node is None:
                continue
            stability = float(node.stability)
            added = float(node.get("retrieval_stability", 0.0))
            retrieved_at = float(node.get("retrieved_at", 0.0))
            count = int(node.access_count)
            for now in when:
                last = max(float(node.last_access), retrieved_at)
                added = reinforced_stability(stability + added, last, now, retention) - stability
                retrieved_at = max(now, last)
                count += 1
            self.backend.set_state(
                memory_id, retrieval_stability=added, retrieved_at=retrieved_at, access_count=count
            )

    def reinforce(self, memory_id: str, now: float, **extra: Any) -> None:
        """Record an access: stability grows with the spacing since the last one."""
        node = self.backend.graph.node_as(memory_id, MemoryNode)
        if node is None:
            return
        last = float(node.last_access)
        self.backend.set_state(
            memory_id,
            stability=reinforced_stability(float(node.stability), last, now, self.config.retention),
            last_access=max(now, last),
            access_count=int(node.access_count) + 1,
            **extra,
        )
