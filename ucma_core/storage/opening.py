"""What opening a memory folder does about a damaged vector index, and what a failed open releases.

:func:`heal_segments` runs before Chroma is opened: every vector-index directory whose
files cannot be a consistent index (see :func:`~ucma_core.storage.heal.check_segment`)
is moved aside, and the caller rebuilds the vectors. :func:`set_aside_all` does the same
for every vector index of the folder after Chroma itself failed on one. Both return
what they did, in words for the open's notes.

:func:`forget_client` drops Chroma's in-process cache of an embedded folder. Chroma keeps
one shared system (with its loaded vector indexes) per path for the life of the
process; a failed open that left it there would make a retry in the same process
meet the same broken state, where a new process starts clean.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ucma_core.storage.heal import check_segment, element_bound, folder_records, set_aside, vector_segments

__all__ = ["forget_client", "heal_segments", "set_aside_all"]


def heal_segments(folder: Path, dimension: int | None) -> list[str]:
    """Move every damaged vector-index directory of ``folder/chroma`` aside; returns one
    line per directory moved (empty: nothing was damaged). Reads no file whole."""
    chroma_dir = folder / "chroma"
    segments = vector_segments(chroma_dir)
    if not segments:
        return []
    bound = element_bound(folder_records(folder))
    moved: list[str] = []
    for segment in segments:
        problem = check_segment(segment, dimension=dimension, max_elements=bound)
        if problem is None:
            continue
        target = set_aside(folder, segment)
        moved.append(
            f"the vector index chroma/{segment.name}/ was damaged ({problem}); moved to "
            f"{target.parent.name}/ to be rebuilt"
        )
    return moved


def set_aside_all(folder: Path, why: str) -> list[str]:
    """Move every vector-index directory of ``folder/chroma`` aside (Chroma failed on one of
    them with ``why``); returns one line per directory moved."""
    moved: list[str] = []
    for segment in vector_segments(folder / "chroma"):
        target = set_aside(folder, segment)
        moved.append(
            f"Chroma could not use the vector index chroma/{segment.name}/ ({why[:200]}); moved to "
            f"{target.parent.name}/ to be rebuilt"
        )
    return moved


def forget_client(path: Path) -> None:
    """Drop and stop Chroma's cached system for the embedded folder ``path`` (``.../chroma``),
    whatever state it is in, so the next client starts from the files."""
    try:
        from chromadb.api.shared_system_client import SharedSystemClient
    except ImportError:  # pragma: no cover - chromadb is a dependency
        return
    key = str(path)
    systems = SharedSystemClient._identifier_to_system
    counts = SharedSystemClient._identifier_to_refcount
    with SharedSystemClient._refcount_lock:
        system = systems.pop(key, None)
        counts.pop(key, None)
    if system is not None:
        with contextlib.suppress(Exception):  # a system that failed may fail to stop too
            system.stop()
