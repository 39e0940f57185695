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

New records (``observe``, and every other insert) never wait for Chroma. Under the
write lock, :meth:`insert` puts the ``records`` rows, the graph changes, the commit
mark *and* a ``pending`` row holding each record's vector in one SQL transaction:
once it commits, the record and its vector are durable in PostgreSQL, which is the
write-ahead log for Chroma. A background thread of the worker (:meth:`flush_pending`)
then adds every pending row to Chroma in one call, under the memory's flush lock,
and deletes the rows it added: the slow Chroma write runs outside the write lock,
and one call carries the rows of every worker that was waiting (a group commit).
A worker killed at any point leaves either no trace (before the commit) or pending
rows that the next flush of any worker, or the next open, adds (after it): no record
is ever without its vector, and no vector is added without its committed record.

Until its flush (usually well under a second) a new record is found by keyword,
entity, time and graph but not yet by vector search in *other* workers; the worker
that wrote it flushes its own pending rows before it reads (read your writes).
Writes that read or change Chroma rows (replacing, deleting, updating markers, a
consolidation job) flush every pending row first, so a late flush can never bring
back a vector they removed. A worker killed while its flush request is in flight in
the Chroma server, whose records another worker then deletes before the server has
applied that request, would leave those vectors without records: the delete leaves
tombstones that a flush deletes from Chroma again once the request can no longer be
in flight (:mod:`~ucma_core.storage.postgres.tombstones`).

A rebuild of the collection (re-keying, repair) runs in one worker while the others
serve, and every worker follows the switch with its next lock
(:mod:`~ucma_core.storage.postgres.repair`).

