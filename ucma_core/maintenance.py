"""Keeping a memory healthy: forgetting, expiry and sleep consolidation.

:class:`Maintenance` is the part of :class:`~ucma_core.Memory` that runs the
forgetting engine (:mod:`ucma_core.dynamics.forgetting`, through
:meth:`~ucma_core.stores.folder.FolderStores.forget_faded`) and the sleep cycle
(:mod:`ucma_core.consolidation`), on demand or on a background thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timedelta

from ucma_core.consolidation import PHASES, ConsolidationReport, CycleContext, run_cycle
from ucma_core.dynamics.forgetting import ForgettingReport
from ucma_core.errors import InvalidInputError
from ucma_core.memory_base import MemoryBase
from ucma_core.records import MemoryType
from ucma_core.scope import ANY, ScopeId
from ucma_core.storage.verify import VerifyReport
from ucma_core.validation import check_names, to_epoch

__all__ = ["Maintenance"]


class Maintenance(MemoryBase):
    """Forgetting and consolidation for a :class:`~ucma_core.Memory` (one of its parts)."""

    # ------------------------------------------------------------------ forgetting
    def prune(
        self,
        *,
        dry_run: bool = False,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
        now: datetime | float | None = None,
    ) -> ForgettingReport:
        """Let faded memories go (the forgetting engine); ``dry_run`` only reports them.

        A memory fades when its Ebbinghaus retention, on the memory's clock, falls
        below ``config.forgetting.retention_threshold``; the protections listed in
        :class:`~ucma_core.config.ForgettingConfig` keep it anyway. Forgotten memories
        leave Chroma, the graph, the keyword index and every index.
        """
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            at = self.now() if now is None else to_epoch(now, "now")
            return self._stores.forget_faded(scope, at, dry_run=dry_run)

    def expire(
        self,
        older_than: timedelta | float,
        *,
        memory_types: Sequence[MemoryType | str] | None = None,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
        dry_run: bool = False,
        now: datetime | float | None = None,
    ) -> ForgettingReport:
        """Hard time-to-live: delete memories whose timestamp is older than ``older_than``
        (a timedelta or seconds), protections notwithstanding."""
        seconds = older_than.total_seconds() if isinstance(older_than, timedelta) else older_than
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise InvalidInputError(f"older_than must be a positive timedelta or seconds, got {older_than!r}")
        types = [MemoryType.parse(t) for t in check_names(memory_types, "memory_types")]
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            cutoff = (self.now() if now is None else to_epoch(now, "now")) - float(seconds)
            return self._stores.expire(scope, cutoff, types, dry_run=dry_run)

    def verify(self) -> VerifyReport:
        """Check that Chroma, the memory graph and the keyword index agree; reads only.

        Example:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     _ = mem.observe("The boiler was serviced on Monday.", keep=True)
            ...     report = mem.verify()
            ...     (report.ok, report.chroma_records, report.graph_memories, report.keyword_rows)
            (True, 1, 1, 1)
        """
        with self._lock:
            self._check_open()
            return self._stores.backend.verify()

    # ------------------------------------------------------------------ consolidation
    def consolidate(
        self,
        *,
        phases: Sequence[str] | None = None,
        now: datetime | float | None = None,
        stop: threading.Event | None = None,
    ) -> ConsolidationReport:
        """Run one sleep cycle now and return what each phase did.

        ``phases`` picks some of ``compress, group, extract, patterns, merge,
        transitions, reinforce, prune`` (default: all, in that order). Setting
        ``stop`` interrupts the cycle between phases or batches; the next cycle
        resumes where it stopped. A provider failure is recorded in the report's
        ``errors`` and the affected episodes are retried next time.
        """
        chosen = check_names(phases, "phases") if phases is not None else PHASES
        unknown = [p for p in chosen if p not in PHASES]
        if unknown:
            raise InvalidInputError(f"unknown phase(s) {unknown}; expected some of: {', '.join(PHASES)}")
        self._check_open()
        at = self.now() if now is None else to_epoch(now, "now")
        cycle = CycleContext(self._stores, self._provider, self._lock, working=self._working)
        return run_cycle(cycle, now=at, stop=stop, phases=chosen)

    def start_consolidation(self, interval_seconds: float = 3600.0) -> None:
        """Run :meth:`consolidate` every ``interval_seconds`` on a background thread until
        :meth:`stop_consolidation` or :meth:`close`. ``observe`` and ``remember`` keep
        working while it runs."""
        if (
            isinstance(interval_seconds, bool)
            or not isinstance(interval_seconds, (int, float))
            or not interval_seconds > 0
        ):
            raise InvalidInputError(f"interval_seconds must be > 0, got {interval_seconds!r}")
        with self._lock:
            self._check_open()
            if self._background is not None and self._background.is_alive():
                raise InvalidInputError("background consolidation is already running")
            stop = threading.Event()

            def loop() -> None:
                while not stop.wait(float(interval_seconds)):
                    self.last_consolidation = self.consolidate(stop=stop)

            self._stop_background = stop
            self._background = threading.Thread(target=loop, name="ucma-consolidation", daemon=True)
            self._background.start()

    @property
    def consolidation_running(self) -> bool:
        """Whether a background consolidation thread is active."""
        return self._background is not None and self._background.is_alive()
