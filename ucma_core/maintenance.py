"""Keeping a memory healthy: forgetting, expiry and sleep consolidation.

:class:`Maintenance` is the part of :class:`~ucma_core.Memory` that runs the
forgetting engine (:mod:`ucma_core.dynamics.forgetting`) and the sleep cycle
(:mod:`ucma_core.dynamics.consolidation`), on demand or on a background thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ucma_core.dynamics.consolidation import PHASES, ConsolidationReport, SleepCycle, _Stores
from ucma_core.dynamics.forgetting import ForgettingReport, plan
from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryType
from ucma_core.scope import ANY, AnyScope
from ucma_core.validation import check_scope_id, to_epoch

if TYPE_CHECKING:
    from ucma_core.memory import Memory

__all__ = ["Maintenance"]


class Maintenance:
    """Forgetting and consolidation for a :class:`~ucma_core.Memory` (mixed into it)."""

    _background: threading.Thread | None = None
    _stop_background: threading.Event | None = None

    # ------------------------------------------------------------------ forgetting
    def prune(
        self: Memory,
        *,
        dry_run: bool = False,
        user_id: str | AnyScope | None = ANY,
        now: datetime | float | None = None,
    ) -> ForgettingReport:
        """Let faded memories go (the forgetting engine); ``dry_run`` only reports them.

        A memory fades when its Ebbinghaus retention, on the memory's clock, falls
        below ``config.forgetting.retention_threshold``; the protections listed in
        :class:`~ucma_core.config.ForgettingConfig` keep it anyway. Forgotten memories
        leave Chroma, the graph, the keyword index and every index.
        """
        user = user_id if isinstance(user_id, AnyScope) else check_scope_id(user_id, "user_id")
        with self._lock:
            self._check_open()
            at = self.now() if now is None else to_epoch(now, "now")
            graph = self._backend.graph
            ranks = graph.pagerank(damping=self.config.graph.pagerank_damping)
            memories = [
                (i, a)
                for i, a in graph.nodes()
                if a.get("kind") == "memory" and (isinstance(user, AnyScope) or a.get("user_id") == user)
            ]
            doomed, by_type, protected, examined = plan(
                memories, pageranks=ranks, now=at, config=self.config.forgetting
            )
            if not dry_run and doomed:
                self._delete(doomed, scrub=False)
            return ForgettingReport(
                dry_run=dry_run,
                examined=examined,
                forgotten=tuple(doomed),
                by_type=dict(by_type),
                protected=dict(protected),
            )

    def expire(
        self: Memory,
        older_than: timedelta | float,
        *,
        memory_types: Sequence[MemoryType | str] | None = None,
        user_id: str | AnyScope | None = ANY,
        dry_run: bool = False,
        now: datetime | float | None = None,
    ) -> ForgettingReport:
        """Hard time-to-live: delete memories whose timestamp is older than ``older_than``
        (a timedelta or seconds), protections notwithstanding."""
        seconds = older_than.total_seconds() if isinstance(older_than, timedelta) else older_than
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise InvalidInputError(f"older_than must be a positive timedelta or seconds, got {older_than!r}")
        types = {MemoryType.parse(t).value for t in memory_types} if memory_types else None
        user = user_id if isinstance(user_id, AnyScope) else check_scope_id(user_id, "user_id")
        with self._lock:
            self._check_open()
            cutoff = (self.now() if now is None else to_epoch(now, "now")) - float(seconds)
            doomed = [
                i
                for i, a in self._backend.graph.nodes()
                if a.get("kind") == "memory"
                and float(a["timestamp"]) < cutoff
                and (types is None or a.get("memory_type") in types)
                and (isinstance(user, AnyScope) or a.get("user_id") == user)
            ]
            by_type: dict[str, int] = {}
            for memory_id in doomed:
                kind = str(self._backend.graph.node(memory_id)["memory_type"])  # type: ignore[index]
                by_type[kind] = by_type.get(kind, 0) + 1
            if not dry_run and doomed:
                self._delete(doomed, scrub=False)
            return ForgettingReport(
                dry_run=dry_run, examined=len(doomed), forgotten=tuple(doomed), by_type=by_type
            )

    # ------------------------------------------------------------------ consolidation
    def _cycle(self: Memory) -> SleepCycle:
        stores = _Stores(self._episodic, self._semantic, self._procedural, self._learning)

        def delete(ids: list[str]) -> None:
            self._delete(ids, scrub=False)

        def forget_faded(at: float) -> int:
            return len(self.prune(now=at).forgotten)

        return SleepCycle(
            self._ctx,
            stores,
            self._provider,
            self._lock,
            delete=delete,
            forget_faded=forget_faded,
            working=lambda: self._working,
        )

    def consolidate(
        self: Memory,
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
        chosen = tuple(phases) if phases is not None else PHASES
        unknown = [p for p in chosen if p not in PHASES]
        if unknown:
            raise InvalidInputError(f"unknown phase(s) {unknown}; expected some of: {', '.join(PHASES)}")
        self._check_open()
        at = self.now() if now is None else to_epoch(now, "now")
        return self._cycle().run(now=at, stop=stop, phases=chosen)

    def start_consolidation(self: Memory, interval_seconds: float = 3600.0) -> None:
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

    def stop_consolidation(self: Memory, timeout: float | None = 30.0) -> bool:
        """Stop the background cycle (interrupting a running one between batches);
        ``True`` if it had stopped when this returned."""
        thread, stop = self._background, self._stop_background
        if thread is None or stop is None:
            return True
        stop.set()
        thread.join(timeout)
        self._background = None if not thread.is_alive() else thread
        return not thread.is_alive()

    @property
    def consolidation_running(self: Memory) -> bool:
        """Whether a background consolidation thread is active."""
        return self._background is not None and self._background.is_alive()

    last_consolidation: Any = None
