"""Rebuilding a shared memory's Chroma collection while its other workers keep serving:
the vectors re-embedded from the records (a repair), or every keyed hash named under a
new key secret (re-keying).

The ``records`` table is the truth for every memory's text and stored fields; the
Chroma collection is derived from it. :func:`rebuild` writes a *new* collection from
it and switches every worker to it:

1. Under the memory's job lock ``rebuild`` (one rebuild at a time), a short exclusive
   write lock notes which records are committed (graph memory nodes with a row) and the
   highest change number of ``records`` (every insert and update of a row gives it the
   next number of a sequence; no write is in progress while the lock is held, so every
   later one gets a higher number).
2. Without the write lock, page by page on a pooled connection, each record's text and
   fields are read from ``records`` and written into the new collection, their vectors
   re-embedded (``embed``) or read from the current collection (those it lacks are
   embedded). Other workers write and read the current collection meanwhile.
3. Under the exclusive write lock again, the pending vectors of every worker are
   flushed (so nothing waits for the old collection), and the records written or
   replaced since step 1 (the rows whose change number is above the one noted: an index
   range, not a pass over every row) are copied again, those deleted (no longer
   committed) deleted; the graph's markers are written.
   Then one SQL transaction switches the manifest (collection, and the key secret with
   the fields of every row when re-keying) and bumps ``meta.manifest_gen``.
4. The old collection is dropped (``meta.dropping`` names it from the switch until then:
   a worker killed before the drop leaves it to the next worker that opens the memory
   while no rebuild runs, :func:`drop_left_behind`). Every other worker reads ``manifest_gen`` in the
   round trip that takes its write lock (:meth:`PgBackend.lock
   <ucma_core.storage.postgres.backend.PgBackend.lock>`) and follows the switch
   (:func:`follow`) before it reads or writes; its background flush adds pending
   vectors only while its generation is the database's, so no vector reaches the old
   collection after the switch.

A worker killed anywhere leaves the memory as it was before the switch (the partial
copy is dropped by the next rebuild) or as it is after it (the old collection is
dropped by the next worker to open it): the switch is one transaction.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ucma_core.errors import StorageError
from ucma_core.progress import ProgressCallback, notify
from ucma_core.storage import codec, markers
from ucma_core.storage.manifest import Manifest, new_key_secret
from ucma_core.storage.postgres.connection import lock_key
from ucma_core.storage.postgres.journal import db_errors
from ucma_core.storage.vectors import FOLDER_KEY, VectorStore

if TYPE_CHECKING:
    from ucma_core.storage.postgres.backend import PgBackend

__all__ = ["DROP_KEY", "GEN_KEY", "RebuildResult", "drop_left_behind", "follow", "rebuild"]

#: The ``meta`` key counting manifest changes (absent: generation 0).
GEN_KEY = "manifest_gen"
#: The ``meta`` key naming the old collection from the switch until its drop (empty: none).
DROP_KEY = "dropping"
_PAGE = 256

Embed = Callable[[list[str]], list[list[float]]]


@dataclasses.dataclass(frozen=True)
class RebuildResult:
    """What :func:`rebuild` did."""

    #: Records written into the new collection.
    records: int
    #: Of those, how many were embedded again from their text.
    reembedded: int
    #: Records written, replaced or deleted by other workers during the copy (caught up).
    caught_up: int
    #: The collection the memory uses now, and the one dropped.
    collection: str
    dropped: str


def follow(backend: PgBackend, gen: int) -> None:
    """Read the manifest another worker changed (generation ``gen``): a rebuild's
    collection and key secret, or the list of attachments; open the collection if it
    changed."""
    stored = backend.keywords.get_meta("manifest")
    if stored is None:
        return
    manifest = Manifest.from_dict(json.loads(stored), backend.folder)
    if manifest.collection != backend.manifest.collection:
        backend.vectors.use(manifest.collection, create=False, folder_id=manifest.folder_id)
        backend.vectors.cache.clear()
    backend.manifest = manifest
    backend.gen = gen


def rebuild(
    backend: PgBackend,
    write_lock: AbstractContextManager[Any],
    *,
    embed: Embed | None,
    reembed: bool,
    rekey: bool,
    progress: ProgressCallback | None = None,
) -> RebuildResult:
    """Write the memory's records into a new collection and switch every worker to it (see
    the module). ``write_lock`` is the memory's exclusive lock (its process-wide
    :class:`~ucma_core.storage.postgres.lock.SharedLock`); ``reembed`` embeds every
    record again with ``embed``; ``rekey`` names tags, participants and metadata keys
    under a new key secret."""
    with backend.job("rebuild"):
        with write_lock:
            manifest = backend.manifest
            committed = backend.committed_ids()
            with db_errors("reading the records' change number"):
                since = int(backend.execute("SELECT coalesce(max(changed), 0) FROM records")[0][0])
        folder_id = manifest.folder_id
        old = manifest.collection
        secret = new_key_secret() if rekey else manifest.key_secret
        keys = codec.ChromaKeys.from_hex(secret)
        new = manifest.next_collection()
        for name, meta in backend.vectors.collections().items():  # a copy or old one a kill left
            if name != old and meta.get(FOLDER_KEY) == folder_id:
                backend.vectors.drop(name)
        target = backend.new_vector_store()
        try:
            target.use(new, create=True, folder_id=folder_id)
            copy = _Copier(backend, target, keys if rekey else None, embed if reembed else None, embed)
            ids = sorted(committed)
            label = "re-embedding the shared memory's vectors" if reembed else "copying the collection"
            if progress is not None:
                progress(0, len(ids), label)
            with backend.pooled() as conn:
                for start in range(0, len(ids), _PAGE):
                    copy.page(conn, ids[start : start + _PAGE])
                    if progress is not None:
                        progress(min(start + _PAGE, len(ids)), len(ids), label)
            with write_lock:
                caught = _catch_up(backend, copy, since)
                _switch(backend, target, new, secret, keys if rekey else None)
        except BaseException:
            target.close()
            if backend.manifest.collection != new:
                backend.vectors.drop(new)
            raise
        target.close()
        notify(progress, 0, 1, "dropping the old collection")
        backend.vectors.drop(old)
        backend.keywords.set_meta(DROP_KEY, "")
        notify(progress, 1, 1, "dropping the old collection")
    return RebuildResult(len(copy.copied), copy.embedded, caught, new, old)


class _Copier:
    """Copies ``records`` rows into the new collection, remembering what it copied."""

    def __init__(
        self,
        backend: PgBackend,
        target: VectorStore,
        keys: codec.ChromaKeys | None,
        reembed: Embed | None,
        embed: Embed | None,
    ) -> None:
        self.backend, self.target, self.keys = backend, target, keys
        self.reembed, self.embed = reembed, embed
        #: ids copied
        self.copied: set[str] = set()
        self.embedded = 0

    def page(self, conn: Any, ids: Sequence[str]) -> None:
        with db_errors("reading records to copy"):
            rows = conn.execute(
                "SELECT id, content, stored FROM records WHERE id = ANY(%s) AND stored IS NOT NULL",
                (list(ids),),
            ).fetchall()
        if not rows:
            return
        found = [r[0] for r in rows]
        texts = [r[1] for r in rows]
        fields = [json.loads(r[2]) for r in rows]
        if self.keys is not None:
            fields = [codec.rekey(i, t, f, self.keys) for i, t, f in zip(found, texts, fields, strict=True)]
        vectors = self._vectors(found, texts)
        self.target.upsert(found, vectors, texts, fields)
        self.copied.update(found)

    def _vectors(self, ids: list[str], texts: list[str]) -> list[list[float]]:
        if self.reembed is not None:
            self.embedded += len(ids)
            return [[float(x) for x in v] for v in self.reembed(texts)]
        have = self.backend.vectors.vectors_of(ids)
        missing = [n for n, i in enumerate(ids) if i not in have]
        fresh: dict[int, list[float]] = {}
        if missing:
            if self.embed is None:
                raise StorageError(
                    f"{len(missing)} record(s) have no vector in Chroma; pass the memory's embedder"
                )
            self.embedded += len(missing)
            vectors = self.embed([texts[n] for n in missing])
            fresh = {n: [float(x) for x in v] for n, v in zip(missing, vectors, strict=True)}
        return [fresh[n] if n in fresh else [float(x) for x in have[i]] for n, i in enumerate(ids)]


def _catch_up(backend: PgBackend, copy: _Copier, since: int) -> int:
    """Under the exclusive write lock: copy again what other workers wrote since the ids
    were noted (change number above ``since``), delete what they deleted, and write the
    graph's markers."""
    backend.flush_pending()
    committed = backend.committed_ids()
    with db_errors("reading the records changed during the copy"):
        touched = {r[0] for r in backend.execute("SELECT id FROM records WHERE changed > %s", (since,))}
    gone = sorted(copy.copied - committed)
    changed = sorted((touched | (committed - copy.copied)) & committed)  # and any never copied
    if gone:
        copy.target.delete(gone)
        copy.copied.difference_update(gone)
    with backend.pooled() as conn:
        for start in range(0, len(changed), _PAGE):
            copy.page(conn, changed[start : start + _PAGE])
    marked = {}
    for memory_id in copy.copied:
        node = backend.graph.node(memory_id)
        if node is not None:
            text = markers.encode(node.to_dict())
            if text != "{}":
                marked[memory_id] = text
    if marked:
        ids = sorted(marked)
        copy.target.update_metadata(ids, [{markers.KEY: marked[i]} for i in ids])
    return len(gone) + len(changed)


