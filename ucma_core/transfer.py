"""Moving memories between folders: a consistent read of everything, and storing records
under their own ids.

:class:`Transfer` is the part of :class:`~ucma_core.Memory` that
:mod:`ucma_core.portable` (export / import) and backups are built on:

* :meth:`Transfer.snapshot` holds the memory's lock and hands out a :class:`Snapshot`,
  a read of every memory (records, the sleep cycle's marks, stored vectors), entity and
  edge that nothing changes while it is open;
* :meth:`Transfer.restore` stores records as they are (ids, scope, retention state and
  all), with their vectors and marks, then entities and edges, all or nothing.

Examples:
    >>> import tempfile
    >>> from ucma_core import Memory
    >>> from ucma_core.embedders import HashingEmbedder
    >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as a:
    ...     _ = a.observe("Ana moved to Lisbon in May.", user_id="ana", keep=True)
    ...     with a.snapshot() as snap:
    ...         ids = snap.memory_ids()
    ...         records, vectors = snap.records(ids), snap.vectors(ids)
    >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as b:
    ...     b.restore(records, vectors=vectors).memories
    ...     b.get(ids[0]).content
    1
    'Ana moved to Lisbon in May.'
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ucma_core.errors import ClosedMemoryError, InvalidInputError, StorageError
from ucma_core.memory_base import MemoryBase
from ucma_core.records import MemoryRecord
from ucma_core.scope import ANY, Scope
from ucma_core.storage import codec
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.folder import FolderStores
from ucma_core.validation import check_content, check_scope_id

__all__ = ["RestoreReport", "Snapshot", "Transfer"]

#: Graph attributes a mark may not set: they come from the record itself.
_RESERVED_MARKS = frozenset({"kind", "memory_type", "key"})

Edge = tuple[str, str, str, float]


@dataclass(frozen=True)
class RestoreReport:
    """What :meth:`Transfer.restore` stored.

    Attributes:
        memories: records stored.
        skipped: records whose id was already stored (restoring twice stores nothing new).
        key_conflicts: keyed records whose key another memory holds in that scope (not stored).
        embedded: stored records whose content was embedded (no usable vector was given).
        entities: entity nodes set.
        edges: edges set with their weights.
        edges_skipped: edges with an end that is not in the folder.
    """

    memories: int = 0
    skipped: int = 0
    key_conflicts: int = 0
    embedded: int = 0
    entities: int = 0
    edges: int = 0
    edges_skipped: int = 0


class Snapshot:
    """Everything a memory folder holds, read under the memory's lock (see
    :meth:`Transfer.snapshot`); usable only inside its ``with`` block."""

    def __init__(self, stores: FolderStores) -> None:
        self._stores: FolderStores | None = stores

    def _open(self) -> FolderStores:
        if self._stores is None:
            raise ClosedMemoryError("a snapshot is read inside its `with memory.snapshot()` block only")
        return self._stores

    def memory_ids(self) -> list[str]:
        """The id of every memory of every user, in the order they were stored."""
        return [i for i, _ in self._open().scan(Scope(ANY))]

    def entity_ids(self) -> list[str]:
        """The id of every entity node (``entity:…``)."""
        return [i for i, a in self._open().graph.nodes() if a.get("kind") == "entity"]

    def records(self, ids: Sequence[str]) -> list[MemoryRecord]:
        """The records of those of ``ids`` that are stored, in the order of ``ids``."""
        return self._open().fetch_ordered(list(ids), MemoryRecord)

    def marks(self, record: MemoryRecord) -> dict[str, Any]:
        """What the graph keeps beside ``record``'s own fields: the sleep cycle's marks
        (``facts_done``, ``mined``, ``dedup_done``, ``consolidated_into``…), ``pinned``.
        :meth:`Transfer.restore` takes them back as ``marks``."""
        node = self._open().graph.node(record.id) or {}
        derived = codec.node_attrs(record)
        return {k: v for k, v in node.items() if k not in derived}

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{id: stored embedding}`` for those of ``ids`` that have one."""
        return self._open().backend.vectors.vectors_of(list(ids))

    def entity(self, entity_id: str) -> dict[str, Any]:
        """An entity's attributes (``name``, ``user_id``, ``agent_id``); empty if there is none."""
        return {k: v for k, v in (self._open().graph.node(entity_id) or {}).items() if k != "kind"}

    def edges(self) -> list[Edge]:
        """Every edge between memories and entities, ``(from, to, type, weight)``, sorted."""
        graph = self._open().graph
        nodes = [*self.memory_ids(), *self.entity_ids()]
        known = set(nodes)
        return sorted(
            (u, v, t, w)
            for node in nodes
            for u, v, t, w in graph.edges_of(node, direction="out")
            if v in known
        )

    def close(self) -> None:
        self._stores = None


