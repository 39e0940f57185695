"""Import: the records of an export file under their own ids, their links, entities and edges."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.errors import InvalidInputError
from ucma_core.portable.lines import (
    ExportHeader,
    check_file,
    decode_vector,
    read_lines,
    record_from_json,
    state_of,
)
from ucma_core.progress import ProgressCallback, notify

if TYPE_CHECKING:
    from ucma_core.memory import Memory
    from ucma_core.transfer import RestoreReport

__all__ = ["ImportReport", "import_memory"]


@dataclass(frozen=True)
class ImportReport:
    """What :func:`import_memory` stored.

    Attributes:
        memories: records stored.
        skipped: records whose id was already stored (an import run twice stores nothing new).
        key_conflicts: keyed records whose key another memory holds in that scope (not stored).
        embedded: stored records whose content was embedded again (another embedder, or no
            vector in the file); the others kept the file's vector.
        entities: entity nodes restored.
        edges: edges of the file set in the folder with the file's weights (setting an edge
            that is there already with that weight changes nothing).
        edges_skipped: edges with an end that is not in the folder.
    """

    memories: int
    skipped: int
    key_conflicts: int
    embedded: int
    entities: int
    edges: int
    edges_skipped: int
    seconds: float = 0.0


def import_memory(
    memory: Memory,
    file: str | os.PathLike[str],
    *,
    reembed: bool = False,
    progress: ProgressCallback | None = None,
    batch_size: int = 256,
) -> ImportReport:
    """Store the memories, entities and edges of an export file in ``memory``.

    The whole file is checked first: a malformed line raises
    :class:`~ucma_core.errors.InvalidInputError` naming it, and nothing is stored.
    Records keep their ids and every field; those already stored are skipped, so an
    interrupted import can be run again and finishes the job. The records' links
    are rebuilt as a crash recovery rebuilds them (session chains, entities,
    provenance) and every edge of the file is then set with its weight. Vectors in
    the file are used when it was exported with an embedder of the same name and
    dimension as ``memory``'s (unless ``reembed``); otherwise the content is embedded
    again with ``memory``'s embedder. Each batch is stored by
    :meth:`~ucma_core.Memory.restore`, all or nothing, taking the memory's lock for
    that batch only.

    Args:
        memory: an open memory (a new folder or one with memories of its own).
        file: a file written by :func:`export_memory`.
        reembed: embed the content again even if the file's vectors fit.
        progress: called with ``(done, total, label)`` for the ``check`` and ``import`` steps.
        batch_size: records stored per batch (one Chroma write and one journal append each).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be an int >= 1, got {batch_size!r}")
    started = time.perf_counter()
    path = Path(file)
    checked = check_file(path, max_chars=memory.config.max_content_chars, progress=progress)
    header = checked.header
    embedder = memory.embedder
    reuse = (
        header.vectors
        and not reembed
        and (header.embedder_name, header.dimension) == (embedder.name, embedder.dimension)
    )
    with memory.snapshot() as snap:
        entities_before = set(snap.entity_ids())
    tally = {"memories": 0, "skipped": 0, "key_conflicts": 0, "embedded": 0}
    tally.update(entities=0, edges=0, edges_skipped=0)
    pending: list[dict[str, Any]] = []
    entities: dict[str, dict[str, Any]] = {}
    edges: list[tuple[str, str, str, float]] = []
    done = 0
    notify(progress, 0, checked.lines, "import")
    for number, obj in read_lines(path):
        kind = obj.get("kind")
        if kind == "memory":
            pending.append(obj)
            if len(pending) >= batch_size:
                _store_batch(memory, pending, header, reuse, tally)
                pending = []
        elif kind == "entity":
            _store_batch(memory, pending, header, reuse, tally)
            pending = []
            entity = str(obj["id"])
            if entity not in entities_before:  # the folder had it already: keep its own name
                entities[entity] = dict(obj["attrs"])
        elif kind == "edge":
            _store_entities(memory, entities, tally)
            entities = {}
            edges.append((str(obj["from"]), str(obj["to"]), str(obj["type"]), float(obj["weight"])))
            if len(edges) >= 1000:
                _store_edges(memory, edges, tally)
                edges = []
        done = number
        if number % 100 == 0:
            notify(progress, done, checked.lines, "import")
    _store_batch(memory, pending, header, reuse, tally)
    _store_entities(memory, entities, tally)
    _store_edges(memory, edges, tally)
    notify(progress, checked.lines, checked.lines, "import")
    return ImportReport(**tally, seconds=round(time.perf_counter() - started, 3))


def _store_batch(
    memory: Memory, lines: list[dict[str, Any]], header: ExportHeader, reuse: bool, tally: dict[str, int]
) -> None:
    """One batch of memory lines through :meth:`~ucma_core.Memory.restore` (all or nothing)."""
    if not lines:
        return
    max_chars = memory.config.max_content_chars
    records = [record_from_json(o["record"], max_chars=max_chars) for o in lines]
    vectors = {
        r.id: decode_vector(o["vector"], header.dimension)
        for r, o in zip(records, lines, strict=True)
        if reuse and "vector" in o
    }
    marks = {r.id: state for r, o in zip(records, lines, strict=True) if (state := state_of(o, r))}
    _add(tally, memory.restore(records, vectors=vectors, marks=marks))


def _store_entities(memory: Memory, entities: dict[str, dict[str, Any]], tally: dict[str, int]) -> None:
    if entities:
        _add(tally, memory.restore([], entities=entities))


def _store_edges(memory: Memory, edges: list[tuple[str, str, str, float]], tally: dict[str, int]) -> None:
    if edges:
        _add(tally, memory.restore([], edges=edges))


def _add(tally: dict[str, int], report: RestoreReport) -> None:
    for name in tally:
        tally[name] += getattr(report, name)