Other writes (replacing, deleting, consolidation's inserts) run as in a folder,
entirely under the write lock: the intent is a committed journal row before Chroma is
touched, then Chroma, then the ``records`` rows, then the graph changes and their
commit mark. A worker killed anywhere there leaves its intent open at the journal's
end and its lock released (PostgreSQL drops a dead session's locks). The next worker
to take the lock finds the open intent in :meth:`sync` and undoes it (records it added
are removed from Chroma and ``records``, replaced rows restored) or finishes it (a
deletion).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ucma_core.config import MemoryConfig
from ucma_core.errors import StorageError
from ucma_core.progress import ProgressCallback
from ucma_core.records import MemoryRecord
from ucma_core.storage import codec
from ucma_core.storage.backend import Backend, Embed
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import Intent
from ucma_core.storage.keywords import KeywordRow, keyword_row
from ucma_core.storage.manifest import Manifest, new_key_secret
from ucma_core.storage.postgres import tombstones
from ucma_core.storage.postgres.connection import connect, create_schema, lock_key, pool, use_schema
from ucma_core.storage.postgres.heldrows import HeldRows
from ucma_core.storage.postgres.journal import PgJournal, db_errors
from ucma_core.storage.postgres.keywords import PgKeywordIndex
from ucma_core.storage.postgres.pendingvectors import pending_vectors
from ucma_core.storage.postgres.repair import DROP_KEY, GEN_KEY, drop_left_behind, follow
from ucma_core.storage.postgres.skipped import PgSkippedLog
from ucma_core.storage.postgres.url import PostgresTarget
from ucma_core.storage.vectorcache import cache_args
from ucma_core.storage.vectors import CollectionProblem, VectorStore, Where
from ucma_core.storage.verify import VerifyReport

__all__ = ["PgBackend", "recorded_embedder"]

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
    """Persistence for one shared memory (see the module). Opening reads the graph under the
    write lock taken shared and releases it; an open with something to finish or undo
    first holds it exclusively until :meth:`unlock` (the caller finishes interrupted
    deletions first; see :meth:`_open`)."""

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
        #: Rows the next commit writes: ``records`` rows and ``pending`` rows (id, text, fields, vector).
        self._at_commit: list[tuple[list[KeywordRow], list[tuple[str, str, str, list[float]]]]] = []
        #: Ids this worker committed whose flush it has not seen yet (read your writes).
        self._unflushed: set[str] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._flusher: threading.Thread | None = None
        #: The last error of the background flush (shown by :meth:`verify`), if it failed.
        self.flush_error: str | None = None
        self._retrievals: list[tuple[str, float]] = []
        #: The ``records`` rows read while a reader holds the lock shared (see :mod:`.heldrows`).
        self._held_rows = HeldRows()
        #: Called (under the exclusive lock) with the retrievals :meth:`retrieved_later` kept.
        self.flush_retrievals: Callable[[list[tuple[str, float]]], None] | None = None
        #: The manifest generation this worker follows (moved on by a rebuild or a manifest change).
        self.gen = 0
        self._conn = connect(target)
        self._pool: Any = None
        try:
            with db_errors("reading the memory's schema"):
                current = use_schema(self._conn, target)
            if not current:  # a new memory, or tables of an older version: DDL races without the lock
                self.lock(sync=False)
                create_schema(self._conn, target)
                self.unlock()
            self._pool = pool(target)
            self._open(embedder_name, dimension, now)
        except BaseException:
            self._release()
            raise

    # ------------------------------------------------------------------ the write lock
    @property
    def held(self) -> str | None:
        """``"x"`` while this worker holds the write lock exclusively, ``"s"`` shared, else ``None``."""
        return self._held

    def lock(self, *, sync: bool = True, shared: bool = False) -> None:
        """Wait for the memory's write lock (``shared``: the readers' share of it), then apply
        what other workers committed. Readers first flush this worker's own pending
        vectors; exclusive holders commit this worker's kept retrieval marks."""
        if self._conn.closed:
            return
        journal: PgJournal | None = getattr(self, "_journal", None)
        if not sync or journal is None:
            verb = "pg_advisory_lock_shared" if shared else "pg_advisory_lock"
            with db_errors("waiting for the memory's write lock"):
                self._conn.execute(f"SELECT {verb}(hashtext(%s))", (self._key,))
            self._held = "s" if shared else "x"
            return
        exclusive, taken = not shared, False
        if shared and len(self._retrievals) >= _FLUSH_AT:  # commit them if no one waits for it
            with db_errors("trying the memory's write lock"):
                row = self._conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (self._key,)).fetchone()
            exclusive = taken = bool(row[0])
        with db_errors("waiting for the memory's write lock"):
            with self._conn.pipeline():  # one round trip: the lock, the change feed, the generation
                if not taken:
                    verb = "pg_advisory_lock" if exclusive else "pg_advisory_lock_shared"
                    self._conn.execute(f"SELECT {verb}(hashtext(%s))", (self._key,))
                feed = journal.pull_query()
                gen = self._conn.execute(  # and whether vectors wait for a flush (.wheresets)
                    "SELECT (SELECT value FROM meta WHERE key = %s), EXISTS (SELECT 1 FROM pending)",
                    (GEN_KEY,),
                )
            rows = feed.fetchall()
            found, waiting = gen.fetchone()
        self._held = "x" if exclusive else "s"
        if not exclusive and journal.open_at_tail(rows):
            self.unlock()  # a dead writer's intent: finishing it needs the write lock
            self.lock()
            return
        try:
            current = int(found) if found is not None else 0
            if current != self.gen:  # another worker changed the manifest (a rebuild, attachments)
                follow(self, current)
            self.sync(rows)
            if not exclusive and self._unflushed:
                self.flush_pending()  # read your writes: this worker's new vectors are in Chroma
                waiting = False  # and every other worker's waiting then (a flush takes them all)
            # a listing misses committed records whose vectors wait: keep none until they are in
            self.vectors.where_sets.settled = not waiting
            if exclusive and self._retrievals and self.flush_retrievals is not None:
                kept, self._retrievals = self._retrievals, []
                self.flush_retrievals(kept)
        except BaseException:
            self.unlock()
            raise
        if not exclusive:  # no one writes until unlock: rows read now stay true (.heldrows)
            self._held_rows.start()

    def unlock(self) -> None:
        """Release the write lock (a no-op once closed: a closed session holds no lock)."""
        self._held_rows.stop()
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
        rewritten: set[str] | None = None  # ids whose vectors may have changed (None: any)
        if result is None:  # a snapshot folded entries this process never read
            self.graph.clear()
            result = journal.load(lambda entries, ops: self.graph.load(entries, ops), self.graph.clear).replay
            changed = True
            if self.after_revert is not None:
                self.after_revert()
        elif result.ops:
            touched = {op["id"] for op in result.ops if op["op"] in ("n", "x")}
            rewritten = touched
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
            changed, rewritten = True, None
        vectors: VectorStore | None = getattr(self, "vectors", None)
        if changed and vectors is not None:  # another worker may have rewritten a vector read here
            # a vector changes only with its node (a replacement, a deletion: committed
            # together); new records' vectors are not cached yet
            if rewritten is None:
                vectors.cache.clear()
            else:
                vectors.cache.forget(rewritten)
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

    # ------------------------------------------------------------------ new records, pending vectors
    def insert(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Store new records (inside ``graph.batch()``): their ``records`` rows and ``pending``
        vectors are written in the commit's SQL transaction, Chroma later (see the module)."""
        if not records:
            return
        with self.graph.batch():
            metadatas = [codec.to_metadata(r, self.keys) for r in records]
            rows = [keyword_row(r, m) for r, m in zip(records, metadatas, strict=True)]
            try:
                pending = [
                    (
                        r.id,
                        r.content,
                        json.dumps(m, ensure_ascii=False, allow_nan=False),
                        [float(x) for x in v],
                    )
                    for r, m, v in zip(records, metadatas, vectors, strict=True)
                ]
            except (TypeError, ValueError) as e:
                raise StorageError(f"a record's fields cannot be written as JSON: {e}") from e
            item = (rows, pending)
            self._at_commit.append(item)
            self.graph.on_abort(lambda: self._at_commit.remove(item) if item in self._at_commit else None)
            for record in records:
                self.graph.put_node(record.id, codec.node_attrs(record))

    def rows(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """As the folder's, and records inserted by the transaction still open (their rows
        are written at its commit)."""
        own = {r.id: (r.content, dict(r.stored or {})) for rows, _ in self._at_commit for r in rows}
        found = {i: own[i] for i in ids if i in own}
        rest = [i for i in ids if i not in found]
        if rest and self._held_rows.active:  # a reader: rows read once per hold
            held = self._held_rows.read(rest, self.keywords.select)  # type: ignore[attr-defined]
            found.update(
                (i, (text, json.loads(stored))) for i, (text, stored) in held.items() if stored is not None
            )
            rest = [i for i in rest if i not in found]
            if rest:  # rows without a copy of their fields (as the folder's)
                found.update(self.vectors.get(rest))
        elif rest:
            found.update(super().rows(rest))
        return found

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """As the folder's: the open transaction's own records first; a reader's from the rows
        read once per hold (:mod:`.heldrows`)."""
        own = {r.id: r.content for rows, _ in self._at_commit for r in rows}
        found = {i: own[i] for i in ids if i in own}
        rest = [i for i in ids if i not in found]
        if not rest:
            return found
        if not self._held_rows.active:
            found.update(super().texts(rest))
            return found
        held = self._held_rows.read(rest, self.keywords.select)  # type: ignore[attr-defined]
        found.update((i, row[0]) for i, row in held.items())
        if len(found) < len(ids):
            found.update((i, t) for i, (t, _) in self.rows([i for i in ids if i not in found]).items())
        return found

    def nearest(
        self, vector: Sequence[float], n: int, where: Where | None
    ) -> list[tuple[str, float, np.ndarray]]:
        """As the folder's; a reader's next read of rows also reads the neighbours' (:mod:`.heldrows`)."""
        found = super().nearest(vector, n, where)
        self._held_rows.saw(i for i, _, _ in found)
        return found

    def nearest_later(
        self, vector: Sequence[float], n: int, where: Where | None
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]]:
        """As :meth:`nearest`, started (the function returned waits for it). A search a kept
        set answered in the process is done already: its hits' rows then come with the
        keyword search's statement (:mod:`.heldrows`)."""
        wait = super().nearest_later(vector, n, where)
        if self._held_rows.active and self.vectors.answered_here(where, n):
            found = wait()
            self._held_rows.saw(i for i, _, _ in found)
            return lambda: found

        def done() -> list[tuple[str, float, np.ndarray]]:
            found = wait()
            self._held_rows.saw(i for i, _, _ in found)
            return found

        return done

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.vectors_of_later(ids)()

    def vectors_of_later(self, ids: Sequence[str]) -> Callable[[], dict[str, np.ndarray]]:
        """As the folder's; a committed record whose vector still waits for its flush (another
        worker's new record, found by keyword or graph) has it from ``pending`` (:mod:`.pendingvectors`)."""
        wait = super().vectors_of_later(ids)

        def done() -> dict[str, np.ndarray]:
            found = wait()
            if len(found) < len(ids):
                found.update(pending_vectors(self._conn, [i for i in ids if i not in found]))
            return found

        return done

    def flush(self) -> None:
        """Return once Chroma holds every vector that waits in ``pending`` (any worker's)."""
        self.flush_pending()

    def _write_pending(self, cur: Any) -> None:
        """In the commit's SQL transaction: the new records' rows and their pending vectors."""
        for rows, pending in self._at_commit:
            self.keywords.write(cur, rows)  # type: ignore[attr-defined]
            cur.executemany(
                "INSERT INTO pending (id, document, fields, vector) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET document = excluded.document, fields = excluded.fields, "
                "vector = excluded.vector",
                pending,
            )

    def _pending_committed(self) -> None:
        if not self._at_commit:
            return
        for _, pending in self._at_commit:
            self._unflushed.update(row[0] for row in pending)
        self._at_commit = []
        self._start_flusher()
        self._wake.set()

    @contextlib.contextmanager
    def _flush_lock(self) -> Iterator[Any]:
        """The memory's flush lock, on a pooled connection held for the block."""
        key = lock_key(self.target, "flush")
        with self._pool.connection() as conn:
            with db_errors("waiting for the Chroma flush lock"):
                conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield conn
            finally:
                with db_errors("releasing the Chroma flush lock"):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    def flush_pending(self) -> int:
        """Add every pending vector (of any worker) to Chroma and delete its row, under the
        flush lock, a batch per Chroma call; returns how many. ``upsert``: a row a killed
        flusher may have half written is written whole again."""
        mine = set(self._unflushed)
        done = 0
        batch = self.config.limits.chroma_batch_size
        with self._flush_lock() as conn:
            while True:
                with db_errors("reading pending vectors"):
                    rows = conn.execute(  # only while this worker writes the current collection
                        "SELECT id, document, fields, vector FROM pending WHERE coalesce((SELECT value "
                        "FROM meta WHERE key = %s), '0') = %s ORDER BY since, id LIMIT %s",
                        (GEN_KEY, str(self.gen), batch),
                    ).fetchall()
                if not rows:
                    break
                ids = [r[0] for r in rows]
                self.vectors.upsert(
                    ids, [r[3] for r in rows], [r[1] for r in rows], [json.loads(r[2]) for r in rows]
                )
                with db_errors("clearing pending vectors"):
                    conn.execute("DELETE FROM pending WHERE id = ANY(%s)", (ids,))
                done += len(rows)
            tombstones.sweep(conn, self.vectors.delete)
        self._unflushed -= mine
        self.flush_error = None
        return done

    def _start_flusher(self) -> None:
        if self._flusher is None or not self._flusher.is_alive():
            self._flusher = threading.Thread(target=self._flush_loop, name="ucma-pending-flush", daemon=True)
            self._flusher.start()

    def _flush_loop(self) -> None:
        """The background flush: woken by each commit; on failure it retries, backing off to 5 s."""
        delay = 0.25
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.flush_pending()
                delay = 0.25
            except StorageError as e:
                self.flush_error = str(e)
                if self._stop.wait(delay):
                    return
                delay = min(5.0, delay * 2)
                self._wake.set()

    def replace(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        if records:
            self.flush_pending()
        super().replace(records, vectors)

    def delete(self, ids: Sequence[str], *, scrub: bool = False) -> None:
        if ids:
            window = self.config.limits.chroma_timeout_seconds
            if tombstones.bury(self._conn, ids, window):  # a dead flusher may still add them
                timer = threading.Timer(window + 0.5, self._wake.set)
                timer.daemon = True
                timer.start()
                self._start_flusher()
            self.flush_pending()
        super().delete(ids, scrub=scrub)

    def keep_markers(self) -> int:
        if self._marked:
            self.flush_pending()
        return super().keep_markers()

    # ------------------------------------------------------------------ readers' bookkeeping
    def retrieved_later(self, ids: Sequence[str], now: float) -> None:
        """Keep in this process that a retrieval returned ``ids`` at ``now`` (committed with
        the next exclusive lock; past ``20,000`` kept marks the oldest are dropped)."""
        self._retrievals.extend((i, now) for i in ids)
        if len(self._retrievals) > _KEEP_AT_MOST:
            del self._retrievals[: len(self._retrievals) - _KEEP_AT_MOST]

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """The folder's check, with records whose vector is still pending (committed, not yet
        flushed to Chroma) counted apart: they are not missing. Flushes what is pending first."""
        try:
            self.flush_pending()
        except StorageError as e:
            self.flush_error = str(e)
        report = super().verify(deep=deep)
        with db_errors("reading pending vectors"):
            pending = {r[0] for r in self._conn.execute("SELECT id FROM pending")}
        notes = list(report.notes)
        if self.flush_error:
            notes.append(f"the background flush of pending vectors failed, retrying: {self.flush_error}")
        in_flight = pending & set(report.only_in_graph)
        if not in_flight:
            return dataclasses.replace(report, notes=tuple(notes))
        notes.append(f"{len(in_flight)} new record(s) whose vectors are waiting for their flush to Chroma")
        return dataclasses.replace(
            report,
            only_in_graph=tuple(i for i in report.only_in_graph if i not in in_flight),
            stale_keywords=tuple(i for i in report.stale_keywords if i not in in_flight),
            notes=tuple(notes),
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
                self.flush_pending()  # the job reads vectors from Chroma
                yield
            finally:
                with db_errors(f"releasing the {name} lock"):
                    conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    # ------------------------------------------------------------------ opening
    def _open(self, embedder_name: str, dimension: int, now: float) -> None:
        """Read the manifest and the graph under the write lock taken *shared* (no writer is
        mid-write, other workers keep reading), then release it: an open costs one read of
        the graph and blocks no reader, and writers only for that read. Only a memory that
        needs writing first (new, a dead writer's open intent, an unfinished deletion or
        scrub, ``repair``) is opened as before: exclusively, Chroma's ids compared with the
        graph (O(records)), the lock held until :meth:`unlock`."""
        config = self.config
        self.keywords = PgKeywordIndex(self._conn)  # type: ignore[assignment]
        self.keywords.held = self._held_rows  # type: ignore[attr-defined]
        self._journal = PgJournal(self._conn)  # type: ignore[assignment]
        self._journal.at_commit = self._write_pending  # type: ignore[attr-defined]
        self._journal.committed = self._pending_committed  # type: ignore[attr-defined]
        self.graph = MemoryGraph(self._journal, snapshot_every=config.snapshot_every, hooks=self)
        self.lock(sync=False, shared=not self._repairing)
        manifest, loaded = self._load(embedder_name, dimension)
        if self._held == "s" and not self._clean(manifest, loaded.replay):
            self.unlock()
            self.lock(sync=False)
            manifest, loaded = self._load(embedder_name, dimension)
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
        self.gen = int(self.keywords.get_meta(GEN_KEY) or 0)
        quick = self._held == "s"
        if quick:  # the graph is read: nothing below needs the lock
            self.unlock()
        self.vectors = VectorStore(
            config.chroma,
            self.folder,
            timeout=config.limits.chroma_timeout_seconds,
            max_batch=config.limits.chroma_batch_size,
            **cache_args(config),
        )
        self.vectors.cache.shared_ids = self.graph.ident  # the caches keep the graph's id strings
        self._opened.append(self.vectors)
        try:
            self.vectors.use(manifest.collection, create=fresh, folder_id=manifest.folder_id)
        except CollectionProblem as e:
            raise StorageError(
                f"{e} in the Chroma server at {config.chroma.host}:{config.chroma.port}; the memory "
                f"{self.target.display} keeps its vectors in collection {manifest.collection!r}: open it "
                "with the Chroma server it was created with"
            ) from e
        if self.keywords.get_meta(DROP_KEY):  # a worker was killed before a rebuild's last step
            drop_left_behind(self)
        try:  # what a killed worker committed and never flushed
            self.flush_pending()
        except StorageError as e:
            self.flush_error = str(e)
        if quick:
            return
        with db_errors("reading pending vectors"):
            pending = {r[0] for r in self._conn.execute("SELECT id FROM pending")}
        all_ids = self.vectors.all_ids  # a pending vector is not missing
        self.vectors.all_ids = lambda: all_ids() | pending  # type: ignore[method-assign]
        try:
            self._recover(loaded.replay, self._memory_nodes(), self.problems, [])
        finally:
            del self.vectors.all_ids

    def _load(self, embedder_name: str, dimension: int) -> tuple[Manifest | None, Any]:
        """The manifest (checked against the embedder; ``None`` for a new memory) and the
        graph read from the snapshot and journal (under the write lock, either side)."""
        stored = self.keywords.get_meta("manifest")
        manifest = None if stored is None else Manifest.from_dict(json.loads(stored), self.folder)
        if manifest is not None:
            manifest.check_embedder(embedder_name, dimension, self.folder)
        self.graph.clear()
        loaded = self._journal.load(lambda entries, ops: self.graph.load(entries, ops), self.graph.clear)
        return manifest, loaded

    def _clean(self, manifest: Manifest | None, replay: Any) -> bool:
        """Whether opening has nothing to write: the memory exists, no write is left open or
        unfinished, no scrub is due (see :meth:`_open`)."""
        return (
            manifest is not None
            and replay.open_intent is None
            and not replay.scrub_pending
            and not replay.aborted_scrub
            and not any(i in self.graph for i in replay.aborted_deletes)
        )

    def _set_manifest(self, **changes: Any) -> None:
        """Change the manifest (the attachments list, ...) for every worker: the new
        generation makes the others read it again with their next lock."""
        manifest = dataclasses.replace(self.manifest, **changes)
        with db_errors("writing the manifest"), self._conn.transaction():
            self.keywords.set_meta("manifest", json.dumps(manifest.to_dict()))
            self.keywords.set_meta(GEN_KEY, str(self.gen + 1))
        self.manifest = manifest
        self.gen += 1

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
            f"a shared memory ({self.target.display}) rebuilds its Chroma collection while other workers "
            "serve: use Memory.repair(url) or Memory.rekey()"
        )

    def skipped_log(self) -> PgSkippedLog:
        """The memory's record of messages it did not store, shared by every worker."""
        return PgSkippedLog(self._conn)

    # ------------------------------------------------------------------ for .repair
    def committed_ids(self) -> set[str]:
        """Ids of the committed memories (graph memory nodes); call holding the write lock."""
        return self._memory_nodes()

    def execute(self, query: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of ``query`` on the lock's connection (call holding the write lock)."""
        return list(self._conn.execute(query, args).fetchall())

    def transaction(self) -> Any:
        """A transaction on the lock's connection (call holding the write lock)."""
        return self._conn.transaction()

    def pooled(self) -> Any:
        """A pooled connection (a context manager), usable from any thread."""
        return self._pool.connection()

    def new_vector_store(self) -> VectorStore:
        """A second client of the memory's Chroma server (no collection open yet)."""
        config = self.config
        return VectorStore(
            config.chroma,
            self.folder,
            timeout=config.limits.chroma_timeout_seconds,
            max_batch=config.limits.chroma_batch_size,
            cache_size=0,
        )

    # ------------------------------------------------------------------ lifecycle
    def _release(self, *, failed: bool = False) -> None:
        self._stop.set()
        self._wake.set()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(timeout=self.config.limits.chroma_timeout_seconds)
        if not failed and self._pool is not None and self._unflushed:
            with contextlib.suppress(StorageError):  # else the next flush of any worker adds them
                self.flush_pending()
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
