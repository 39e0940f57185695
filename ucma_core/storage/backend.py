"""One memory folder opened for writing: lock, manifest, Chroma and the journaled graph.

Layout of a folder::

    ucma.json                 manifest: schema version, embedder, Chroma collection
    LOCK                      held while a process has the folder open
    chroma/                   embedded Chroma (absent in server mode)
    keywords.sqlite3          FTS5 keyword index and a copy of every record (derived from Chroma)
    graph.snapshot.json       graph + retention state, replaced atomically
    graph.journal.jsonl       changes since the snapshot, one JSON object a line
    graph.*.prev.*            the previous snapshot and the journal that followed it

Every write is a transaction of the graph (:meth:`MemoryGraph.batch`): its intent
goes to the journal first, then Chroma and the keyword index are written, then the
graph changes are committed. With group commit (``MemoryConfig.group_commit``, the
default for a folder) a small write of new records does not wait for Chroma: its
records go into the journal with the commit and wait in
:class:`~ucma_core.storage.pending.BufferedVectorStore`, which writes them to Chroma
in batches. If anything raises the graph changes are undone and
the records written to Chroma are removed again (a deletion, which cannot be
undone, is finished instead), so a call that raised stored nothing.

:class:`Backend` is assembled from parts named after what they do:

* :class:`~ucma_core.storage.recovery.Recovery` — what opening does after a crash
  (the open intent tells exactly what to undo or finish; records waiting for Chroma
  are added from the journal) or with damaged files: it never deletes what it cannot
  account for (it raises :class:`~ucma_core.errors.RepairNeededError`; ``repair=True``,
  as ``Memory.repair`` opens, fixes it and reports what it restored and dropped); it
  brings the keyword index in line with Chroma and rebuilds a damaged vector index
  (a damaged keyword index file is rebuilt by ``KeywordIndex.open_or_rebuild``).
* :class:`~ucma_core.storage.rekey.Rekey` — how the folder names tag, participant
  and metadata keys in Chroma, and the upgrade that names them afresh.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ucma_core.config import MemoryConfig
from ucma_core.errors import ConfigurationError, CorruptStoreError, StorageError
from ucma_core.progress import ProgressCallback
from ucma_core.records import MemoryRecord
from ucma_core.storage import codec, markers
from ucma_core.storage.diskspace import check_free_space, storage_error
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import JOURNAL, PREV_JOURNAL, PREV_SNAPSHOT, SNAPSHOT, Entry, Intent, Journal
from ucma_core.storage.keywords import KeywordIndex, keyword_row
from ucma_core.storage.lock import FolderLock
from ucma_core.storage.manifest import FEATURES, Manifest
from ucma_core.storage.opening import forget_client
from ucma_core.storage.pending import BufferedVectorStore
from ucma_core.storage.recovery import Recovery
from ucma_core.storage.rekey import Rekey
from ucma_core.storage.vectors import FOLDER_KEY, VectorStore, Where
from ucma_core.storage.verify import VerifyReport

__all__ = ["Backend", "Embed"]

#: Computes vectors for texts (the folder's embedder).
Embed = Callable[[list[str]], list[list[float]]]

#: Names UCMA writes into a memory folder (anything else makes a folder "not ours").
_OWN_FILES = frozenset(
    {
        "ucma.json",
        "LOCK",
        "chroma",
        "keywords.sqlite3",
        "keywords.sqlite3-wal",
        "keywords.sqlite3-shm",
        "keywords.sqlite3-journal",
        SNAPSHOT,
        JOURNAL,
        PREV_SNAPSHOT,
        PREV_JOURNAL,
        "skipped.jsonl",  # ucma_core.storage.skipped
    }
)
_PAGE = 1000


def _own(name: str) -> bool:
    return (
        name in _OWN_FILES
        or (name.endswith(".tmp") and name[:-4] in _OWN_FILES)
        or name.startswith("chroma.damaged")
    )


class Backend(Recovery, Rekey):
    """Persistence for one folder. Not thread-safe: :class:`~ucma_core.Memory` serialises calls.

    After construction :attr:`restored` holds records whose graph nodes were rebuilt from
    Chroma (the caller links them), :attr:`to_finish` ids whose deletion a crash
    interrupted (the caller deletes them) and :attr:`scrub_pending` whether their text
    must still be scrubbed.
    """

    def __init__(
        self,
        folder: Path,
        config: MemoryConfig,
        *,
        embedder_name: str,
        dimension: int,
        now: float,
        embed: Embed | None = None,
        repair: bool = False,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.folder = folder
        self.config = config
        self._embed = embed
        self._repairing = repair
        self._progress = progress
        #: Set when a damaged vector index was set aside: the vectors are rebuilt on open.
        self._rebuild_index = False
        #: The vector-index directories set aside and rebuilt while opening (for reports).
        self.rebuilt_index: list[str] = []
        #: Recoveries made while opening that lost nothing (shown by :meth:`verify`).
        self.notes: list[str] = []
        #: What was wrong (only when repairing: otherwise opening raised).
        self.problems: list[str] = []
        #: What a repair did.
        self.actions: list[str] = []
        self.restored: list[MemoryRecord] = []
        self.to_finish: list[str] = []
        self.scrub_pending = False
        self.dropped: list[str] = []
        self.reembedded: list[str] = []
        #: Called with (ids, scrub) to finish deletions a failed call left half done.
        self.finish_deletes: Callable[[list[str], bool], None] | None = None
        #: Called when graph changes were undone (indexes outside the graph are rebuilt).
        self.after_revert: Callable[[], None] | None = None
        self._rollbacks: list[Callable[[], None]] = []
        #: Memories whose markers changed since their copy in Chroma was last written.
        self._marked: set[str] = set()
        self._keys: tuple[str | None, codec.ChromaKeys] | None = None
        self._unfinished: Intent | None = None
        self._finishing = False
        self._opened: list[KeywordIndex | VectorStore | Journal] = []
        self._prepare(folder)
        self._lock = FolderLock(folder, timeout=config.lock_timeout)
        self._lock.acquire()
        try:
            self._open_healing(embedder_name, dimension, now)
        except BaseException:
            self._release(failed=True)
            raise

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _prepare(folder: Path) -> None:
        if folder.exists() and not folder.is_dir():
            raise ConfigurationError(f"{folder} is a file, not a memory folder")
        if folder.is_dir() and not Manifest.path(folder).exists():
            try:
                foreign = sorted(
                    p.name for p in folder.iterdir() if not p.name.startswith(".") and not _own(p.name)
                )
            except OSError as e:
                raise StorageError(f"cannot read {folder}: {e}") from e
            if foreign:
                shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
                raise ConfigurationError(
                    f"{folder} is not empty and is not a UCMA memory folder (it holds {shown}); give "
                    "Memory a new or empty folder so UCMA never writes among other files"
                )
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise storage_error(e, f"creating memory folder {folder}") from e

    def _open(self, embedder_name: str, dimension: int, now: float) -> None:
        folder, config = self.folder, self.config
        manifest = Manifest.load(folder)
        if manifest is not None:
            manifest.check_embedder(embedder_name, dimension, folder)
        self.keywords, note = KeywordIndex.open_or_rebuild(folder)
        self._opened.append(self.keywords)
        if note:
            self.notes.append(note)
        self._journal = Journal(folder, fsync=config.fsync)
        self._opened.append(self._journal)
        self.graph = MemoryGraph(self._journal, snapshot_every=config.snapshot_every, hooks=self)
        problems: list[str] = []
        plan: list[str] = []
        if manifest is None:
            if self._holds_memories():
                problems.append(f"{Manifest.path(folder).name} (the manifest) is missing")
                if not self._repairing:
                    self._refuse(
                        problems,
                        [
                            "rebuild ucma.json from the copy kept in the keyword index or graph snapshot "
                            "(or from the only UCMA collection in Chroma), with the embedder you pass"
                        ],
                    )
                manifest = self._recover_manifest(embedder_name, dimension, now)
            else:
                manifest = Manifest.create(
                    folder,
                    embedder_name=embedder_name,
                    dimension=dimension,
                    now=now,
                    collection=config.chroma.collection,
                )
        self.manifest = manifest
        self._journal.header = {"manifest": manifest.to_dict()}
        try:
            loaded = self._journal.load(
                lambda entries, ops: self.graph.load(entries, ops, tolerant=self._repairing),
                self.graph.clear,
                tolerate_damage=self._repairing,
            )
        except CorruptStoreError as e:
            if SNAPSHOT not in str(e) or (self.folder / PREV_SNAPSHOT).exists():
                raise
            # a snapshot cut short with no previous one to fall back on
            raise CorruptStoreError(
                f"{e}; or run ucma_core.Memory.repair(path) (`ucma verify PATH --repair`), which keeps the "
                "graph as far as it can be read and rebuilds the graph nodes of every other record from "
                "Chroma (their links and retention state are not recovered)"
            ) from e
        self.notes.extend(loaded.notes)
        if loaded.problems:
            if self._repairing:
                self.actions.append(
                    "could not recover what was only in the unreadable part of the graph files: links "
                    "between memories and entities, and the retention state of the records rebuilt from "
                    "Chroma"
                )
            problems.extend(loaded.problems)
            plan.append(
                "keep the graph as far as it can be read and rebuild the graph nodes of records it lost "
                "from Chroma with their first values (retention state, supersession and consolidation "
                "marks of those records are reset)"
            )
        replay = loaded.replay
        nodes = self._memory_nodes()
        fresh = not nodes and self.keywords.count() == 0
        self._open_chroma(fresh, nodes, problems, plan)
        self._recover(replay, nodes, problems, plan)
        if not set(FEATURES) <= set(self.manifest.features):
            self._upgrade()
        self._finish_rekey()
        self._check_vectors()
        self.keywords.set_meta("manifest", json.dumps(self.manifest.to_dict()))
        if self._repairing:
            self.problems = problems
            self.graph.compact(keep_previous=False)

    def _memory_nodes(self) -> set[str]:
        return {n for n, a in self.graph.nodes() if a.get("kind") == "memory"}

    # ------------------------------------------------------------------ manifest and collection
    def set_attachments(self, attachments: Mapping[str, Mapping[str, Any]]) -> None:
        """Record what adapters keep in the folder (see :mod:`ucma_core.attachments`)."""
        if dict(attachments) != dict(self.manifest.attachments):
            self._set_manifest(attachments={k: dict(v) for k, v in attachments.items()})

    def _set_manifest(self, **changes: Any) -> None:
        self.manifest = dataclasses.replace(self.manifest, **changes)
        self.manifest.save(self.folder)
        self._journal.header = {"manifest": self.manifest.to_dict()}
        self.keywords.set_meta("manifest", json.dumps(self.manifest.to_dict()))

    def rebuild_collection(self, *, reembed: bool = False) -> None:
        """Copy every record into a new collection and drop the old one, so nothing of deleted
        records (vectors in the vector index, keys in the collection schema) is left in
        Chroma. ``reembed`` computes the vectors again from the text."""
        self.flush()
        old = self.manifest.collection
        for name, meta in self.vectors.collections().items():  # an earlier rebuild a crash interrupted
            if name != old and meta.get(FOLDER_KEY) == self.manifest.folder_id:
                self.vectors.drop(name)
        new = self.manifest.next_collection()
        self.vectors.copy_to(
            new, self.manifest.folder_id, reembed=self._embed if reembed else None, progress=self._progress
        )
        self._set_manifest(collection=new)
        self.vectors.drop(old)
        self.vectors.remove_unused_segments()

    @staticmethod
    def recorded_embedder(folder: Path) -> tuple[str, int] | None:
        """The embedder name and dimension a folder was created with, if it exists."""
        manifest = Manifest.load(folder)
        return None if manifest is None else (manifest.embedder_name, manifest.dimension)

    # ------------------------------------------------------------------ transaction hooks
    def before_transaction(self) -> None:
        """Finish undoing an earlier failed write, and finish deletions a failed call left."""
        if self._rollbacks:
            pending = list(self._rollbacks)
            try:
                while pending:
                    pending[0]()
                    pending.pop(0)
            except BaseException as e:
                self._rollbacks = pending
                raise storage_error(e, "undoing an earlier write that failed (nothing new was stored)") from e
            self._rollbacks = []
        if self._unfinished is not None and not self._finishing and self.finish_deletes is not None:
            intent, self._unfinished = self._unfinished, None
            self._finishing = True
            try:
                self.finish_deletes([i for i in intent.delete if i in self.graph], intent.scrub)
            except BaseException:
                self._merge_unfinished(intent)
                raise
            finally:
                self._finishing = False
        if self.scrub_pending and not self._finishing and self.finish_deletes is not None:
            self._finishing = True
            try:
                self.scrub()
            finally:
                self._finishing = False

    def compaction_allowed(self) -> bool:
        # a snapshot drops the journal, and with it the intents of work still to finish and
        # the records still waiting for Chroma (written now, if Chroma takes them)
        return not self._rollbacks and self._unfinished is None and self._drained()

    def _drained(self) -> bool:
        """Whether no record waits for its Chroma write (writing what waits first)."""
        vectors = getattr(self, "vectors", None)
        if not isinstance(vectors, BufferedVectorStore):
            return True
        try:
            vectors.drain()
        except StorageError:
            return False
        return True

    def flush(self) -> None:
        """Return once Chroma holds every record waiting for its write (group commit).

        Raises:
            StorageError: Chroma refused the write; the records stay durable in the journal
                and waiting in the buffer, and are tried again.
        """
        if isinstance(self.vectors, BufferedVectorStore):
            self.vectors.drain()

    def rollback_failed(self, pending: list[Callable[[], None]]) -> None:
        self._rollbacks = pending + self._rollbacks

    def unfinished(self, intent: Intent) -> None:
        self._merge_unfinished(intent)

    def reverted(self) -> None:
        if self.after_revert is not None:
            self.after_revert()

    def _merge_unfinished(self, intent: Intent) -> None:
        if self._unfinished is None:
            self._unfinished = Intent()
        self._unfinished.merge(intent.line("i"))

    @property
    def unfinished_deletes(self) -> list[str]:
        """Ids whose deletion a failed call left to finish (done before the next write)."""
        return [] if self._unfinished is None else list(self._unfinished.delete)

    # ------------------------------------------------------------------ writes
    def _guard_space(self) -> None:
        check_free_space(self.folder, self.config.limits.min_free_bytes)

    def insert(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Store new records: intent, Chroma, keyword index, then their graph nodes (committed
        with the enclosing :meth:`MemoryGraph.batch`)."""
        if not records:
            return
        with self.graph.batch():
            self._guard_space()
            metadatas = [codec.to_metadata(r, self.keys) for r in records]
            ids = [r.id for r in records]
            new = [i for i in ids if i not in self.graph]  # an undo never removes a stored memory
            self.graph.intend(add=new)
            self.graph.on_abort(lambda: self._undo_add(new))
            texts = [r.content for r in records]
            if (
                isinstance(self.vectors, BufferedVectorStore)
                and len(ids) <= self.vectors.batch_size
                and len(new) == len(ids)
            ):
                # group commit: the journal keeps the rows until Chroma has them
                staged = self.vectors.stage(ids, vectors, texts, metadatas)
                self.graph.commit_with({"op": "p", "rows": staged})
            else:
                self.vectors.add(ids, vectors, texts, metadatas)
            self.keywords.add(keyword_row(r, m) for r, m in zip(records, metadatas, strict=True))
            for record in records:
                self.graph.put_node(record.id, codec.node_attrs(record))

    def replace(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Overwrite stored records (same ids) with new text, vector and fields; the old rows go
        into the intent so a failure or crash puts them back."""
        if not records:
            return
        with self.graph.batch():
            self._guard_space()
            metadatas = [codec.to_metadata(r, self.keys) for r in records]
            ids = [r.id for r in records]
            found = self.vectors.rows_with_vectors(ids)
            old: dict[str, list[Any]] = {i: [doc, meta, vec] for i, (doc, meta, vec) in found.items()}
            self.graph.intend(rep=old)
            self.graph.on_abort(lambda: self._undo_replace(old))
            # Chroma merges an upsert's metadata into the old one; None removes a key
            cleared: list[dict[str, Any]] = [
                {**{k: None for k in found[i][1] if k not in m}, **m} if i in found else m
                for i, m in zip(ids, metadatas, strict=True)
            ]
            self.vectors.upsert(ids, vectors, [r.content for r in records], cleared)
            self.keywords.delete(ids)
            self.keywords.add(keyword_row(r, m) for r, m in zip(records, metadatas, strict=True))
            for record in records:
                self.graph.put_node(record.id, codec.node_attrs(record))
                if markers.read(found[record.id][1] if record.id in found else {}):
                    self._marked.add(record.id)  # the new row has no copy of its markers yet

    def delete(self, ids: Sequence[str], *, scrub: bool = False) -> None:
        """Remove memories from Chroma, the keyword index and the graph. A deletion cannot be
        undone once Chroma has started it: if anything fails it is finished on the next
        call or open. ``scrub`` marks the text for :meth:`scrub`."""
        if not ids:
            return
        with self.graph.batch():
            self.graph.intend(delete=ids, scrub=scrub)
            self.graph.point_of_no_return()
            self.vectors.delete(ids)
            self.keywords.delete(ids)
            for memory_id in ids:
                self.graph.remove_node(memory_id)
            if scrub:
                self.graph.mark_scrub()

    def scrub(self, ids: Sequence[str] = ()) -> None:
        """Erase deleted records from every file: Chroma's records are copied into a fresh
        collection (so its vector index and key schema hold nothing of them), the old one
        and its files are dropped, Chroma's log and free pages and the keyword index are
        scrubbed, a Chroma directory a repair set aside is deleted, and the graph is folded
        into a new snapshot with no previous generation kept. Finishes the ``"s"`` mark of
        :meth:`delete`; safe to repeat."""
        self.flush()  # the snapshot below empties the journal, which holds what waits for Chroma
        self.rebuild_collection()
        self.vectors.scrub(ids)
        unknown = self.vectors.sanitize_index()
        if unknown:
            self.notes.append(
                f"the vector index in {', '.join(unknown)} has a layout this UCMA does not know; bytes "
                "Chroma wrote there from uninitialised memory were not cleared"
            )
        self.keywords.scrub()
        for aside in self.folder.glob("chroma.damaged-*"):  # set aside by a repair: may hold the text
            shutil.rmtree(aside, ignore_errors=True)
        self.graph.compact(keep_previous=False)
        self.scrub_pending = False

    def _undo_add(self, ids: list[str]) -> None:
        self.vectors.delete(ids)
        self.keywords.delete(ids)

    def _undo_replace(self, old: dict[str, list[Any]]) -> None:
        ids = sorted(old)
        self.vectors.delete(ids)
        self.vectors.add(ids, [old[i][2] for i in ids], [old[i][0] for i in ids], [old[i][1] for i in ids])
        self.keywords.delete(ids)
        self.keywords.add(keyword_row(codec.decode(i, old[i][0], old[i][1], None), old[i][1]) for i in ids)

    def set_state(self, memory_id: str, **attrs: Any) -> None:
        """Change mutable fields of a memory (journaled on its graph node)."""
        self.graph.put_node(memory_id, {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()})
        if not attrs.keys().isdisjoint(markers.MARKERS):
            self._marked.add(memory_id)

    def keep_markers(self) -> int:
        """Copy the markers of the memories whose markers changed into their Chroma rows
        (:mod:`~ucma_core.storage.markers`), so a node rebuilt from Chroma keeps them. Call
        it after the graph committed them (outside ``graph.batch()``); returns how many rows
        were written. A failure keeps them pending for the next call."""
        if not self._marked:
            return 0
        pending, self._marked = sorted(self._marked), set()
        nodes = {i: node for i in pending if (node := self.graph.node(i)) is not None}
        ids = sorted(nodes)
        try:
            if ids:
                self.vectors.update_metadata(ids, [{markers.KEY: markers.encode(nodes[i])} for i in ids])
        except BaseException:
            self._marked.update(pending)
            raise
        return len(ids)

    # ------------------------------------------------------------------ reads
    def nearest(
        self, vector: Sequence[float], n: int, where: Where | None
    ) -> list[tuple[str, float, np.ndarray]]:
        """``(id, cosine distance, float32 vector)`` of the ``n`` stored memories nearest to
        ``vector`` that match ``where`` (:meth:`Filters.where`), nearest first: one query
        answers ids, distances and the vectors retrieval needs (MMR, cosines)."""
        return self.vectors.nearest(vector, n, where)

    def nearest_later(
        self, vector: Sequence[float], n: int, where: Where | None
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]]:
        """:meth:`nearest` started: the function returned (which must be called) waits for it."""
        return self.vectors.nearest_later(vector, n, where)

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{id: float32 stored vector}`` for those of ``ids`` that exist (those read before
        come from the vector cache, the others in one read)."""
        return self.vectors.vectors_of(ids)

    def vectors_of_later(self, ids: Sequence[str]) -> Callable[[], dict[str, np.ndarray]]:
        """:meth:`vectors_of` started: the function returned (which must be called) waits for it."""
        return self.vectors.vectors_of_later(ids)

    def rows(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``{id: (text, stored fields)}`` for those of ``ids`` that exist: from the keyword
        index's copy of their fields, from Chroma for any row without one."""
        rows: dict[str, tuple[str, dict[str, Any]]] = dict(self.keywords.rows(ids))
        if len(rows) < len(ids):
            rows.update(self.vectors.get([i for i in ids if i not in rows]))
        return rows

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: text}`` for those of ``ids`` that exist (as :meth:`rows`, fields not decoded)."""
        read = getattr(self.keywords, "texts", None)  # a shared memory's index: from its rows
        found = dict(read(ids)) if read is not None else {}
        if len(found) < len(ids):
            found.update((i, t) for i, (t, _) in self.rows([i for i in ids if i not in found]).items())
        return found

    def fetch(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Full records for those of ``ids`` that exist (see :meth:`rows`)."""
        nodes = {i: node for i in ids if (node := self.graph.node(i)) is not None}
        return {i: codec.decode(i, doc, meta, nodes[i]) for i, (doc, meta) in self.rows(list(nodes)).items()}

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """Compare Chroma, the graph and the keyword index (reads only); ``deep`` also reads
        a sample of vectors and checks the keyword index file."""
        stored = self.vectors.all_ids()
        memories: set[str] = set()
        entities = 0
        bare: list[str] = []
        for node_id, attrs in self.graph.nodes():
            kind = attrs.get("kind")
            if kind == "memory":
                memories.add(node_id)
            elif kind == "entity":
                entities += 1
            else:
                bare.append(node_id)
        indexed = self.keywords.ids()
        problems: list[str] = []
        if self._rollbacks:
            problems.append("a write that failed is not fully undone yet (done before the next write)")
        if self._unfinished is not None:
            problems.append(
                f"{len(self._unfinished.delete)} deletion(s) a failed call left are finished before the "
                "next write"
            )
        if self.scrub_pending:
            problems.append("deleted text is waiting to be scrubbed from the files")
        if isinstance(self.vectors, BufferedVectorStore) and self.vectors.pending.error is not None:
            problems.append(
                f"{len(self.vectors.pending)} record(s) wait for their Chroma write, which failed "
                f"({self.vectors.pending.error}); they are durable in the journal and tried again"
            )
        if deep:
            sample = sorted(stored)[:20]
            if sample and not self.vectors.vectors_readable(sample):
                problems.append("Chroma's vector index cannot be read (it is rebuilt on the next open)")
            differ = self._texts_differ(sorted(stored & indexed))
            if differ:
                problems.append(
                    f"{len(differ)} record(s) have one text in Chroma and another in the keyword index "
                    f"({', '.join(differ[:3])}{', ...' if len(differ) > 3 else ''})"
                )
        return VerifyReport(
            chroma_records=len(stored),
            graph_memories=len(memories),
            keyword_rows=len(indexed),
            entities=entities,
            only_in_chroma=tuple(sorted(stored - memories)),
            only_in_graph=tuple(sorted(memories - stored)),
            missing_keywords=tuple(sorted(stored - indexed)),
            stale_keywords=tuple(sorted(indexed - stored)),
            bare_nodes=tuple(sorted(bare)),
            problems=tuple(problems),
            notes=tuple(self.notes),
        )

    def _texts_differ(self, ids: list[str]) -> list[str]:
        """Those of ``ids`` whose text in Chroma is not the keyword index's copy."""
        differ: list[str] = []
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            held = self.vectors.get(chunk)
            copies = self.keywords.rows(chunk)
            differ += [i for i in chunk if i in held and i in copies and held[i][0] != copies[i][0]]
        return differ

    def snapshot_entries(self) -> Iterator[Entry]:
        return self.graph.snapshot_entries()

    # ------------------------------------------------------------------ lifecycle
    def close(self, *, compact: bool = False) -> None:
        """Release the folder; ``compact`` first folds the journal into a new snapshot (when
        that fails, on a full disk, the journal still holds everything)."""
        try:
            if self._opened and (self._unfinished is not None or self._rollbacks):
                with contextlib.suppress(StorageError):
                    self.before_transaction()
            if (
                compact
                and self._opened
                and self._journal.entries_since_snapshot
                and self.compaction_allowed()
            ):
                with contextlib.suppress(StorageError):
                    self.graph.compact()
        finally:
            self._release()

    def _release(self, *, failed: bool = False) -> None:
        """Close every part and release the lock. After a ``failed`` open nothing of it is left
        in this process (a failing part does not keep the others, or the lock, held)."""
        try:
            while self._opened:
                item = self._opened.pop()
                if failed:
                    with contextlib.suppress(StorageError):
                        item.close()
                    continue
                item.close()
                if item is getattr(self, "vectors", None) and self.config.chroma.host is None:
                    # Chroma writes its vector index partly from uninitialised memory, which can hold
                    # text or vectors of anyone this process handled (a user just forgotten too):
                    # clear those bytes while nothing has the files open
                    self._sanitize_index()
        finally:
            if failed and self.config.chroma.host is None:
                forget_client(self.folder / "chroma")
            self._lock.release()

    def _sanitize_index(self) -> None:
        from ucma_core.storage.hnsw import sanitize

        chroma = self.folder / "chroma"
        with contextlib.suppress(OSError):
            for entry in chroma.iterdir() if chroma.exists() else ():
                if entry.is_dir() and not entry.name.startswith("."):
                    sanitize(entry)
