"""What opening a memory folder does about what a crash or damage left behind.

:class:`Recovery` is a part of :class:`~ucma_core.storage.backend.Backend` (which
inherits it); it holds no state of its own. Opening a folder goes through it:

* The open intent a crash left in the journal tells exactly what to undo (records
  added to Chroma whose graph changes never committed, rows a replacement changed)
  or finish (a deletion Chroma had started). With group commit, the acknowledged
  records a crash left waiting for their Chroma write are added from the journal.
* Opening never deletes what it cannot account for. A missing manifest, a missing
  ``chroma/``, a collection that does not exist or belongs to another folder, lost
  parts of the journal, and records that Chroma and the graph disagree about
  without an intent to explain it all raise :class:`RepairNeededError` (nothing is
  changed); :class:`~ucma_core.storage.backend.Backend` with ``repair=True``
  (``Memory.repair``) fixes them and reports what it restored and dropped.
* Derived data is rebuilt: the keyword index is brought in line with Chroma (a
  damaged file of it is replaced on open by
  :meth:`~ucma_core.storage.keywords.KeywordIndex.open_or_rebuild`), and Chroma's
  vector index is computed again from the text when it cannot be read, was found
  damaged before Chroma opened it, or when Chroma fails on it or lets a file grow past
  any size the folder can need (then the index is set aside and the open tried once
  more, :meth:`Recovery._open_healing`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.config import MemoryConfig
from ucma_core.errors import (
    CorruptStoreError,
    DiskFullError,
    MemoryLockedError,
    RepairNeededError,
    StorageError,
)
from ucma_core.progress import ProgressCallback
from ucma_core.records import MemoryRecord
from ucma_core.storage import codec, markers
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.heal import SizeGuard, byte_bound, folder_records, is_index_failure
from ucma_core.storage.journal import JOURNAL, PREV_JOURNAL, PREV_SNAPSHOT, SNAPSHOT, Intent, Journal
from ucma_core.storage.keywords import KeywordIndex, keyword_row
from ucma_core.storage.manifest import Manifest
from ucma_core.storage.opening import forget_client, heal_segments, set_aside_all
from ucma_core.storage.pending import BufferedVectorStore, decode_vector
from ucma_core.storage.vectorcache import cache_args
from ucma_core.storage.vectors import FOLDER_KEY, CollectionProblem, VectorStore

__all__ = ["Recovery"]

_PAGE = 1000


class Recovery:
    """Crash recovery and repair on open, for :class:`~ucma_core.storage.backend.Backend`.

    The attributes below are the backend's (set by its constructor and ``_open``); the
    methods declared for type checking only are the backend's too.
    """

    folder: Path
    config: MemoryConfig
    manifest: Manifest
    keywords: KeywordIndex
    vectors: VectorStore
    graph: MemoryGraph
    _journal: Journal
    _embed: Callable[[list[str]], list[list[float]]] | None
    _repairing: bool
    _progress: ProgressCallback | None
    _rebuild_index: bool
    rebuilt_index: list[str]
    notes: list[str]
    problems: list[str]
    actions: list[str]
    restored: list[MemoryRecord]
    to_finish: list[str]
    scrub_pending: bool
    dropped: list[str]
    reembedded: list[str]
    _rollbacks: list[Callable[[], None]]
    _marked: set[str]
    _unfinished: Intent | None
    _opened: list[KeywordIndex | VectorStore | Journal]

    if TYPE_CHECKING:

        @property
        def keys(self) -> codec.ChromaKeys: ...
        def _open(self, embedder_name: str, dimension: int, now: float) -> None: ...
        def _set_manifest(self, **changes: Any) -> None: ...
        def _undo_add(self, ids: list[str]) -> None: ...
        def _undo_replace(self, old: dict[str, list[Any]]) -> None: ...
        def rebuild_collection(self, *, reembed: bool = False) -> None: ...

    # ------------------------------------------------------------------ a damaged vector index
    def _open_healing(self, embedder_name: str, dimension: int, now: float) -> None:
        """:meth:`_open` with Chroma's files watched (:class:`SizeGuard`); when Chroma fails on
        its vector index, or lets a file grow past any size the folder can need, every
        part is closed, the vector index is set aside and the open is tried once more
        (the vectors are then rebuilt from the records' text)."""
        if self.config.chroma.host is not None:
            self._open(embedder_name, dimension, now)
            return
        chroma_dir = self.folder / "chroma"
        limit = byte_bound(folder_records(self.folder), dimension)

        def runaway(path: Path, size: int) -> None:
            vectors = getattr(self, "vectors", None)
            if vectors is not None:
                vectors.abandon(
                    f"{path.name} grew to {size:,} bytes, past the {limit:,} any vector index of this "
                    "folder can need"
                )

        for attempt in (1, 2):
            guard = SizeGuard(chroma_dir, limit, on_trip=runaway)
            try:
                with guard:
                    self._open(embedder_name, dimension, now)
                return
            except (RepairNeededError, DiskFullError, MemoryLockedError):
                raise
            except StorageError as e:
                if attempt == 2 or not (guard.tripped or is_index_failure(e)):
                    raise
                why = (
                    str(e) if guard.tripped is None else f"{guard.tripped[0].name} grew past {limit:,} bytes"
                )
            self._close_parts()
            moved = set_aside_all(self.folder, why)
            if not moved:
                raise StorageError(
                    f"Chroma failed on its vector index in {chroma_dir} and none could be set aside: {why}"
                )
            self._reset_open_state()
            self.rebuilt_index.extend(moved)
            self.notes = list(self.rebuilt_index)  # what the first try set aside, too
            self._rebuild_index = True

    def _close_parts(self) -> None:
        """Close what a failed :meth:`_open` opened (the lock stays held)."""
        while self._opened:
            with contextlib.suppress(StorageError):
                self._opened.pop().close()
        forget_client(self.folder / "chroma")

    def _reset_open_state(self) -> None:
        self.notes, self.problems, self.actions = [], [], []
        self.restored, self.to_finish, self.dropped, self.reembedded = [], [], [], []
        self.scrub_pending = False
        self._rollbacks, self._marked, self._unfinished = [], set(), None

    # ------------------------------------------------------------------ refusing, or repairing, on open
    def _refuse(self, problems: list[str], plan: list[str]) -> None:
        what = "; ".join(problems)
        raise RepairNeededError(
            f"{self.folder} cannot be opened without losing memories: {what}. Nothing was changed. "
            "Restore the missing or damaged files from a backup, or run "
            "ucma_core.Memory.repair(path, dry_run=True) to see what a repair would restore and drop, "
            "then Memory.repair(path) to apply it",
            problems=tuple(problems),
            plan=tuple(plan),
        )

    def _holds_memories(self) -> bool:
        """Whether the folder has memories in any file (not a new folder)."""
        if (self.folder / "chroma").exists() or self.keywords.count():
            return True
        return any((self.folder / name).exists() for name in (SNAPSHOT, PREV_SNAPSHOT, PREV_JOURNAL)) or (
            (self.folder / JOURNAL).exists() and (self.folder / JOURNAL).stat().st_size > 64
        )

    def _recover_manifest(self, embedder_name: str, dimension: int, now: float) -> Manifest:
        """A repair's new manifest: from the copy in the keyword index or snapshot header, else
        from the one Chroma collection that belongs to a UCMA folder, else a new one."""
        for source, text in (
            ("keyword index", self.keywords.get_meta("manifest")),
            ("snapshot", self._snapshot_copy()),
        ):
            if text is None:
                continue
            with contextlib.suppress(CorruptStoreError, ValueError):
                manifest = Manifest.from_dict(json.loads(text), self.folder)
                manifest = dataclasses.replace(manifest, embedder_name=embedder_name, dimension=dimension)
                manifest.save(self.folder)
                self.actions.append(f"rebuilt ucma.json from the copy in the {source}")
                return manifest
        collection = None
        folder_id = None
        if self.config.chroma.host is None and (self.folder / "chroma").exists():
            probe = VectorStore(
                self.config.chroma, self.folder, timeout=self.config.limits.chroma_timeout_seconds
            )
            try:
                ours = {
                    n: m for n, m in probe.collections().items() if m.get(FOLDER_KEY) or n.startswith("ucma-")
                }
            finally:
                probe.close()
            if len(ours) == 1:
                collection, meta = next(iter(ours.items()))
                folder_id = str(meta.get(FOLDER_KEY) or collection.removeprefix("ucma-").split(".g")[0])
        manifest = Manifest.create(
            self.folder, embedder_name=embedder_name, dimension=dimension, now=now, collection=collection
        )
        if folder_id:
            # the records' key names used the lost secret: the upgrade names them afresh
            features = tuple(f for f in manifest.features if f != "keyed-hashes")
            manifest = dataclasses.replace(manifest, folder_id=folder_id, features=features)
            manifest.save(self.folder)
        self.actions.append(
            f"rebuilt ucma.json ({'collection ' + repr(collection) if collection else 'a new collection'})"
        )
        return manifest

    def _snapshot_copy(self) -> str | None:
        for name in (SNAPSHOT, PREV_SNAPSHOT):
            with contextlib.suppress(OSError, ValueError), open(self.folder / name, "rb") as fh:
                head = json.loads(fh.readline())
                if isinstance(head, dict) and isinstance(head.get("manifest"), dict):
                    return json.dumps(head["manifest"])
        return None

    def _open_chroma(self, fresh: bool, nodes: set[str], problems: list[str], plan: list[str]) -> None:
        config, manifest = self.config, self.manifest
        embedded = config.chroma.host is None
        chroma_dir = self.folder / "chroma"
        where = (
            str(chroma_dir) if embedded else f"the Chroma server at {config.chroma.host}:{config.chroma.port}"
        )
        create = fresh
        if embedded and not (chroma_dir / "chroma.sqlite3").exists() and not fresh:
            problems.append(f"{chroma_dir.name}/ (every record's text and vector) is missing")
            plan.append(self._restore_plan(nodes))
            if not self._repairing:
                self._refuse(problems, plan)
            create = True
        if embedded and (chroma_dir / "chroma.sqlite3").exists():
            moved = heal_segments(self.folder, manifest.dimension)
            if moved:
                self.notes.extend(moved)
                self.rebuilt_index.extend(moved)
                self._rebuild_index = True
        damaged: StorageError | None = None
        try:
            self.vectors = self._new_vectors()
            self._opened.append(self.vectors)
            self.vectors.use(manifest.collection, create=create, folder_id=manifest.folder_id)
            return
        except CollectionProblem as e:
            problems.append(f"{e} in {where}")
            ours = self._own_collections()
            if ours:
                plan.append(
                    f"use the collection {ours[-1]!r}, which belongs to this folder, and fix ucma.json"
                )
            else:
                plan.append(self._restore_plan(nodes))
            if not self._repairing:
                self._refuse(problems, plan)
            if ours:
                self.vectors.use(ours[-1], create=False, folder_id=manifest.folder_id)
                self._set_manifest(collection=ours[-1])
                self.actions.append(f"pointed ucma.json at this folder's collection {ours[-1]!r}")
                return
            if "does not exist" in str(e):
                self.vectors.use(manifest.collection, create=True, folder_id=manifest.folder_id)
                self.actions.append(f"created the missing Chroma collection {manifest.collection!r}")
                return
        except DiskFullError:
            raise
        except StorageError as e:
            if not (embedded and chroma_dir.exists()):
                raise  # a server that cannot be reached: nothing is lost, try again later
            damaged = e
        if damaged is not None:
            problems.append(f"Chroma's database in {chroma_dir} cannot be read ({damaged})")
            plan.append(
                f"move {chroma_dir.name}/ aside to chroma.damaged-N/ and "
                + self._restore_plan(nodes).replace("create an empty collection and ", "")
            )
            if not self._repairing:
                self._refuse(problems, plan)
            if self._opened and self._opened[-1] is getattr(self, "vectors", None):
                self._opened.pop().close()
            aside = self._set_aside(chroma_dir)
            self.actions.append(f"moved the unreadable {chroma_dir.name}/ to {aside.name}/")
            self.vectors = self._new_vectors()
            self._opened.append(self.vectors)
            self.vectors.use(manifest.collection, create=True, folder_id=manifest.folder_id)
            return
        name = manifest.next_collection()
        while name in self.vectors.collections():
            name = dataclasses.replace(manifest, collection=name).next_collection()
        self.vectors.use(name, create=True, folder_id=manifest.folder_id)
        self._set_manifest(collection=name)
        self.actions.append(f"created the Chroma collection {name!r} for this folder")

    def _new_vectors(self) -> VectorStore:
        """The folder's vector store: buffered (group commit) unless the config turns it off."""
        config = self.config
        timeout, batch = config.limits.chroma_timeout_seconds, config.limits.chroma_batch_size
        store: VectorStore
        if config.group_commit.enabled:
            store = BufferedVectorStore(
                config.chroma,
                self.folder,
                timeout=timeout,
                max_batch=batch,
                group=config.group_commit,
                min_free=config.limits.min_free_bytes if config.chroma.host is None else 0,
                **cache_args(config),
            )
        else:
            store = VectorStore(
                config.chroma, self.folder, timeout=timeout, max_batch=batch, **cache_args(config)
            )
        store.cache.shared_ids = self.graph.ident  # the caches keep the graph's id strings
        # a user's kept set listed from the keyword index, which holds a row for every record
        # (read through ``self``: a rebuilt index replaces the object)
        store.owned_by = lambda user: self.keywords.owned(user)
        return store

    def _own_collections(self) -> list[str]:
        """Collections stamped with this folder's id, oldest generation first."""
        try:
            found = self.vectors.collections()
        except StorageError:
            return []

        def generation(name: str) -> int:
            base, _, n = name.rpartition(".g")
            return int(n) if base and n.isdigit() else 1

        ours = [n for n, m in found.items() if m.get(FOLDER_KEY) == self.manifest.folder_id]
        return sorted(ours, key=generation)

    def _restore_plan(self, nodes: set[str]) -> str:
        copies = len(self.keywords.rows(sorted(nodes))) if nodes else 0
        lost = len(nodes) - copies
        return (
            f"create an empty collection and restore {copies} record(s) from the keyword index's copy "
            f"(re-embedded with the folder's embedder); drop {lost} graph memor{'y' if lost == 1 else 'ies'} "
            "whose text is nowhere else"
        )

    @staticmethod
    def _set_aside(path: Path) -> Path:
        n = 1
        while (aside := path.with_name(f"chroma.damaged-{n}")).exists():
            n += 1
        os.replace(path, aside)
        return aside

    # ------------------------------------------------------------------ crash recovery
    def _recover(self, replay: Any, nodes: set[str], problems: list[str], plan: list[str]) -> None:
        """Undo or finish what a crash left open, then make Chroma, the keyword index and the
        graph agree, refusing (unless repairing) where that would lose memories. Nothing is
        written before the decision to refuse."""
        intent: Intent | None = replay.open_intent
        undo_adds = [i for i in intent.add if i not in nodes] if intent else []
        doomed = [i for i in intent.delete if i in nodes] if intent else []
        stored = self.vectors.all_ids() - set(undo_adds) - set(doomed)
        # acknowledged records a crash left waiting for their Chroma write (group commit)
        waiting = {
            i: row for i, row in replay.pending.items() if i in nodes and i not in stored and i not in doomed
        }
        stored |= set(waiting)
        finish = set(doomed) | {i for i in replay.aborted_deletes if i in nodes and i not in stored}
        scrub = (
            replay.scrub_pending or replay.aborted_scrub or bool(intent and intent.scrub and intent.delete)
        )
        only_in_chroma = sorted(stored - nodes)
        orphans = sorted(nodes - stored - finish)
        strict = "intents" in self.manifest.features
        if only_in_chroma and strict and not self._repairing:
            problems.append(
                f"{len(only_in_chroma)} record(s) are in Chroma but not in the memory graph (the graph "
                "files lost them)"
            )
            plan.append(
                f"rebuild the graph nodes of those {len(only_in_chroma)} record(s) from Chroma with their "
                "first values (access counts, retention and supersession of them are reset)"
            )
        copies = self.keywords.rows(orphans) if orphans else {}
        gone = [i for i in orphans if i not in copies]
        if orphans and (strict or copies):
            problems.append(
                f"{len(orphans)} memor{'y is' if len(orphans) == 1 else 'ies are'} in the graph but "
                f"missing from Chroma ({len(copies)} still have their text in the keyword index)"
            )
            plan.append(
                f"restore {len(copies)} record(s) into Chroma from the keyword index's copy (re-embedded) "
                f"and drop {len(gone)} whose text is nowhere else"
            )
        elif orphans:  # an earlier version's deletion, interrupted after Chroma and the keyword index
            finish.update(gone)
            orphans = []
        if problems and not self._repairing:
            self._refuse(problems, plan)
        # -- from here on the folder is changed
        self._journal.open_for_append()
        if intent is not None:
            self._undo_add(undo_adds)
            if intent.rep:
                self._undo_replace(intent.rep)
            self.vectors.delete(doomed)
            self.keywords.delete(doomed)
            self._journal.append([{"op": "a"}])  # closed: a crash from here on does not undo it twice
            if doomed and intent.ops and not undo_adds and not intent.rep:
                # the changes made before the deletion belong to it: finished with it
                self.graph.redo(intent.ops, skip=doomed)
            if undo_adds or intent.rep or doomed:
                self.notes.append(
                    f"a write interrupted by a crash was completed or undone: {len(undo_adds)} uncommitted "
                    f"record(s) removed, {len(intent.rep)} replaced record(s) restored, {len(doomed)} "
                    "deletion(s) finished"
                )
        if waiting:
            self._write_waiting(waiting)
        if only_in_chroma:
            self.restored = self._restore_nodes(only_in_chroma)
            if strict:
                self.actions.append(f"rebuilt {len(only_in_chroma)} graph node(s) from Chroma")
        if orphans:
            self._restore_from_copies(copies)
            self.dropped = gone
            finish.update(gone)
            self.actions.append(
                f"restored {len(copies)} record(s) into Chroma from the keyword index; dropped {len(gone)} "
                "graph memor(ies) whose text was nowhere else"
            )
            stored |= set(copies)
        self._reconcile_keywords(stored)
        self.to_finish = sorted(finish)
        self.scrub_pending = scrub

    def _write_waiting(self, waiting: dict[str, list[Any]]) -> None:
        """Add to Chroma the records the journal says were waiting for it when the process
        ended (``[text, fields, vector]`` each)."""
        ids = sorted(waiting)
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            self.vectors.add(
                chunk,
                [decode_vector(waiting[i][2]) for i in chunk],
                [waiting[i][0] for i in chunk],
                [dict(waiting[i][1]) for i in chunk],
            )
        self.notes.append(
            f"{len(ids)} acknowledged record(s) were still waiting for their Chroma write when the "
            "process ended; they were written from the journal (nothing lost)"
        )

    def _restore_nodes(self, ids: list[str]) -> list[MemoryRecord]:
        restored: list[MemoryRecord] = []
        with self.graph.batch():
            for start in range(0, len(ids), _PAGE):
                rows = self.vectors.get(ids[start : start + _PAGE])
                for memory_id, (document, meta) in rows.items():
                    record = codec.decode(memory_id, document, meta, None)
                    self.graph.put_node(memory_id, {**codec.node_attrs(record), **markers.read(meta)})
                    restored.append(record)
        return restored

    def _restore_from_copies(self, copies: dict[str, tuple[str, dict[str, Any]]]) -> None:
        if not copies:
            return
        if self._embed is None:
            raise StorageError("restoring records from the keyword index needs the folder's embedder")
        ids = sorted(copies)
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            texts = [copies[i][0] for i in chunk]
            metadatas = [codec.rekey(i, copies[i][0], copies[i][1], self.keys) for i in chunk]
            self.vectors.add(chunk, self._embed(texts), texts, metadatas)
        self.reembedded = ids

    def _reconcile_keywords(self, stored: set[str]) -> None:
        indexed = self.keywords.ids()
        self.keywords.delete(sorted(indexed - stored))
        missing = sorted(stored - indexed)
        for start in range(0, len(missing), _PAGE):
            rows = self.vectors.get(missing[start : start + _PAGE])
            self.keywords.add(
                keyword_row(codec.decode(i, doc, meta, None), meta) for i, (doc, meta) in rows.items()
            )

    def _check_vectors(self) -> None:
        """Rebuild Chroma's vector index (by embedding the texts again) when it cannot be read
        or was set aside as damaged."""
        sample = sorted(self.keywords.ids())[:3]
        if not self._rebuild_index and (not sample or self.vectors.vectors_readable(sample)):
            return
        if self._embed is None:
            raise StorageError("Chroma's vector index is damaged and no embedder is available to rebuild it")
        count = self.vectors.count()
        self.rebuild_collection(reembed=True)
        why = "was set aside as damaged" if self._rebuild_index else "could not be read"
        self._rebuild_index = False
        self.notes.append(
            f"Chroma's vector index {why}; the vectors of all {count} record(s) were computed again from "
            "the text (derived data, nothing lost)"
        )
