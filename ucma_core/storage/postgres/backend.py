"""One memory shared by many processes: records, graph journal and keyword index in
PostgreSQL, vectors in a Chroma server.

:class:`PgBackend` is the folder :class:`~ucma_core.storage.backend.Backend` with its
files swapped for tables (:mod:`~ucma_core.storage.postgres.connection`) and its
folder lock swapped for a PostgreSQL advisory lock taken per call instead of per
open. Each process keeps its own networkx working copy of the graph; the shared
journal is the change feed:

* :meth:`lock` (taken by :class:`~ucma_core.storage.postgres.lock.SharedLock` around
  every public call of :class:`~ucma_core.Memory`) waits for the memory's write lock,
  then :meth:`sync` applies every entry other workers appended since this process
  last read (a reload from the snapshot if one folded entries it never saw), so each
  call sees every write acknowledged before it started;
* a write runs exactly as in a folder: its intent is a committed journal row before
  Chroma is touched, then Chroma, then the ``records`` row, then the graph changes
  and their commit mark in one SQL transaction;
* a worker killed anywhere in a write leaves its intent open at the journal's end and
  its lock released (PostgreSQL drops a dead session's locks). The next worker to take
  the lock finds the open intent in :meth:`sync` and undoes it (records it added are
  removed from Chroma and ``records``, replaced rows restored) or finishes it (a
  deletion), as the folder does on open. Readers never see a pending record: every
  search keeps only ids that are nodes of the graph, which holds committed changes only.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ucma_core.config import MemoryConfig
from ucma_core.errors import StorageError
from ucma_core.progress import ProgressCallback
from ucma_core.storage.backend import Backend, Embed
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import Intent
from ucma_core.storage.manifest import Manifest, new_key_secret
from ucma_core.storage.postgres.connection import connect, create_schema, lock_key
from ucma_core.storage.postgres.journal import PgJournal, db_errors
from ucma_core.storage.postgres.keywords import PgKeywordIndex
from ucma_core.storage.postgres.url import PostgresTarget
from ucma_core.storage.vectors import CollectionProblem, VectorStore

__all__ = ["PgBackend", "recorded_embedder"]


def recorded_embedder(target: PostgresTarget) -> tuple[str, int] | None:
    """The embedder name and dimension a shared memory was created with, if it exists."""
    conn = connect(target)
    try:
        with db_errors("reading the manifest"):
            exists = conn.execute("SELECT to_regclass(%s)", (f"{target.schema}.meta",)).fetchone()[0]
            if exists is None:
                return None
            row = conn.execute(
                f'SELECT value FROM "{target.schema}".meta WHERE key = %s', ("manifest",)
            ).fetchone()
    finally:
        conn.close()
    if row is None:
        return None
    manifest = Manifest.from_dict(json.loads(row[0]), Path(target.display))
    return manifest.embedder_name, manifest.dimension


class PgBackend(Backend):
    """Persistence for one shared memory (see the module). Opening holds the write lock
    until :meth:`unlock` (the caller finishes interrupted deletions first)."""

    def __init__(
        self,
        target: PostgresTarget,
        config: MemoryConfig,
        *,
        embedder_name: str,
        dimension: int,
        now: float,
        embed: Embed | None = None,
        repair: bool = False,
        progress: ProgressCallback | None = None,
    ) -> None:
        if config.chroma.host is None:
            raise StorageError(
                f"a memory in PostgreSQL ({target.display}) keeps its vectors in a Chroma server: pass "
                "MemoryConfig(chroma=ChromaConfig(host=..., port=...))"
            )
        self.target = target
        self.folder = Path(target.display)
        self.config = config
        self._embed = embed
        self._repairing = repair
        self._progress = progress
        self.rebuilt_index: list[str] = []  # a Chroma server keeps its own index
        self.notes: list[str] = []
        self.problems: list[str] = []
        self.actions: list[str] = []
        self.restored = []
        self.to_finish: list[str] = []
        self.scrub_pending = False
        self.dropped: list[str] = []
        self.reembedded: list[str] = []
        self.finish_deletes = None
        self.after_revert = None
        #: Called with ``{id: attrs before (None if new)}`` of the nodes other workers
        #: changed, after they were applied (the owner updates its in-memory indexes).
        self.after_remote: Callable[[dict[str, dict[str, Any] | None]], None] | None = None
        self._rollbacks = []
        self._marked: set[str] = set()
        self._keys = None
        self._unfinished: Intent | None = None
        self._finishing = False
        self._opened = []
        self._held = False
        self._syncing = False
        self._key = lock_key(target)
        self._conn = connect(target)
        try:
            self.lock(sync=False)
            create_schema(self._conn, target)
            self._open(embedder_name, dimension, now)
        except BaseException:
            self._release()
            raise

    # ------------------------------------------------------------------ the write lock
    def lock(self, *, sync: bool = True) -> None:
        """Wait for the memory's write lock, then apply what other workers committed."""
        if self._conn.closed:
            return
        journal: PgJournal | None = getattr(self, "_journal", None)
        rows: list[Any] | None = None
        with db_errors("waiting for the memory's write lock"):
            if sync and journal is not None:
                with self._conn.pipeline():  # one round trip: the lock, then the change feed
                    self._conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (self._key,))
                    feed = journal.pull_query()
                rows = feed.fetchall()
            else:
                self._conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (self._key,))
        self._held = True
        if sync:
            try:
                self.sync(rows)
            except BaseException:
                self.unlock()
                raise

    def unlock(self) -> None:
        """Release the write lock (a no-op once closed: a closed session holds no lock)."""
        if self._held and not self._conn.closed:
            with db_errors("releasing the memory's write lock"):
                self._conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (self._key,))
        self._held = False

    def sync(self, rows: list[Any] | None = None) -> bool:
        """Apply the journal entries other workers appended since this process last read it,
        undo or finish a write a dead worker left open, and rebuild the in-memory indexes
        when anything changed (``rows``: the change feed if already read). Returns whether
        anything changed."""
        journal: PgJournal = self._journal  # type: ignore[assignment]
        result = journal.pull(rows)
        changed = False
        if result is None:  # a snapshot folded entries this process never read
            self.graph.clear()
            result = journal.load(lambda entries, ops: self.graph.load(entries, ops), self.graph.clear).replay
            changed = True
            if self.after_revert is not None:
                self.after_revert()
        elif result.ops:
            touched = {op["id"] for op in result.ops if op["op"] in ("n", "x")}
            before = {i: None if (node := self.graph.node(i)) is None else node.to_dict() for i in touched}
            self.graph.load(None, result.ops)
            changed = True
            if self.after_remote is not None:
                self.after_remote(before)
            elif self.after_revert is not None:
                self.after_revert()
        if result.scrub_pending:
            self.scrub_pending = True
        if result.open_intent is not None:
            self._recover_dead(result.open_intent)
            changed = True
        vectors: VectorStore | None = getattr(self, "vectors", None)
        if changed and vectors is not None:  # another worker may have rewritten a vector read here
            vectors.cache.clear()
        return changed

    def _recover_dead(self, intent: Intent) -> None:
        """Undo or finish the write a worker killed mid-way left open (we hold the lock, so
        its writer is gone)."""
        undo_adds = [i for i in intent.add if i not in self.graph]
        doomed = [i for i in intent.delete if i in self.graph]
        self._undo_add(undo_adds)
        if intent.rep:
            self._undo_replace(intent.rep)
        self.vectors.delete(doomed)
        self.keywords.delete(doomed)
        self._journal.append([{"op": "a"}])
        if doomed and intent.ops and not undo_adds and not intent.rep:
            self.graph.redo(intent.ops, skip=doomed)
        if doomed and self.finish_deletes is not None:
            self.finish_deletes(doomed, intent.scrub)
        self.notes.append(
            f"a write a killed worker left open was completed or undone: {len(undo_adds)} uncommitted "
            f"record(s) removed, {len(intent.rep)} replaced record(s) restored, {len(doomed)} deletion(s) "
            "finished"
        )

    @contextlib.contextmanager
    def job(self, name: str) -> Iterator[None]:
        """Run work that must run in one worker at a time (a consolidation cycle): waits,
        on a connection of its own, for the memory's advisory lock of ``name`` and holds it
        for the block. The write lock is still taken per step, so the other workers keep
        serving between steps; a killed worker's job lock goes with its session."""
        conn = connect(self.target)
        key = lock_key(self.target, f"job:{name}")
        try:
            with db_errors(f"waiting for the {name} lock"):
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield
            finally:
                with db_errors(f"releasing the {name} lock"):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        finally:
            conn.close()

    # ------------------------------------------------------------------ opening
    def _open(self, embedder_name: str, dimension: int, now: float) -> None:
        config = self.config
        self.keywords = PgKeywordIndex(self._conn)  # type: ignore[assignment]
        stored = self.keywords.get_meta("manifest")
        manifest = None if stored is None else Manifest.from_dict(json.loads(stored), self.folder)
        if manifest is not None:
            manifest.check_embedder(embedder_name, dimension, self.folder)
        self._journal = PgJournal(self._conn)  # type: ignore[assignment]
        self.graph = MemoryGraph(self._journal, snapshot_every=config.snapshot_every, hooks=self)
        fresh = manifest is None
        if manifest is None:
            folder_id = new_key_secret()[:32]
            manifest = Manifest(
                folder_id=folder_id,
                created_at=now,
                embedder_name=embedder_name,
                dimension=dimension,
                collection=config.chroma.collection or f"ucma-{folder_id}",
                key_secret=new_key_secret(),
            )
            self.keywords.set_meta("manifest", json.dumps(manifest.to_dict()))
        self.manifest = manifest
        loaded = self._journal.load(lambda entries, ops: self.graph.load(entries, ops), self.graph.clear)
        self.vectors = VectorStore(
            config.chroma,
            self.folder,
            timeout=config.limits.chroma_timeout_seconds,
            max_batch=config.limits.chroma_batch_size,
            cache_size=config.vector_cache_size,
        )
        self._opened.append(self.vectors)
        try:
            self.vectors.use(manifest.collection, create=fresh, folder_id=manifest.folder_id)
        except CollectionProblem as e:
            raise StorageError(
                f"{e} in the Chroma server at {config.chroma.host}:{config.chroma.port}; the memory "
                f"{self.target.display} keeps its vectors in collection {manifest.collection!r}: open it "
                "with the Chroma server it was created with"
            ) from e
        problems: list[str] = []
        self._recover(loaded.replay, self._memory_nodes(), problems, [])

    def _set_manifest(self, **changes: Any) -> None:
        import dataclasses

        self.manifest = dataclasses.replace(self.manifest, **changes)
        self.keywords.set_meta("manifest", json.dumps(self.manifest.to_dict()))

    def _guard_space(self) -> None:
        """PostgreSQL and Chroma guard their own disks."""

    # ------------------------------------------------------------------ deletion
    def scrub(self, ids: Sequence[str] = ()) -> None:
        """Erase deleted records' text from what UCMA controls: the graph journal is folded
        into a new snapshot (journal rows holding their changes are deleted) and the tables
        are vacuumed. Chroma deleted the records from the collection; the server's files
        keep them until its own compaction, and PostgreSQL's WAL and freed pages until
        they are recycled."""
        self.graph.compact(keep_previous=False)
        self.keywords.scrub()
        self.scrub_pending = False

    def rebuild_collection(self, *, reembed: bool = False) -> None:
        raise StorageError(
            f"rebuilding the Chroma collection of a shared memory ({self.target.display}) is not supported "
            "while other workers use it"
        )

    # ------------------------------------------------------------------ lifecycle
    def _release(self, *, failed: bool = False) -> None:
        try:
            while self._opened:
                item = self._opened.pop()
                if failed:
                    with contextlib.suppress(StorageError):
                        item.close()
                    continue
                item.close()
        finally:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._held = False