def _check_records(records: object, max_chars: int) -> list[MemoryRecord]:
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
        raise InvalidInputError("restore takes a list of MemoryRecord")
    seen: set[str] = set()
    for n, record in enumerate(records):
        if not isinstance(record, MemoryRecord):
            raise InvalidInputError(f"record {n} must be a MemoryRecord, not {type(record).__name__}")
        if not isinstance(record.id, str) or not record.id.strip() or record.id.startswith("entity:"):
            raise InvalidInputError(f"record {n} has no usable id: {record.id!r}")
        if record.id in seen:
            raise InvalidInputError(f"record id {record.id!r} is given twice")
        seen.add(record.id)
        check_content(record.content, max_chars=max_chars, what=f"record {record.id!r} content")
        for name in ("user_id", "agent_id", "session_id"):
            check_scope_id(getattr(record, name), f"record {record.id!r} {name}")
    return list(records)


def _check_vectors(
    vectors: Mapping[str, Sequence[float]], ids: set[str], dimension: int
) -> dict[str, list[float]]:
    if not isinstance(vectors, Mapping):
        raise InvalidInputError("vectors must be a dict {record id: vector}")
    checked: dict[str, list[float]] = {}
    for memory_id, vector in vectors.items():
        if memory_id not in ids:
            raise InvalidInputError(f"vectors has an id that is not among the records: {memory_id!r}")
        try:
            values = [float(x) for x in vector]
        except (TypeError, ValueError) as e:
            raise InvalidInputError(f"the vector of {memory_id!r} is not a list of numbers") from e
        if len(values) != dimension or not all(math.isfinite(x) for x in values):
            raise InvalidInputError(
                f"the vector of {memory_id!r} must have {dimension} finite values (this folder's embedder), "
                f"got {len(values)}"
            )
        checked[memory_id] = values
    return checked


def _check_marks(marks: Mapping[str, Mapping[str, Any]], records: dict[str, MemoryRecord]) -> None:
    if not isinstance(marks, Mapping):
        raise InvalidInputError("marks must be a dict {record id: {name: value}}")
    for memory_id, found in marks.items():
        if memory_id not in records:
            raise InvalidInputError(f"marks has an id that is not among the records: {memory_id!r}")
        if not isinstance(found, Mapping) or not all(isinstance(k, str) for k in found):
            raise InvalidInputError(f"the marks of {memory_id!r} must be a dict of names")
        own = _RESERVED_MARKS | {f.name for f in dataclasses.fields(records[memory_id])}
        clash = sorted(set(found) & own)
        if clash:
            raise InvalidInputError(
                f"the marks of {memory_id!r} may not set the record's own field(s): {', '.join(clash)}"
            )


def _check_entities(entities: Mapping[str, Mapping[str, Any]]) -> None:
    if not isinstance(entities, Mapping):
        raise InvalidInputError("entities must be a dict {entity id: {name, user_id, agent_id}}")
    for entity_id, attrs in entities.items():
        if not isinstance(entity_id, str) or not entity_id.startswith("entity:"):
            raise InvalidInputError(f"an entity id starts with 'entity:', got {entity_id!r}")
        if not isinstance(attrs, Mapping) or not isinstance(attrs.get("name"), str):
            raise InvalidInputError(f"entity {entity_id!r} needs attributes with a name")
        check_scope_id(attrs.get("user_id"), f"entity {entity_id!r} user_id")
        check_scope_id(attrs.get("agent_id"), f"entity {entity_id!r} agent_id")


def _check_edges(edges: Sequence[Edge]) -> list[Edge]:
    if isinstance(edges, (str, bytes, Mapping)) or not isinstance(edges, Sequence):
        raise InvalidInputError("edges must be a list of (from, to, type, weight)")
    checked: list[Edge] = []
    for n, edge in enumerate(edges):
        if not isinstance(edge, (tuple, list)) or len(edge) != 4:
            raise InvalidInputError(f"edge {n} must be (from, to, type, weight)")
        u, v, kind, weight = edge
        if not isinstance(u, str) or not isinstance(v, str) or u == v:
            raise InvalidInputError(f"edge {n} must join two different ids")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 < weight <= 1.0:
            raise InvalidInputError(f"edge {n} weight must be a number in (0, 1], got {weight!r}")
        checked.append((u, v, EdgeType.parse(kind).value, float(weight)))
    return checked


