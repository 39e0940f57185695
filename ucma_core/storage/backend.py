"""One memory folder opened for writing: lock, manifest, Chroma and the journaled graph.

Layout of a folder::

    ucma.json                 manifest: schema version, embedder, Chroma collection
    LOCK                      held while a process has the folder open
    chroma/                   embedded Chroma (absent in server mode)
    keywords.sqlite3          FTS5 keyword index (derived from Chroma, repaired on open)
    graph.snapshot.json       graph + retention state, replaced atomically
    graph.journal.jsonl       changes since the snapshot, one JSON object a line

Write order makes a crash at any point recoverable: a new memory goes to Chroma
first and to the graph second; a deletion leaves Chroma first and the graph
second. :meth:`Backend.reconcile` then only has to rebuild nodes that Chroma has
and the graph lacks, and drop nodes that Chroma lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ucma_core.config import MemoryConfig
from ucma_core.errors import StorageError
from ucma_core.records import MemoryRecord
from ucma_core.storage import codec
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import Journal
from ucma_core.storage.keywords import KeywordIndex, KeywordRow
from ucma_core.storage.lock import FolderLock
from ucma_core.storage.manifest import Manifest
from ucma_core.storage.vectors import VectorStore, open_chroma
from ucma_core.storage.verify import VerifyReport

__all__ = ["Backend"]


class Backend:
    """Persistence for one folder. Not thread-safe: :class:`~ucma_core.Memory` serialises calls."""

    def __init__(
        self, folder: Path, config: MemoryConfig, *, embedder_name: str, dimension: int, now: float
    ) -> None:
        self.folder = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot create memory folder {folder}: {e}") from e
        self._lock = FolderLock(folder, timeout=config.lock_timeout)
        self._lock.acquire()
        #: what is open, in opening order (closed in reverse by :meth:`_release`)
        self._opened: list[KeywordIndex | VectorStore | Journal] = []
        try:
            manifest = Manifest.load(folder)
            if manifest is None:
                manifest = Manifest.create(
                    folder,
                    embedder_name=embedder_name,
                    dimension=dimension,
                    now=now,
                    collection=config.chroma.collection,
                )
            else:
                manifest.check_embedder(embedder_name, dimension, folder)
            self.manifest = manifest
            embedded = None if config.chroma.host else folder / "chroma"
            self.vectors = VectorStore(
                open_chroma(config.chroma, folder), manifest.collection, embedded_path=embedded
            )
            self._opened.append(self.vectors)
            self.keywords = KeywordIndex(folder)
            self._opened.append(self.keywords)
            self._journal = Journal(folder, fsync=config.fsync)
            self._opened.append(self._journal)
            snapshot, ops = self._journal.load()
            self.graph = MemoryGraph(self._journal, snapshot_every=config.snapshot_every)
            self.graph.load(snapshot, ops)
            self._upgrade()
        except BaseException:
            self._release()
            raise

    def _upgrade(self) -> None:
        """Bring a folder written by an earlier version up to :data:`~ucma_core.storage.manifest.FEATURES`."""
        if "metadata-keys" not in self.manifest.features:
            self._promote_metadata()
            self.manifest = dataclasses.replace(
                self.manifest, features=(*self.manifest.features, "metadata-keys")
            )
            self.manifest.save(self.folder)

    def _promote_metadata(self) -> None:
        """Store each record's top-level scalar metadata values under filterable keys
        (Chroma and the keyword index's copy), so ``metadata_filter`` sees old records."""
        ids = sorted(self.vectors.all_ids())
        for start in range(0, len(ids), 500):
            rows = self.vectors.get(ids[start : start + 500])
            records = {i: codec.decode(i, doc, meta, None) for i, (doc, meta) in rows.items()}
            extra = {i: codec.filterable_metadata(r.metadata) for i, r in records.items()}
            changed = [i for i in records if extra[i]]
            self.vectors.update_metadata(changed, [extra[i] for i in changed])
            self.keywords.delete(changed)
            self.keywords.add(_keyword_row(records[i], {**rows[i][1], **extra[i]}) for i in changed)

    @staticmethod
    def recorded_embedder(folder: Path) -> tuple[str, int] | None:
        """The embedder name and dimension a folder was created with, if it exists."""
        manifest = Manifest.load(folder)
        return None if manifest is None else (manifest.embedder_name, manifest.dimension)

    # ------------------------------------------------------------------ consistency
    def reconcile(self) -> tuple[list[MemoryRecord], list[str]]:
        """Make the graph agree with Chroma after a crash.

        Rebuilds the nodes of records Chroma has and the graph lacks, and returns
        them (the caller re-links them), with the ids of graph nodes whose record
        Chroma never stored (the caller deletes them, mending the links around them).
        """
        memory_nodes = {n for n, a in self.graph.nodes() if a.get("kind") == "memory"}
        stored = self.vectors.all_ids()
        missing = sorted(stored - memory_nodes)
        orphans = sorted(memory_nodes - stored)
        restored: list[MemoryRecord] = []
        self._reconcile_keywords(stored)
        with self.graph.batch():
            for start in range(0, len(missing), 1000):
                rows = self.vectors.get(missing[start : start + 1000])
                for memory_id, (document, meta) in rows.items():
                    record = codec.decode(memory_id, document, meta, None)
                    self.graph.put_node(memory_id, codec.node_attrs(record))
                    restored.append(record)
        return restored, orphans

    def _reconcile_keywords(self, stored: set[str]) -> None:
        indexed = self.keywords.ids()
        self.keywords.delete(sorted(indexed - stored))
        missing = sorted(stored - indexed)
        for start in range(0, len(missing), 1000):
            rows = self.vectors.get(missing[start : start + 1000])
            self.keywords.add(
                _keyword_row(codec.decode(i, doc, meta, None), meta) for i, (doc, meta) in rows.items()
            )

    def verify(self) -> VerifyReport:
        """Compare Chroma, the graph and the keyword index (reads only)."""
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
        )

    # ------------------------------------------------------------------ writes
    def insert(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Store new records: Chroma first, then their graph nodes (one journal append
        when called inside :meth:`MemoryGraph.batch`)."""
        metadatas = [codec.to_metadata(r) for r in records]
        self.vectors.add([r.id for r in records], vectors, [r.content for r in records], metadatas)
        self.keywords.add(_keyword_row(r, m) for r, m in zip(records, metadatas, strict=True))
        for record in records:
            self.graph.put_node(record.id, codec.node_attrs(record))

    def replace(self, records: Sequence[MemoryRecord], vectors: Sequence[Sequence[float]]) -> None:
        """Overwrite stored records (same ids) with new text, vector and fields: Chroma
        first, then the keyword index and the graph nodes."""
        metadatas = [codec.to_metadata(r) for r in records]
        ids = [r.id for r in records]
        old = self.rows(ids)
        # Chroma merges an upsert's metadata into the old one; None removes a key
        cleared: list[dict[str, Any]] = [
            {**{k: None for k in old.get(i, ("", {}))[1] if k not in m}, **m}
            for i, m in zip(ids, metadatas, strict=True)
        ]
        self.vectors.upsert(ids, vectors, [r.content for r in records], cleared)
        self.keywords.delete(ids)
        self.keywords.add(_keyword_row(r, m) for r, m in zip(records, metadatas, strict=True))
        for record in records:
            self.graph.put_node(record.id, codec.node_attrs(record))

    def delete(self, ids: Sequence[str], *, scrub: bool = False) -> None:
        """Remove memories from Chroma, then from the graph; ``scrub`` also erases their text
        from the embedded Chroma files."""
        self.vectors.delete(ids)
        self.keywords.delete(ids)
        with self.graph.batch():
            for memory_id in ids:
                self.graph.remove_node(memory_id)
        if scrub:
            self.vectors.scrub(ids)
            self.keywords.scrub()

    def set_state(self, memory_id: str, **attrs: Any) -> None:
        """Change mutable fields of a memory (journaled on its graph node)."""
        self.graph.put_node(memory_id, {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()})

    # ------------------------------------------------------------------ reads
    def rows(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        """``{id: (text, stored fields)}`` for those of ``ids`` that exist: from the keyword
        index's copy of their fields, from Chroma for any row without one."""
        rows: dict[str, tuple[str, dict[str, Any]]] = dict(self.keywords.rows(ids))
        if len(rows) < len(ids):
            rows.update(self.vectors.get([i for i in ids if i not in rows]))
        return rows

    def fetch(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """Full records for those of ``ids`` that exist (see :meth:`rows`)."""
        nodes = {i: node for i in ids if (node := self.graph.node(i)) is not None}
        return {i: codec.decode(i, doc, meta, nodes[i]) for i, (doc, meta) in self.rows(list(nodes)).items()}

    # ------------------------------------------------------------------ lifecycle
    def close(self, *, compact: bool = False) -> None:
        """Release the folder; ``compact`` first folds the journal into a new snapshot."""
        try:
            if compact and self._opened and self._journal.entries_since_snapshot:
                self.graph.compact()
        finally:
            self._release()

    def _release(self) -> None:
        try:
            while self._opened:
                self._opened.pop().close()
        finally:
            self._lock.release()


def _keyword_row(record: MemoryRecord, stored: dict[str, str | int | float | bool]) -> KeywordRow:
    return KeywordRow(
        id=record.id,
        content=record.content,
        user_id=record.user_id,
        agent_id=record.agent_id,
        session_id=record.session_id,
        memory_type=record.memory_type.value,
        timestamp=record.timestamp,
        stored=stored,
    )
