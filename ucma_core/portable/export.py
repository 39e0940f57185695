"""Export: every memory of every user, the entities and the graph edges, as one snapshot."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ucma_core.errors import InvalidInputError, StorageError
from ucma_core.portable.lines import FORMAT, VECTORS, VERSION, dumps, encode_vector, record_to_json
from ucma_core.progress import ProgressCallback, notify
from ucma_core.storage.atomic import write_lines_atomic

if TYPE_CHECKING:
    from ucma_core.memory import Memory

__all__ = ["ExportReport", "export_memory"]


@dataclass(frozen=True)
class ExportReport:
    """What :func:`export_memory` wrote."""

    memories: int
    entities: int
    edges: int
    vectors: bool
    embedder_name: str
    dimension: int
    path: str | None = None


def _export_lines(
    memory: Memory, *, vectors: bool, progress: ProgressCallback | None, batch_size: int, out: list[int]
) -> Iterator[str]:
    with memory.snapshot() as snap:
        # in the order they were stored (the graph keeps it): an import that stores them in
        # the same order breaks the search indexes' ties between equal scores the same way
        ids = snap.memory_ids()
        entities = snap.entity_ids()
        edges = snap.edges()
        total = len(ids) + len(entities) + len(edges)
        counts = {"memories": len(ids), "entities": len(entities), "edges": len(edges)}
        out[:] = [len(ids), len(entities), len(edges)]
        embedder = memory.embedder
        yield dumps(
            {
                "kind": "header",
                "format": FORMAT,
                "version": VERSION,
                "ucma_version": _ucma_version(),
                "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "embedder": {"name": embedder.name, "dimension": embedder.dimension},
                "vectors": VECTORS if vectors else None,
                "counts": counts,
                # what adapters keep in the folder (LangGraph checkpoints): declared, not exported
                "attachments": {name: [f.name for f in files] for name, files in memory.attachments.items()},
            }
        )
        done = 0
        notify(progress, 0, total, "export")
        for start in range(0, len(ids), batch_size):
            page = ids[start : start + batch_size]
            records = snap.records(page)
            stored = snap.vectors(page) if vectors else {}
            for record in records:
                line: dict[str, Any] = {
                    "kind": "memory",
                    "record": record_to_json(record),
                    "state": snap.marks(record),
                }
                if record.id in stored:
                    line["vector"] = encode_vector(stored[record.id])
                yield dumps(line)
            done += len(page)
            notify(progress, done, total, "export")
        for entity in entities:
            yield dumps({"kind": "entity", "id": entity, "attrs": snap.entity(entity)})
        for u, v, t, w in edges:
            yield dumps({"kind": "edge", "from": u, "to": v, "type": t, "weight": w})
        notify(progress, total, total, "export")
        yield dumps({"kind": "end", "counts": counts})


def export_memory(
    memory: Memory,
    file: str | os.PathLike[str] | TextIO,
    *,
    vectors: bool = True,
    progress: ProgressCallback | None = None,
    batch_size: int = 500,
) -> ExportReport:
    """Write every memory of every user, the entities and the graph edges to ``file``.

    The memory's lock is held while the file is written, so the export is one
    consistent snapshot even with background consolidation running. A path is
    written atomically (a temporary file renamed into place), so an interrupted
    export never leaves a partial file under that name; a text stream gets the
    lines as they are made.

    Args:
        memory: an open memory.
        file: a path, or a text stream (``sys.stdout``).
        vectors: include the stored embeddings, so an import into a folder with the
            same embedder does not embed again; ``False`` makes a smaller file that any
            folder re-embeds.
        progress: called with ``(done, total, "export")`` (see :mod:`ucma_core.progress`).
        batch_size: records read at a time.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be an int >= 1, got {batch_size!r}")
    counts: list[int] = [0, 0, 0]
    lines = _export_lines(memory, vectors=bool(vectors), progress=progress, batch_size=batch_size, out=counts)
    path: str | None = None
    if isinstance(file, (str, os.PathLike)):
        target = Path(file)
        path = str(target)
        try:
            write_lines_atomic(target, lines)
        finally:
            target.with_name(target.name + ".tmp").unlink(missing_ok=True)
    else:
        try:
            for line in lines:
                file.write(line + "\n")
            file.flush()
        except OSError as e:
            raise StorageError(f"cannot write the export: {e}") from e
    embedder = memory.embedder
    return ExportReport(
        memories=counts[0],
        entities=counts[1],
        edges=counts[2],
        vectors=bool(vectors),
        embedder_name=embedder.name,
        dimension=embedder.dimension,
        path=path,
    )


def _ucma_version() -> str:
    import ucma_core

    return str(getattr(ucma_core, "__version__", ""))