class Transfer(MemoryBase):
    """Snapshots and restores for a :class:`~ucma_core.Memory` (one of its parts)."""

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A consistent read of the whole folder: the memory's lock is held until the ``with``
        block ends, so nothing (background consolidation included) changes it meanwhile.
        Keep the block short; the :class:`Snapshot` cannot be used after it."""
        with self._lock:
            self._check_open()
            view = Snapshot(self._stores)
            try:
                yield view
            finally:
                view.close()

    def restore(
        self,
        records: Sequence[MemoryRecord],
        *,
        vectors: Mapping[str, Sequence[float]] | None = None,
        marks: Mapping[str, Mapping[str, Any]] | None = None,
        entities: Mapping[str, Mapping[str, Any]] | None = None,
        edges: Sequence[Edge] | None = None,
    ) -> RestoreReport:
        """Store records as they are — their ids, scope, time, importance and retention state
        (stability, last access, access count) — and rebuild their links, as a crash recovery
        does (session chains, entities, provenance). All or nothing: everything is checked
        (and embedded) first, then stored in one write that a crash leaves whole or absent.

        Records whose id is stored already are skipped (restoring twice stores nothing new),
        as are keyed records whose key another memory holds in that scope.

        Args:
            records: the records to store (:class:`~ucma_core.records.MemoryRecord` of any type).
            vectors: ``{id: embedding}`` to store instead of embedding the content again (they
                must have this folder's embedder's dimension and come from the same model);
                records without one are embedded.
            marks: ``{id: {name: value}}``, what :meth:`Snapshot.marks` returned: the sleep
                cycle's bookkeeping, so a cycle after the restore does not redo its work.
            entities: ``{entity id: {"name", "user_id", "agent_id"}}`` entity nodes to set
                (:meth:`Snapshot.entity`).
            edges: ``(from, to, type, weight)`` edges to set after the records and entities;
                an edge with an end that is not in the folder is skipped and counted.

        Raises:
            InvalidInputError: a record, vector, mark, entity or edge is malformed; nothing
                is stored.
            ProviderError: the embedder failed; nothing is stored.
        """
        max_chars = self.config.max_content_chars
        given = _check_records(records, max_chars)
        by_id = {r.id: r for r in given}
        usable = _check_vectors(vectors or {}, set(by_id), self._embedder.dimension)
        _check_marks(marks or {}, by_id)
        _check_entities(entities or {})
        links = _check_edges(edges or [])
        tally = {"memories": 0, "skipped": 0, "key_conflicts": 0, "embedded": 0}
        tally.update(entities=0, edges=0, edges_skipped=0)
        with self._lock:
            self._check_open()
            stores = self._stores
            fresh: list[MemoryRecord] = []
            taken: set[tuple[str | None, str | None, str]] = set()
            for record in given:
                if record.id in stores.graph:
                    tally["skipped"] += 1
                    continue
                if record.key is not None:
                    ref = (record.user_id, record.agent_id, record.key)
                    if stores.keyed(*ref) is not None or ref in taken:
                        tally["key_conflicts"] += 1
                        continue
                    taken.add(ref)
                fresh.append(record)
            missing = [r for r in fresh if r.id not in usable]
            if missing:
                embedded = self._embedder.embed([r.content for r in missing])
                usable.update({r.id: list(v) for r, v in zip(missing, embedded, strict=True)})
            with stores.graph.batch():
                stores.backend.insert(fresh, [usable[r.id] for r in fresh])
                for record in fresh:
                    state = (marks or {}).get(record.id)
                    if state:
                        stores.backend.set_state(record.id, **state)
                for record in fresh:
                    stores.link(record.id)
                for entity_id, attrs in (entities or {}).items():
                    node = {**attrs, "kind": "entity"}
                    stores.graph.put_node(entity_id, node)
                    stores.semantic.index_entity(node)
                    tally["entities"] += 1
                for u, v, kind, weight in links:
                    if u not in stores.graph or v not in stores.graph:
                        tally["edges_skipped"] += 1
                        continue
                    stores.graph.add_edge(u, v, kind, weight)
                    tally["edges"] += 1
            tally["memories"] = len(fresh)
            tally["embedded"] = len(missing)
            # the marks just committed get their copy in Chroma (see storage.markers); if that
            # write fails they stay pending and the next one copies them
            with contextlib.suppress(StorageError):
                stores.backend.keep_markers()
        return RestoreReport(**tally)
