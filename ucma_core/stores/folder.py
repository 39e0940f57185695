"""Every store of one memory folder, and the operations that span them.

:class:`FolderStores` is the spine under :class:`~ucma_core.Memory`, its knowledge
calls, maintenance and consolidation: it opens the folder (finishing what a crash
interrupted, and rebuilding the in-memory indexes from the graph), deletes a memory
everywhere, forgets a whole scope and scrubs its text from the files, scans memories
in a :class:`~ucma_core.scope.Scope`, reads typed records, resolves caller-given keys
and lists sessions and scopes. It holds no lock: callers serialise access.

Every multi-record operation runs in one graph transaction (see
:mod:`ucma_core.storage.backend`), so it is all or nothing across a crash; when a
transaction is undone the in-memory indexes are rebuilt from the graph.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ucma_core.config import MemoryConfig
from ucma_core.dynamics.forgetting import ForgettingReport, plan
from ucma_core.errors import MemoryNotFoundError
from ucma_core.progress import ProgressCallback
from ucma_core.protocols import Clock, Embedder
from ucma_core.records import Episode, MemoryRecord, MemoryType
from ucma_core.scope import Scope
from ucma_core.storage.backend import Backend
from ucma_core.storage.graph import EdgeType
from ucma_core.storage.postgres.url import PostgresTarget
from ucma_core.storage.skipped import SkippedLog
from ucma_core.stores.accessmarks import AccessMarks
from ucma_core.stores.context import StoreContext
from ucma_core.stores.episodic import EpisodeDraft, EpisodicStore
from ucma_core.stores.learning import LearningStore
from ucma_core.stores.procedural import ProceduralStore
from ucma_core.stores.prospective import ProspectiveStore
from ucma_core.stores.semantic import SemanticStore

if TYPE_CHECKING:
    from ucma_core.storage.postgres.lock import SharedLock
    from ucma_core.storage.postgres.skipped import PgSkippedLog

__all__ = ["FolderStores", "KeyRef"]

R = TypeVar("R")
#: A caller-given key in its scope: ``(user_id, agent_id, key)``.
KeyRef = tuple[str | None, str | None, str]


class FolderStores:
    """The backend, the store context and the five stores of one open folder."""

    def __init__(
        self,
        folder: Path | PostgresTarget,
        config: MemoryConfig,
        embedder: Embedder,
        clock: Clock,
        *,
        repair: bool = False,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.config = config
        self._shared = isinstance(folder, PostgresTarget)
        self._marks: AccessMarks | None = None
        self._shared_lock: SharedLock | None = None
        opener: type[Backend] = Backend
        if isinstance(folder, PostgresTarget):
            from ucma_core.storage.postgres.backend import PgBackend

            opener = PgBackend  # may hold the shared memory's write lock until the end of __init__
        self.backend = opener(
            folder,  # type: ignore[arg-type]
            config,
            embedder_name=embedder.name,
            dimension=embedder.dimension,
            now=float(clock()),
            embed=embedder.embed,
            repair=repair,
            progress=progress,
        )
        self.ctx = StoreContext(self.backend, embedder, config, clock)
        self.skipped: SkippedLog | PgSkippedLog = (
            self.backend.skipped_log() if self._shared else SkippedLog(self.backend.folder)  # type: ignore[attr-defined]
        )
        self._new_stores()
        try:
            self._open_indexes()
        except BaseException:
            self.backend.close()
            raise
        self.backend.finish_deletes = self._finish_deletes
        self.backend.after_revert = self._reindex
        if self._shared:
            self.backend.after_remote = self._reindex_nodes  # type: ignore[attr-defined]
            self.backend.flush_retrievals = self._flush_retrievals  # type: ignore[attr-defined]
            self.backend.unlock()  # type: ignore[attr-defined]

    def new_lock(self) -> Any:
        """The lock :class:`~ucma_core.Memory` serialises calls with: a thread lock for a folder,
        for a shared memory also its write lock across processes (with a sync on entry).
        A folder's access marks are written later under it (:mod:`~ucma_core.stores.accessmarks`)."""
        if self._shared:
            from ucma_core.storage.postgres.lock import SharedLock

            shared = self.config.shared
            self._shared_lock = SharedLock(
                self.backend,  # type: ignore[arg-type]
                linger=shared.read_hold_seconds,
                hold_at_most=shared.read_hold_at_most_seconds,
            )
            return self._shared_lock
        lock = threading.RLock()
        self._marks = AccessMarks(
            self._flush_retrievals, lock, delay=self.config.retention.access_mark_delay_seconds
        )
        return lock

    def read_lock(self, lock: Any) -> Any:
        """The lock a call that only reads holds: ``lock`` itself for a folder, its shared
        side for a shared memory (readers of every worker run side by side)."""
        return lock.reading() if self._shared else lock

    @property
    def shared(self) -> bool:
        """Whether this is a shared (``postgresql://``) memory."""
        return self._shared

    def retrieved(self, ids: Sequence[str], now: float) -> None:
        """Record that a retrieval returned ``ids`` (see :meth:`StoreContext.retrieved`). A
        folder queues the marks (:mod:`~ucma_core.stores.accessmarks`): they are written
        in the background, and before any other call reads or writes (:meth:`settle`); a
        shared memory keeps them until the worker's next write, so a read never waits
        for the write lock."""
        if self._shared:
            self.backend.retrieved_later(ids, now)  # type: ignore[attr-defined]
            return
        if self._marks is not None:
            self._marks.add(ids, now)
            return
        self._flush_retrievals([(i, now) for i in ids])

    def settle(self) -> None:
        """Write the access marks a folder still queues (the caller holds the memory's lock)."""
        if self._marks is not None:
            self._marks.settle()

    def _flush_retrievals(self, kept: list[tuple[str, float]]) -> None:
        # marks only: the graph's snapshot waits for the next ordinary write (or a long journal),
        # so a background mark write never holds the lock for O(graph) while a remember waits
        with self.graph.defer_compaction(), self.graph.batch():
            self.ctx.retrieved_many(kept)

    def job(self, name: str) -> AbstractContextManager[None]:
        """Hold while running work one worker at a time must do (``"consolidate"``): nothing
        for a folder (its lock admits one process), the memory's job lock when shared."""
        if self._shared:
            return self.backend.job(name)  # type: ignore[attr-defined, no-any-return]
        return nullcontext()

    def _new_stores(self) -> None:
        self.episodic = EpisodicStore(self.ctx)
        self.semantic = SemanticStore(self.ctx)
        self.procedural = ProceduralStore(self.ctx)
        self.learning = LearningStore(self.ctx)
        self.prospective = ProspectiveStore(self.ctx)
        self._keys: dict[KeyRef, str] = {}

    @property
    def graph(self) -> Any:
        return self.backend.graph

    def _open_indexes(self) -> None:
        backend = self.backend
        restored_ids = {r.id for r in backend.restored}
        self._index_all(skip=restored_ids)
        if backend.restored:
            with self.graph.batch():
                for record in backend.restored:
                    self.link(record.id)
        scrub = backend.scrub_pending
        if backend.to_finish:
            with self.graph.hold_compaction():
                self.delete(backend.to_finish, scrub=scrub)
        if scrub:
            backend.scrub(backend.to_finish)

    def _index_all(self, skip: set[str] | frozenset[str] = frozenset()) -> None:
        for memory_id, attrs in self.graph.nodes():
            if attrs.get("kind") == "entity":
                self.semantic.index_entity(attrs)
            if memory_id in skip:
                continue
            self._index(memory_id, attrs)

    def _reindex(self) -> None:
        """Rebuild every in-memory index from the graph (after a transaction was undone)."""
        self._new_stores()
        self._index_all()

    def _reindex_nodes(self, before: dict[str, dict[str, Any] | None]) -> None:
        """Bring the in-memory indexes up to date for nodes another worker changed (a shared
        memory); ``before`` holds their fields before the change (``None``: new nodes)."""
        for memory_id, old in before.items():
            if old is not None:
                if old.get("memory_type") == MemoryType.EPISODIC.value:
                    self.episodic.unindex(memory_id, old)
                elif old.get("memory_type") == MemoryType.PROSPECTIVE.value:
                    self.prospective.unindex(memory_id)
                ref = (old.get("user_id"), old.get("agent_id"), old.get("key"))
                if old.get("key") is not None and self._keys.get(ref) == memory_id:  # type: ignore[arg-type]
                    del self._keys[ref]  # type: ignore[arg-type]
            attrs = self.graph.node(memory_id)
            if attrs is not None:
                if attrs.get("kind") == "entity":
                    self.semantic.index_entity(attrs)
                self._index(memory_id, attrs)

    def _finish_deletes(self, ids: list[str], scrub: bool) -> None:
        """Finish deletions a failed call left half done (run before the next write)."""
        with self.graph.hold_compaction():
            self.delete(ids, scrub=scrub)
            if scrub or self.backend.scrub_pending:
                self.backend.scrub_pending = True
                self.backend.scrub(ids)

    def _index(self, memory_id: str, attrs: dict[str, Any]) -> None:
        kind = attrs.get("memory_type")
        if kind == MemoryType.EPISODIC.value:
            self.episodic.index(memory_id, attrs)
        elif kind == MemoryType.PROSPECTIVE.value:
            self.prospective.index(memory_id, attrs)
        if attrs.get("key") is not None:
            self._keys[(attrs.get("user_id"), attrs.get("agent_id"), attrs["key"])] = memory_id

    def link(self, memory_id: str) -> None:
        """Index a stored memory and create its graph links (after a write or a rebuild)."""
        attrs = self.graph.node(memory_id)
        if attrs is None:
            return
        linker: Callable[[str], None] = {
            MemoryType.EPISODIC.value: self.episodic.link,
            MemoryType.SEMANTIC.value: self.semantic.link,
            MemoryType.PROCEDURAL.value: self.procedural.link,
            MemoryType.LEARNING.value: self.learning.link,
            MemoryType.PROSPECTIVE.value: self.prospective.link,
        }[attrs["memory_type"]]
        linker(memory_id)
        if attrs.get("key") is not None:
            self._keys[(attrs.get("user_id"), attrs.get("agent_id"), attrs["key"])] = memory_id

    def close(self, *, compact: bool = False) -> None:
        try:
            if self._marks is not None:
                self._marks.settle()
                self._marks.close()
            if self._shared_lock is not None:
                self._shared_lock.close()
        finally:
            self.backend.close(compact=compact)

    # ------------------------------------------------------------------ keys
    def keyed(self, user_id: str | None, agent_id: str | None, key: str) -> str | None:
        """The id of the memory stored with ``key`` in this user and agent's scope, if any."""
        memory_id = self._keys.get((user_id, agent_id, key))
        return memory_id if memory_id is not None and memory_id in self.graph else None

    def add_episodes(
        self, drafts: Sequence[EpisodeDraft], vectors: Sequence[Sequence[float]]
    ) -> list[Episode]:
        """Store new episodes and remember their keys (inside ``graph.batch()``)."""
        episodes = self.episodic.add(drafts, vectors)
        for ep in episodes:
            if ep.key is not None:
                self._keys[(ep.user_id, ep.agent_id, ep.key)] = ep.id
        return episodes

    def replace_episode(self, memory_id: str, draft: EpisodeDraft, vector: Sequence[float]) -> Episode:
        """Give a stored episode new content, metadata, tags and time (re-embedded); its id,
        links to other memories and retention state stay."""
        old = self.graph.node(memory_id)
        if old is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
        with self.graph.batch():
            self.episodic.remove(memory_id)
            for u, v, _, _ in self.graph.edges_of(memory_id, EdgeType.FOLLOWED_BY):
                self.graph.remove_edge(u, v, EdgeType.FOLLOWED_BY)
            episode = self.episodic.rewrite(memory_id, draft, old)
            self.backend.replace([episode], [vector])
            self.episodic.link(memory_id)
        return episode

    # ------------------------------------------------------------------ scans and reads
    def scan(
        self, scope: Scope, memory_types: Sequence[MemoryType] = ()
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(id, graph attrs)`` of every memory in ``scope`` (of the given types)."""
        types = {t.value for t in memory_types}
        for memory_id, attrs in self.graph.nodes():
            if (
                attrs.get("kind") == "memory"
                and (not types or attrs.get("memory_type") in types)
                and scope.admits(attrs)
            ):
                yield memory_id, attrs

    def fetch(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return self.backend.fetch(ids)

    def fetch_ordered(self, ids: Sequence[str], cls: type[R]) -> list[R]:
        """The records of ``ids`` that exist and are ``cls``, in the order of ``ids``."""
        found = self.backend.fetch(ids)
        return [r for i in ids if isinstance(r := found.get(i), cls)]

    def fetch_one(self, memory_id: str, cls: type[R]) -> R:
        record = self.backend.fetch([memory_id]).get(memory_id)
        if not isinstance(record, cls):
            raise MemoryNotFoundError(f"memory {memory_id!r} vanished while being read")
        return record

    def require(self, memory_id: object, memory_type: MemoryType) -> str:
        """``memory_id`` if it is a stored memory of ``memory_type``; else MemoryNotFoundError."""
        node = self.graph.node(memory_id) if isinstance(memory_id, str) else None
        if node is None or node.get("memory_type") != memory_type.value:
            raise MemoryNotFoundError(f"no {memory_type.value} memory with id {memory_id!r}")
        return memory_id  # type: ignore[return-value]

    def memory_node(self, memory_id: str, scope: Scope | None = None) -> dict[str, Any] | None:
        """The graph attrs of a memory (not an entity), if it exists and is in ``scope``."""
        node = self.graph.node(memory_id)
        if node is None or node.get("kind") != "memory":
            return None
        return node if scope is None or scope.admits(node) else None

    def session_turns(self, scope: Scope) -> list[str]:
        """Ids of the turns of every session in ``scope`` (``session_id`` set), in time order."""
        return self.episodic.turns(scope)

    def scopes(self, scope: Scope) -> list[tuple[str | None, str | None, str | None]]:
        """Distinct ``(user_id, agent_id, session_id)`` of the memories in ``scope``."""
        seen = {(a.get("user_id"), a.get("agent_id"), a.get("session_id")) for _, a in self.scan(scope)}
        return sorted(seen, key=lambda t: tuple("" if v is None else "\x01" + v for v in t))

    # ------------------------------------------------------------------ deletion
    def delete(self, ids: Sequence[str], *, scrub: bool) -> None:
        """Delete memories from Chroma, the keyword index, the graph and every in-memory
        index, mending session chains and dropping entities left without facts (one
        transaction: finished on the next call or open if it fails halfway). ``scrub``
        marks their text to be scrubbed (the caller runs :meth:`Backend.scrub`)."""
        graph = self.graph
        touched_entities: set[str] = set()
        ids = [i for i in dict.fromkeys(ids) if graph.node(i) is not None]
        if not ids:
            return
        with graph.batch():
            for memory_id in ids:
                attrs = graph.node(memory_id)
                if attrs is None:
                    continue
                if attrs.get("memory_type") == MemoryType.EPISODIC.value:
                    self.episodic.remove(memory_id)
                elif attrs.get("memory_type") == MemoryType.PROSPECTIVE.value:
                    self.prospective.unindex(memory_id)
                if attrs.get("key") is not None:
                    self._keys.pop((attrs.get("user_id"), attrs.get("agent_id"), attrs["key"]), None)
                touched_entities.update(
                    v
                    for _, v, kind, _ in graph.edges_of(memory_id, direction="out")
                    if kind in ("subject", "object")
                )
            self.backend.delete(ids, scrub=scrub)
            for ent in touched_entities:
                if not graph.edges_of(ent):
                    graph.remove_node(ent)

    def forget_scope(self, scope: Scope, *, scrub: bool) -> int:
        """Delete every memory in ``scope`` in one transaction; with ``scrub`` also their
        entities, and their text, vectors and keys are then erased from every file of the
        folder (:meth:`Backend.scrub`). An interrupted call is finished on the next call
        or open."""
        self.skipped.forget(scope)  # ids only, no text: nothing to scrub
        ids = [i for i, _ in self.scan(scope)]
        entities = (
            [i for i, a in self.graph.nodes() if a.get("kind") == "entity" and scope.admits(a)]
            if scrub
            else []
        )
        if not ids and not entities and not (scrub and self.backend.scrub_pending):
            return 0
        with self.graph.hold_compaction():
            with self.graph.batch():
                self.delete(ids, scrub=scrub)
                for ent in entities:
                    self.graph.remove_node(ent)
                if scrub:
                    self.graph.mark_scrub()
            if scrub:
                self.backend.scrub_pending = True
                self.backend.scrub(ids)
        return len(ids)

    def forget_faded(self, scope: Scope, now: float, *, dry_run: bool) -> ForgettingReport:
        """The forgetting engine over ``scope``: plan with the protections, then delete."""
        ranks = self.graph.pagerank(damping=self.config.graph.pagerank_damping)
        doomed, by_type, protected, examined = plan(
            self.scan(scope), pageranks=ranks, now=now, config=self.config.forgetting
        )
        if not dry_run and doomed:
            self.delete(doomed, scrub=False)
        return ForgettingReport(
            dry_run=dry_run,
            examined=examined,
            forgotten=tuple(doomed),
            by_type=dict(by_type),
            protected=dict(protected),
        )

    def expire(
        self, scope: Scope, cutoff: float, memory_types: Sequence[MemoryType], *, dry_run: bool
    ) -> ForgettingReport:
        """Delete memories in ``scope`` whose timestamp is before ``cutoff``."""
        doomed = [i for i, a in self.scan(scope, memory_types) if float(a["timestamp"]) < cutoff]
        by_type = Counter(str(self.graph.node(i)["memory_type"]) for i in doomed)
        if not dry_run and doomed:
            self.delete(doomed, scrub=False)
        return ForgettingReport(
            dry_run=dry_run, examined=len(doomed), forgotten=tuple(doomed), by_type=dict(by_type)
        )