def _switch(
    backend: PgBackend, target: VectorStore, new: str, secret: str | None, keys: codec.ChromaKeys | None
) -> None:
    """One SQL transaction: the manifest names the new collection (and secret, with every
    row's fields re-keyed) and the generation moves on; then this worker follows."""
    manifest = dataclasses.replace(backend.manifest, collection=new, key_secret=secret)
    gen = backend.gen + 1
    meta = {
        "manifest": json.dumps(manifest.to_dict()),
        GEN_KEY: str(gen),
        DROP_KEY: backend.manifest.collection,
    }
    if keys is not None:
        backend.keywords.rewrite_stored(lambda i, text, stored: codec.rekey(i, text, stored, keys), meta)
    else:
        with db_errors("switching the manifest"), backend.transaction():
            for key, value in meta.items():
                backend.keywords.set_meta(key, value)
    backend.manifest = manifest
    backend.vectors.use(new, create=False, folder_id=manifest.folder_id)
    backend.vectors.cache.clear()
    backend.gen = gen


def drop_left_behind(backend: PgBackend) -> str | None:
    """Drop the old collection a worker killed between a rebuild's switch and its drop left
    (``meta.dropping``), unless a rebuild runs now (its job lock is taken: that rebuild
    drops its own); returns the name dropped. Called by a worker that opens the memory."""
    key = lock_key(backend.target, "job:rebuild")
    with backend.pooled() as conn:
        with db_errors("trying the rebuild lock"):
            free = bool(conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0])
        if not free:
            return None
        try:
            with db_errors("reading the collection to drop"):  # again: a rebuild may have run since
                row = conn.execute(
                    "SELECT d.value, m.value FROM meta d, meta m WHERE d.key = %s AND m.key = 'manifest'",
                    (DROP_KEY,),
                ).fetchone()
            if row is None or not row[0]:
                return None
            old, manifest = str(row[0]), Manifest.from_dict(json.loads(row[1]), backend.folder)
            ours = backend.vectors.collections().get(old, {}).get(FOLDER_KEY) == manifest.folder_id
            if ours and old not in (manifest.collection, backend.vectors.name):
                backend.vectors.drop(old)
            with db_errors("noting the dropped collection"):
                conn.execute("UPDATE meta SET value = '' WHERE key = %s AND value = %s", (DROP_KEY, old))
            return old
        finally:
            with db_errors("releasing the rebuild lock"):
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))


def reindex(backend: PgBackend) -> None:
    """Rebuild the ``records`` table's indexes (the keyword index among them) without
    blocking the other workers' reads and writes (``REINDEX ... CONCURRENTLY``); the
    ``tsvector`` and length columns are generated from the text by PostgreSQL itself."""
    with backend.pooled() as conn, db_errors("rebuilding the keyword index"):
        conn.execute("REINDEX TABLE CONCURRENTLY records")
