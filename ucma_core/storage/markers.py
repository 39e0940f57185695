"""A copy of the sleep cycle's markers in each memory's Chroma row, so they outlive the graph.

The graph node is the truth for what the sleep cycle marks on a memory — ``revised_by``,
``question``, ``answered_by``, ``answers`` and ``about`` — and for ``pinned`` (see
:mod:`ucma_core.retrieval.markers` for how ranking reads them). Chroma keeps a record's
first values, from which a node the graph files lost is rebuilt; the markers come later,
so a copy of them is written into the row under :data:`KEY` once the graph has committed
them (:meth:`~ucma_core.storage.backend.StorageBackend.keep_markers`), and a rebuilt node
takes them back (:func:`read`). The copy is written after the commit, never before, so it
never holds a marker the graph did not accept; a crash in between leaves the graph right
and only the copy behind.

Examples:
    >>> row = {KEY: encode({"revised_by": "e2", "importance": 0.3, "about": ["user"]})}
    >>> row[KEY]
    '{"about":["user"],"revised_by":"e2"}'
    >>> read(row)
    {'about': ['user'], 'revised_by': 'e2'}
    >>> read({}), read({KEY: "not json"})
    ({}, {})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["KEY", "MARKERS", "encode", "read"]

#: The node attributes the sleep cycle (and :meth:`~ucma_core.Memory.pin`) set that ranking
#: and forgetting read.
MARKERS = ("about", "answered_by", "answers", "pinned", "question", "revised_by")
#: The Chroma metadata key that holds the copy (no tag, participant or metadata key starts so).
KEY = "markers"


def encode(attrs: Mapping[str, Any]) -> str:
    """The markers among ``attrs`` as the JSON text stored under :data:`KEY` (``"{}"`` for none)."""
    found = {m: attrs[m] for m in MARKERS if attrs.get(m) not in (None, False, "", [], ())}
    return json.dumps(found, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read(row: Mapping[str, Any]) -> dict[str, Any]:
    """The markers a Chroma row keeps (nothing for a row written before them, or unreadable)."""
    text = row.get(KEY)
    if not isinstance(text, str):
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if k in MARKERS}
