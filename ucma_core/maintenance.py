"""Keeping a memory healthy: forgetting, expiry and sleep consolidation.

:class:`Maintenance` is the part of :class:`~ucma_core.Memory` that runs the
forgetting engine (:mod:`ucma_core.dynamics.forgetting`, through
:meth:`~ucma_core.stores.folder.FolderStores.forget_faded`) and the sleep cycle
(:mod:`ucma_core.consolidation`), on demand or on a background thread.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.config import MemoryConfig
from ucma_core.consolidation import PHASES, ConsolidationReport, CycleContext, run_cycle
from ucma_core.dynamics.forgetting import ForgettingReport
from ucma_core.errors import ClosedMemoryError, InvalidInputError, RepairNeededError, UCMAError
from ucma_core.memory_base import MemoryBase
from ucma_core.progress import ProgressCallback
from ucma_core.protocols import Embedder
from ucma_core.records import MemoryType
from ucma_core.scope import ANY, ScopeId
from ucma_core.storage.skipped import Skipped
from ucma_core.storage.verify import RepairReport, VerifyReport
from ucma_core.validation import check_names, to_epoch

if TYPE_CHECKING:
    from ucma_core.storage.postgres.repair import RebuildResult

__all__ = ["Maintenance"]

#: The name of ``start_consolidation``'s thread.
_INTERVAL = "ucma-consolidation"


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

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """Check that Chroma, the memory graph and the keyword index agree; reads only.

        The report also lists work a failed call left to finish (done before the next
        write) and what was recovered without loss when the folder was opened.
        ``deep=True`` also reads a sample of vectors from Chroma's vector index and
        compares every record's text in Chroma with the keyword index's copy (a read of
        the whole folder).

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     _ = mem.observe("The boiler was serviced on Monday.", keep=True)
            ...     report = mem.verify()
            ...     (report.ok, report.chroma_records, report.graph_memories, report.keyword_rows)
            (True, 1, 1, 1)
        """
        if not isinstance(deep, bool):
            raise InvalidInputError(f"deep must be a bool, not {type(deep).__name__}")
        with self._lock:
            self._check_open()
            report = self._stores.backend.verify(deep=deep)
            report = dataclasses.replace(report, skipped=tuple(self._stores.skipped.entries()))
        extra = self._attachment_problems()
        return dataclasses.replace(report, problems=report.problems + tuple(extra)) if extra else report

    def skipped(
        self, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> list[Skipped]:
        """Messages the conversation helpers were handed and did not store, oldest first
        (by default every user's; see :mod:`ucma_core.storage.skipped`). A record holds ids,
        a reason and a length, never the text; ``forget_user`` removes the user's records."""
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            return self._stores.skipped.entries(scope)

    def record_skipped(self, entries: Iterable[Skipped]) -> None:
        """Record messages that were not stored (durable when this returns), so that
        :meth:`verify`, :meth:`stats` and ``ucma info`` show them. An adapter that leaves
        a message out calls it; :func:`~ucma_core.conversation.observe_turns` does."""
        if isinstance(entries, Skipped):
            raise InvalidInputError("record_skipped takes a list of Skipped records")
        new = list(entries)
        for entry in new:
            if not isinstance(entry, Skipped):
                raise InvalidInputError(f"record_skipped takes Skipped records, not {type(entry).__name__}")
        with self._lock:
            self._check_open()
            self._stores.skipped.add(new)

    @classmethod
    def repair(
        cls,
        path: str | Path,
        *,
        embedder: Embedder | None = None,
        config: MemoryConfig | None = None,
        dry_run: bool = False,
        progress: ProgressCallback | None = None,
    ) -> RepairReport:
        """Repair a memory folder that refuses to open with :class:`~ucma_core.errors.RepairNeededError`.

        A folder refuses to open when opening it as it is would lose memories: its
        ``ucma.json``, ``chroma/`` or Chroma collection is missing (or belongs to
        another folder), part of the graph journal is gone, or Chroma and the graph
        disagree about records without a crash to explain it. Restoring the missing
        files from a backup is always better; when there is none, a repair keeps all
        it can: it rebuilds the manifest from its copies, puts records Chroma lost
        back from the keyword index's copy (embedding them again), rebuilds graph nodes
        of records the graph lost from Chroma (with their first values: access counts,
        retention state and supersession of those records are reset), and drops only
        memories whose text is left nowhere. ``dry_run=True`` repairs nothing: for a
        folder that needs a repair it changes nothing and returns what is wrong and
        what a repair would do; a folder that needs none is just opened and closed (as
        any open does, that finishes what a crash interrupted). The report of a real
        repair lists everything it restored and dropped.

        Pass the ``embedder`` the folder was created with when it is not a built-in one
        (records put back into Chroma are embedded again with it).

        A damaged vector index (which a kill during a write can leave, and which Chroma
        then refuses to use) is set aside and rebuilt by any open, a repair included;
        ``rebuilt_index`` in the report names it, and ``progress`` (see
        :mod:`ucma_core.progress`) hears how far re-embedding the records has come.
        """
        if not isinstance(dry_run, bool):
            raise InvalidInputError(f"dry_run must be a bool, not {type(dry_run).__name__}")
        if dry_run:
            try:
                memory = cls(path, config=config, embedder=embedder)
            except RepairNeededError as e:
                return RepairReport(applied=False, problems=e.problems, plan=e.plan)
            notes = tuple(memory._stores.backend.notes)
            memory.close()
            return RepairReport(applied=False, notes=notes)
        memory = cls.__new__(cls)
        memory._setup(path, config=config, embedder=embedder, repair=True, progress=progress)
        try:
            backend = memory._stores.backend
            actions = list(backend.actions)
            if memory._stores.shared:  # the records are the truth: vectors and keyword index from them
                actions += memory._repair_shared(progress)
            report = RepairReport(
                applied=True,
                problems=tuple(backend.problems),
                actions=tuple(actions),
                restored_from_chroma=tuple(sorted(r.id for r in backend.restored)),
                restored_from_keywords=tuple(backend.reembedded),
                dropped=tuple(backend.dropped),
                notes=tuple(backend.notes),
                rebuilt_index=tuple(backend.rebuilt_index),
            )
        finally:
            memory.close()
        return report

    def rekey(self, *, progress: ProgressCallback | None = None) -> int:
        """Name every tag, participant and metadata key in Chroma under a new random key
        secret (the old one leaked, or a copy of the memory went where it should not);
        returns how many records were re-keyed.

        The records are copied into a new Chroma collection under the new key names and
        the switch to it is the commit, so a crash leaves the old keys or the new ones. A
        memory in PostgreSQL copies while its other workers keep serving, under the job
        lock ``rebuild`` (see ``docs/deployment.md``). ``progress`` hears the copy.

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     _ = mem.observe("Ana packed the blue tent.", user_id="ana", tags=["trip"], keep=True)
            ...     mem.rekey()
            ...     [m.content for m in mem.list_memories(user_id="ana", tags=["trip"])]
            1
            ['Ana packed the blue tent.']
        """
        self._check_open()
        if self._stores.shared:
            return self._rebuild_shared(rekey=True, progress=progress).records
        with self._lock:
            self._check_open()
            backend = self._stores.backend
            backend.flush()  # what waits for Chroma is copied too
            count = backend.vectors.count()
            backend._rekey(progress)
            return count

    def _rebuild_shared(
        self, *, rekey: bool = False, reembed: bool = False, progress: ProgressCallback | None = None
    ) -> RebuildResult:
        from ucma_core.storage.postgres.repair import rebuild

        backend: Any = self._stores.backend
        return rebuild(
            backend, self._lock, embed=self._embedder.embed, reembed=reembed, rekey=rekey, progress=progress
        )

    def _repair_shared(self, progress: ProgressCallback | None) -> list[str]:
        """A shared memory's repair after its open: every vector embedded again from the
        ``records`` table into a new collection, and the keyword index rebuilt."""
        from ucma_core.storage.postgres.repair import reindex

        result = self._rebuild_shared(reembed=True, progress=progress)
        reindex(self._stores.backend)  # type: ignore[arg-type]
        return [
            f"embedded the {result.records} record(s) again from the records table into the new Chroma "
            f"collection {result.collection!r} (dropped {result.dropped!r})",
            "rebuilt the keyword index of the records table (REINDEX CONCURRENTLY)",
        ]

    # ------------------------------------------------------------------ consolidation
    def consolidate(
        self,
        *,
        phases: Sequence[str] | None = None,
        now: datetime | float | None = None,
        stop: threading.Event | None = None,
        progress: ProgressCallback | None = None,
    ) -> ConsolidationReport:
        """Run one sleep cycle now and return what each phase did.

        ``phases`` picks some of ``compress, group, extract, patterns, merge,
        transitions, reinforce, prune`` (default: all, in that order). Setting
        ``stop`` interrupts the cycle between phases or batches; the next cycle
        resumes where it stopped. A provider failure is recorded in the report's
        ``errors`` and the affected episodes are retried next time.

        ``progress`` (see :mod:`ucma_core.progress`; default: none) is called with
        ``(done, total, "consolidate <phase>")`` as each phase goes through its
        batches of episodes (``compress``, ``group``, ``extract``), its users'
        new episodes (``merge``) or its episodes (``patterns``); a phase with
        nothing to count reports ``(1, 1)`` when it is done.

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> seen = []
            >>> def report(done, total, label):
            ...     seen.append((label, done, total))
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     _ = mem.observe("Ana moved to Lisbon in May.", user_id="ana", keep=True)
            ...     _ = mem.consolidate(phases=["extract", "prune"], progress=report)
            >>> seen
            [('consolidate extract', 0, 1), ('consolidate extract', 1, 1), ('consolidate prune', 1, 1)]
        """
        chosen = check_names(phases, "phases") if phases is not None else PHASES
        unknown = [p for p in chosen if p not in PHASES]
        if unknown:
            raise InvalidInputError(f"unknown phase(s) {unknown}; expected some of: {', '.join(PHASES)}")
        self._check_open()
        at = self.now() if now is None else to_epoch(now, "now")
        cycle = CycleContext(
            self._stores, self._provider, self._open_lock, working=self._working, progress=progress
        )
        with self._stores.job("consolidate"):  # a shared memory: one worker at a time
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
            if self._background.running(_INTERVAL):
                raise InvalidInputError("background consolidation is already running")

            def loop(stop: threading.Event) -> None:
                while not stop.wait(float(interval_seconds)):
                    try:
                        self.last_consolidation = self.consolidate(stop=stop)
                    except UCMAError as e:  # closed, or storage trouble: the next cycle retries
                        self.last_consolidation = e
                        if self._closed:
                            return

            if self._background.start(_INTERVAL, loop) is None:
                raise ClosedMemoryError(f"memory at {self.path} is closing")

    @property
    def consolidation_running(self) -> bool:
        """Whether a background consolidation thread is active (``start_consolidation``'s, or
        a cycle a :class:`~ucma_core.conversation.Cadence` runs in the background)."""
        return self._background.running()
