"""Move a memory between folders: export to a portable JSON-lines file, import it again.

The file is UTF-8 text, one JSON object per line (format ``ucma-export``, version 1)::

    {"kind": "header", "format": "ucma-export", "version": 1, "embedder": {"name", "dimension"},
     "vectors": "float32-le-base64" or null, "counts": {...}, "ucma_version", "exported_at"}
    {"kind": "memory", "record": {every field of the record}, "state": {...}, "vector": "..."}
    {"kind": "entity", "id": "entity:…", "attrs": {"name", "user_id", "agent_id"}}
    {"kind": "edge", "from": id, "to": id, "type": "followed_by", "weight": 1.0}
    {"kind": "end", "counts": {...}}

Memories come oldest first, with every field of their record (ids, scope, metadata,
retention state: ``stability``, ``last_access``, ``access_count``…). ``state`` holds
what the graph keeps beside the record — the sleep cycle's marks (``facts_done``,
``mined``, ``dedup_done``, ``merged_ids``) — so a cycle run after the import does not
redo work. ``vector`` (optional) is the stored embedding. Nothing is pickled: the
file is data that people read, diff and share.

:func:`import_memory` checks the whole file before it stores anything, restores the
records under their own ids, rebuilds their links as a crash recovery does (session
chains, entities, provenance), then adds every edge of the file with its weight, so
the imported memory has the same records, the same graph and gives the same answers.
A folder with another embedder gets the content embedded again.

The package: :mod:`~ucma_core.portable.lines` (the file format, read and checked),
:mod:`~ucma_core.portable.export`, :mod:`~ucma_core.portable.restore` (the import) and
:mod:`~ucma_core.portable.bulk` (many observations, batch by batch, with progress).

Examples:
    >>> import tempfile, pathlib
    >>> from ucma_core import Memory
    >>> from ucma_core.embedders import HashingEmbedder
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> with Memory(tmp / "a", embedder=HashingEmbedder()) as a:
    ...     _ = a.observe("Ana moved to Lisbon in May.", user_id="ana", keep=True)
    ...     export_memory(a, tmp / "ana.jsonl").memories
    1
    >>> with Memory(tmp / "b", embedder=HashingEmbedder()) as b:
    ...     import_memory(b, tmp / "ana.jsonl").memories
    ...     b.remember("where does Ana live?", user_id="ana")[0].content
    1
    'Ana moved to Lisbon in May.'
"""

from ucma_core.portable.bulk import observe_all
from ucma_core.portable.export import ExportReport, export_memory
from ucma_core.portable.lines import FORMAT, VERSION, ExportHeader, read_header
from ucma_core.portable.restore import ImportReport, import_memory

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportHeader",
    "ExportReport",
    "ImportReport",
    "export_memory",
    "import_memory",
    "observe_all",
    "read_header",
]
