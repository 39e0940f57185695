"""One memory shared by many processes: records, graph journal and keyword index in
PostgreSQL, vectors in a Chroma server.

:class:`PgBackend` is the folder :class:`~ucma_core.storage.backend.Backend` with its
files swapped for tables (:mod:`~ucma_core.storage.postgres.connection`) and its
folder lock swapped for PostgreSQL advisory locks taken per call instead of per
open. Each process keeps its own networkx working copy of the graph; the shared
journal is the change feed.

Locks. :meth:`lock` (taken by :class:`~ucma_core.storage.postgres.lock.SharedLock`
around every public call of :class:`~ucma_core.Memory`) waits for the memory's write
lock, then :meth:`sync` applies every entry other workers appended since this process
last read (a reload from the snapshot if one folded entries it never saw), so each
call sees every write acknowledged before it started. ``remember`` takes the same
lock *shared* (``lock(shared=True)``): readers run side by side and only wait for a
writer's commit. A reader's bookkeeping (what a retrieval returned, see
:meth:`~ucma_core.stores.context.StoreContext.retrieved`) is a write, so it is kept
in the process (:meth:`retrieved_later`) and committed with the worker's next
exclusive lock (its next write, or ``close``).

New records (``observe``) are written in two steps so that the slow part runs
outside the write lock:

1. :meth:`stage`, before the lock: each new id becomes a ``pending`` row owned by
   this worker's database session (``pg_backend_pid()`` and its start time), then the
   vectors are added to Chroma. Readers never see them: every search keeps only ids
   that are nodes of the graph, which holds committed changes only.
2. :meth:`insert`, under the write lock: the ``records`` rows, the graph changes, the
   commit mark and the removal of the ``pending`` rows are one SQL transaction.

A worker killed between the two leaves ``pending`` rows whose session is gone. The
next exclusive :meth:`lock` of any worker lists them (in the same round trip as the
change feed) once they are older than ``config.limits.chroma_timeout_seconds`` and
deletes their vectors and rows. The wait bounds the in-flight race: a killed worker's
Chroma add may still be running in the server, and deleting its ids before the add
lands would leave a vector without a record; an add the server takes longer than
that timeout to apply can still do so (it is a vector no search returns, reported by
:meth:`verify`). Until then the pending vectors are in the collection but in no
result, and :meth:`verify` counts them as writes in flight, not as orphans.

Other writes (replacing, deleting, consolidation's inserts) run as in a folder,
entirely under the write lock: the intent is a committed journal row before Chroma is
touched, then Chroma, then the ``records`` rows, then the graph changes and their
commit mark. A worker killed anywhere there leaves its intent open at the journal's
end and its lock released (PostgreSQL drops a dead session's locks). The next worker
to take the lock finds the open intent in :meth:`sync` and undoes it (records it added
are removed from Chroma and ``records``, replaced rows restored) or finishes it (a
deletion); the ids it removed are also marked pending for a dead owner, so the sweep
above deletes them once more after the same wait (the in-flight race again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ucma_core.config import MemoryConfig
from ucma_core.errors import StorageError
from ucma_core.progress import ProgressCallback
from ucma_core.records import MemoryRecord
from ucma_core.storage import codec
from ucma_core.storage.backend import Backend, Embed, _keyword_row
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import Intent
from ucma_core.storage.keywords import KeywordRow
from ucma_core.storage.manifest import Manifest, new_key_secret
from ucma_core.storage.postgres.connection import connect, create_schema, lock_key, pool
from ucma_core.storage.postgres.journal import PgJournal, db_errors
from ucma_core.storage.postgres.keywords import PgKeywordIndex
from ucma_core.storage.postgres.url import PostgresTarget
from ucma_core.storage.vectors import CollectionProblem, VectorStore
from ucma_core.storage.verify import VerifyReport

__all__ = ["PgBackend", "recorded_embedder"]

#: Pending rows whose owning session is gone and that are older than the grace (seconds).
_DEAD_PENDING = (
    "SELECT p.id FROM pending p WHERE p.since < clock_timestamp() - make_interval(secs => %s) "
    "AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.owner_pid "
    "AND a.backend_start = p.owner_start)"
)
#: A reader's retrieval marks kept in the process: committed with the next exclusive lock,
#: or, past this many, with the next read that gets the write lock without waiting.
_FLUSH_AT = 256
_KEEP_AT_MOST = 20_000


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
        self._held: str | None = None  # "x" (exclusive) or "s" (shared) while the write lock is held
        self._syncing = False
        self._key = lock_key(target)
        #: Records whose vectors :meth:`stage` added, not committed yet: ``{id: (record, fields)}``.
        self._staged: dict[str, tuple[MemoryRecord, dict[str, str | int | float | bool]]] = {}
        self._staging = threading.Lock()
        self._at_commit: list[tuple[list[KeywordRow], list[str]]] = []
        self._retrievals: list[tuple[str, float]] = []
        #: Called (under the exclusive lock) with the retrievals :meth:`retrieved_later` kept.
        self.flush_retrievals: Callable[[list[tuple[str, float]]], None] | None = None
        self._grace = float(config.limits.chroma_timeout_seconds)
        self._conn = connect(target)
        self._pool: Any = None
        try:
            self.lock(sync=False)
            create_schema(self._conn, target)
            with db_errors("reading this session's id"):
                self._owner: tuple[int, Any] = self._conn.execute(
                    "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
                ).fetchone()
            self._pool = pool(target)
            self._open(embedder_name, dimension, now)
        except BaseException:
            self._release()
            raise

    # ------------------------------------------------------------------ the write lock
    def lock(self, *, sync: bool = True, shared: bool = False) -> None:
        """Wait for the memory's write lock (``shared``: the readers' share of it), then apply
        what other workers committed. Exclusive holders also clean up after dead workers
        (see the module) and commit this worker's kept retrieval marks."""
        if self._conn.closed:
            return
        journal: PgJournal | None = getattr(self, "_journal", None)
        if not sync or journal is None:
            with db_errors("waiting for the memory's write lock"):
                self._conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (self._key,))
            self._held = "x"
            return
        exclusive, taken = not shared, False
        if shared and len(self._retrievals) >= _FLUSH_AT:  # commit them if no one waits for it
            with db_errors("trying the memory's write lock"):
                row = self._conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (self._key,)).fetchone()
            exclusive = taken = bool(row[0])
        with db_errors("waiting for the memory's write lock"):
            with self._conn.pipeline():  # one round trip: the lock, then the change feed
                if not taken:
                    verb = "pg_advisory_lock" if exclusive else "pg_advisory_lock_shared"
                    self._conn.execute(f"SELECT {verb}(hashtext(%s))", (self._key,))
                feed = journal.pull_query()
                dead = self._conn.execute(_DEAD_PENDING, (self._grace,)) if exclusive else None
            rows = feed.fetchall()
            abandoned = [] if dead is None else [r[0] for r in dead.fetchall()]
        self._held = "x" if exclusive else "s"
        if not exclusive and journal.open_at_tail(rows):
            self.unlock()  # a dead writer's intent: finishing it needs the write lock
            self.lock()
            return
        try:
            self.sync(rows)
            if exclusive:
                if abandoned:
                    self._sweep(abandoned)
                if self._retrievals and self.flush_retrievals is not None:
                    kept, self._retrievals = self._retrievals, []
                    self.flush_retrievals(kept)
        except BaseException:
            self.unlock()
            raise

    def unlock(self) -> None:
        """Release the write lock (a no-op once closed: a closed session holds no lock)."""
        if self._held and not self._conn.closed:
            verb = "pg_advisory_unlock" if self._held == "x" else "pg_advisory_unlock_shared"
            with db_errors("releasing the memory's write lock"):
                self._conn.execute(f"SELECT {verb}(hashtext(%s))", (self._key,))
        self._held = None

    def before_transaction(self) -> None:
        if self._held == "s":
            raise StorageError(
                "a write was attempted under the readers' shared lock of a shared memory; this is a bug "
                "in UCMA, please report it"
            )
        super().before_transaction()

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
        if undo_adds:  # its Chroma add may still land: delete them once more after the grace
            with db_errors("marking undone writes"), self._conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO pending (id, owner_pid, owner_start) VALUES (%s, 0, 'epoch') "
                    "ON CONFLICT (id) DO NOTHING",
                    [(i,) for i in undo_adds],
                )
        if doomed and intent.ops and not undo_adds and not intent.rep:
            self.graph.redo(intent.ops, skip=doomed)
        if doomed and self.finish_deletes is not None:
            self.finish_deletes(doomed, intent.scrub)
        self.notes.append(
            f"a write a killed worker left open was completed or undone: {len(undo_adds)} uncommitted "
            f"record(s) removed, {len(intent.rep)} replaced record(s) restored, {len(doomed)} deletion(s) "
            "finished"
        )

    def _sweep(self, ids: list[str]) -> None:
        """Undo the staged writes of dead workers (``pending`` rows past the grace, under the
        exclusive lock): their vectors and any ``records`` row go, then the rows."""
        gone = [i for i in ids if i not in self.graph]
        with self._flush_lock():  # no flusher adds them while they are deleted
            self.vectors.delete(gone)
            self.keywords.delete(gone)
            with db_errors("clearing abandoned writes"):
                self._conn.execute("DELETE FROM pending WHERE id = ANY(%s)", (list(ids),))
        self.notes.append(f"{len(gone)} vector(s) a killed worker added and never committed were removed")

    # ------------------------------------------------------------------ staged writes
    def stage(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Add new records' vectors to Chroma before the write lock is taken (step 1 in the
        module): they become ``pending`` rows owned by this session, then :meth:`_flush`
        adds them (with whatever other workers are waiting to add). :meth:`insert` of the
        same records commits them; :meth:`unstage` drops those it did not."""
        if not records:
            return
        metadatas = [codec.to_metadata(r, self.keys) for r in records]
        ids = [r.id for r in records]
        pid, start = self._owner
        rows = [
            (r.id, pid, start, r.content, json.dumps(m, ensure_ascii=False), [float(x) for x in v])
            for r, m, v in zip(records, metadatas, vectors, strict=True)
        ]
        with db_errors("marking writes pending"), self._pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO pending (id, owner_pid, owner_start, document, fields, vector) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                rows,
            )
        with self._staging:
            self._staged.update({r.id: (r, m) for r, m in zip(records, metadatas, strict=True)})
        try:
            self._flush(ids)
        except BaseException:
            with contextlib.suppress(StorageError):
                self.unstage(ids)
            raise

    @contextlib.contextmanager
    def _flush_lock(self) -> Iterator[Any]:
        """The memory's Chroma-flush lock, on a pooled connection held for the block."""
        key = lock_key(self.target, "flush")
        with self._pool.connection() as conn:
            with db_errors("waiting for the Chroma flush lock"):
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield conn
            finally:
                with db_errors("releasing the Chroma flush lock"):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    def _flush(self, ids: Sequence[str]) -> None:
        """Make sure the vectors of ``ids`` are in Chroma: under the flush lock, unless a
        worker that held it before us already added them, add every row of a live session
        still waiting, in one Chroma call (a group commit: 4 workers' adds cost about one).
        ``upsert``: a row a killed flusher may have half added is written whole again."""
        with self._flush_lock() as conn, db_errors("flushing pending writes"):
            with conn.pipeline():
                mine = conn.execute(
                    "SELECT count(*) FROM pending WHERE id = ANY(%s) AND NOT added", (list(ids),)
                )
                waiting = conn.execute(
                    "SELECT p.id, p.document, p.fields, p.vector FROM pending p WHERE NOT p.added AND EXISTS "
                    "(SELECT 1 FROM pg_stat_activity a WHERE a.pid = p.owner_pid "
                    "AND a.backend_start = p.owner_start) ORDER BY p.since LIMIT %s",
                    (max(len(ids), self.config.limits.chroma_batch_size),),
                )
            if not mine.fetchone()[0]:
                return  # an earlier flusher added them
            rows = waiting.fetchall()
            if not any(r[0] in set(ids) for r in rows):  # more waiting than one call takes: ours first
                rows = conn.execute(
                    "SELECT id, document, fields, vector FROM pending WHERE id = ANY(%s)", (list(ids),)
                ).fetchall()
            self.vectors.upsert(
                [r[0] for r in rows],
                [r[3] for r in rows],
                [r[1] for r in rows],
                [json.loads(r[2]) for r in rows],
            )
            conn.execute("UPDATE pending SET added = true WHERE id = ANY(%s)", ([r[0] for r in rows],))
            left = conn.execute("SELECT count(*) FROM pending WHERE id = ANY(%s) AND NOT added", (list(ids),))
            if left.fetchone()[0]:
                self._flush(ids)  # rarely: a very large batch of ours

    def unstage(self, ids: Sequence[str]) -> None:
        """Remove the vectors and ``pending`` rows of those of ``ids`` staged and not committed
        (under the flush lock: no flusher is adding them meanwhile)."""
        with self._staging:
            left = [i for i in ids if self._staged.pop(i, None) is not None]
        if not left:
            return
        with self._flush_lock() as conn:
            self.vectors.delete(left)
            with db_errors("clearing pending writes"):
                conn.execute("DELETE FROM pending WHERE id = ANY(%s)", (left,))

    def insert(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Store new records (inside ``graph.batch()``): those :meth:`stage` wrote to Chroma get
        their ``records`` rows in the commit's SQL transaction (no intent needed); any others
        go the folder's way (intent, Chroma, rows)."""
        with self._staging:
            staged = [(r, self._staged[r.id][1]) for r in records if r.id in self._staged]
        if len(staged) < len(records):
            ready = {r.id for r, _ in staged}
            rest = [(r, v) for r, v in zip(records, vectors, strict=True) if r.id not in ready]
            with self.graph.batch():
                super().insert([r for r, _ in rest], [v for _, v in rest])
                if staged:
                    self.insert([r for r, _ in staged], [])
            return
        if not records:
            return
        with self.graph.batch():
            item = ([_keyword_row(r, m) for r, m in staged], [r.id for r in records])
            self._at_commit.append(item)
            self.graph.on_abort(lambda: self._at_commit.remove(item) if item in self._at_commit else None)
            for record in records:
                self.graph.put_node(record.id, codec.node_attrs(record))

    def _write_staged(self, cur: Any) -> None:
        """In the commit's SQL transaction: the staged records' rows, and their ``pending`` rows gone."""
        for rows, ids in self._at_commit:
            self.keywords.write(cur, rows)  # type: ignore[attr-defined]
            cur.execute("DELETE FROM pending WHERE id = ANY(%s)", (ids,))

    def _staged_committed(self) -> None:
        with self._staging:
            for _, ids in self._at_commit:
                for i in ids:
                    self._staged.pop(i, None)
        self._at_commit = []

    # ------------------------------------------------------------------ readers' bookkeeping
    def retrieved_later(self, ids: Sequence[str], now: float) -> None:
        """Keep in this process that a retrieval returned ``ids`` at ``now`` (committed with
        the next exclusive lock; past ``20,000`` kept marks the oldest are dropped)."""
        self._retrievals.extend((i, now) for i in ids)
        if len(self._retrievals) > _KEEP_AT_MOST:
            del self._retrievals[: len(self._retrievals) - _KEEP_AT_MOST]

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """The folder's check, with vectors of writes still in flight (``pending``) counted
        apart: they are no orphans until their worker is gone and the grace has passed."""
        report = super().verify(deep=deep)
        with db_errors("reading pending writes"):
            pending = {r[0] for r in self._conn.execute("SELECT id FROM pending")}
        in_flight = pending & set(report.only_in_chroma)
        if not in_flight:
            return report
        return dataclasses.replace(
            report,
            only_in_chroma=tuple(i for i in report.only_in_chroma if i not in in_flight),
            missing_keywords=tuple(i for i in report.missing_keywords if i not in in_flight),
            notes=(
                *report.notes,
                f"{len(in_flight)} vector(s) of writes in flight (not committed yet, or left by a killed "
                "worker and removed after the grace)",
            ),
        )

    @contextlib.contextmanager
    def job(self, name: str) -> Iterator[None]:
        """Run work that must run in one worker at a time (a consolidation cycle): waits,
        on a pooled connection kept for the job, for the memory's advisory lock of ``name`` and holds it
        for the block. The write lock is still taken per step, so the other workers keep
        serving between steps; a killed worker's job lock goes with its session."""
        key = lock_key(self.target, f"job:{name}")
        with self._pool.connection() as conn:  # checked out for the whole job: it holds the lock
            with db_errors(f"waiting for the {name} lock"):
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield
            finally:
                with db_errors(f"releasing the {name} lock"):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    # ------------------------------------------------------------------ opening
    def _open(self, embedder_name: str, dimension: int, now: float) -> None:
        config = self.config
        self.keywords = PgKeywordIndex(self._conn)  # type: ignore[assignment]
        stored = self.keywords.get_meta("manifest")
        manifest = None if stored is None else Manifest.from_dict(json.loads(stored), self.folder)
        if manifest is not None:
            manifest.check_embedder(embedder_name, dimension, self.folder)
        self._journal = PgJournal(self._conn)  # type: ignore[assignment]
        self._journal.at_commit = self._write_staged  # type: ignore[attr-defined]
        self._journal.committed = self._staged_committed  # type: ignore[attr-defined]
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
        # vectors of writes in flight (or a killed worker's, swept later) are no lost graph nodes
        with db_errors("reading pending writes"):
            pending = {r[0] for r in self._conn.execute("SELECT id FROM pending")}
        all_ids = self.vectors.all_ids
        self.vectors.all_ids = lambda: all_ids() - pending  # type: ignore[method-assign]
        try:
            self._recover(loaded.replay, self._memory_nodes(), problems, [])
        finally:
            del self.vectors.all_ids

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
            if self._pool is not None:
                with contextlib.suppress(Exception):
                    self._pool.close()
            with contextlib.suppress(Exception):
                self._conn.close()
            self._held = None
