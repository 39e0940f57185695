"""What every consolidation phase works with: the folder's stores, the provider, the
memory's lock and working memory, the caller's progress reporter, and a few shared reads.

Every read or write of memory state happens under ``lock``, in short critical
sections; provider calls happen outside it, so ``observe`` and ``remember`` are
never blocked behind a model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ucma_core.config import MemoryConfig
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.progress import ProgressCallback, notify
from ucma_core.providers.protocols import Provider
from ucma_core.records import MemoryType
from ucma_core.stores.context import StoreContext
from ucma_core.stores.folder import FolderStores
from ucma_core.working_memory import WorkingMemory

__all__ = ["CycleContext", "batches", "stopped"]

T = TypeVar("T")


@dataclass
class CycleContext:
    """The parts one sleep cycle runs against."""

    stores: FolderStores
    provider: Provider
    lock: AbstractContextManager[Any]
    working: WorkingMemory | None = None
    #: Called with ``(done, total, "consolidate <phase>")`` (see :mod:`ucma_core.progress`).
    progress: ProgressCallback | None = None
    #: The phase running now (set by :func:`~ucma_core.consolidation.cycle.run_cycle`).
    phase: str = field(default="", init=False)
    #: Whether the running phase has reported progress yet.
    reported: bool = field(default=False, init=False)

    @property
    def ctx(self) -> StoreContext:
        return self.stores.ctx

    @property
    def config(self) -> MemoryConfig:
        return self.stores.config

    def episodes(self, predicate: Callable[[dict[str, Any]], bool]) -> list[tuple[str, dict[str, Any]]]:
        """``(id, copy of graph attrs)`` of the episodes ``predicate`` admits, oldest first."""
        with self.lock:
            found = [
                (i, dict(a))
                for i, a in self.stores.graph.nodes()
                if a.get("memory_type") == MemoryType.EPISODIC.value and predicate(a)
            ]
        found.sort(key=lambda ia: (float(ia[1]["timestamp"]), ia[0]))
        return found

    def advance(self, done: int, total: int) -> None:
        """Report ``done`` of the running phase's ``total`` units (nothing when ``total`` is 0)."""
        if total > 0:
            self.reported = True
            notify(self.progress, done, total, f"consolidate {self.phase}")

    def steps(self, items: Sequence[T]) -> Iterator[T]:
        """``items`` one by one, reporting each one's start and, once all are done, the total.
        A phase that stops early leaves its progress short of the total."""
        total = len(items)
        for n, item in enumerate(items):
            self.advance(n, total)
            yield item
        self.advance(total, total)

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: text}`` of those of ``ids`` that still exist."""
        with self.lock:
            return {i: text for i, (text, _) in self.stores.backend.rows(list(ids)).items()}


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def stopped(stop: threading.Event | None, report: ConsolidationReport) -> bool:
    """Whether the caller asked the cycle to stop (and note it in ``report``)."""
    if stop is not None and stop.is_set():
        report.interrupted = True
        return True
    return False
