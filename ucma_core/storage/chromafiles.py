"""Deleted data in an embedded Chroma folder's own files: blanked, vacuumed, removed.

Chroma keeps what was deleted in three places on disk: the payloads of submitted records
in its write-ahead log table (``embeddings_queue``), deleted rows in free SQLite pages,
and the vector index of a deleted collection in its own segment directory, vectors and
all. :func:`scrub_deleted` blanks the log payloads of given ids, merges the full-text
index, vacuums the file and removes unused segment directories;
:func:`remove_unused_segments` does the last step alone. Both read and write the folder
beside Chroma's client (SQLite's locking keeps them consistent), never through it.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "0b5c6f2e-2f43-4b7e-9a52-3c7d1c1a9e10").mkdir()  # a segment no collection uses
    >>> con = sqlite3.connect(folder / "chroma.sqlite3")
    >>> _ = con.execute("CREATE TABLE segments (id TEXT)")
    >>> con.close()
    >>> remove_unused_segments(folder)
    >>> [p.name for p in folder.iterdir()]
    ['chroma.sqlite3']
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from ucma_core.storage.diskspace import storage_error

__all__ = ["is_segment_dir", "remove_unused_segments", "scrub_deleted"]

_SEGMENT_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
#: Ids blanked per UPDATE statement (under SQLite's bound-variable limit).
_CHUNK = 500


def is_segment_dir(entry: Path) -> bool:
    """Whether ``entry`` is one of Chroma's segment (vector index) directories."""
    return entry.is_dir() and _SEGMENT_DIR.match(entry.name) is not None


def scrub_deleted(folder: Path, ids: Sequence[str]) -> None:
    """Blank the write-ahead log payloads of ``ids`` in the Chroma folder ``folder``, merge
    its full-text index, vacuum the file, and delete segment directories no collection
    uses. Raises :class:`~ucma_core.errors.StorageError` when SQLite fails."""

    def scrub(con: sqlite3.Connection) -> None:
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            con.execute(
                f"UPDATE embeddings_queue SET metadata = NULL, vector = NULL WHERE id IN ({marks})",
                chunk,
            )
        con.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')")
        con.execute("VACUUM")

    _remove(folder, _segments_in_use(folder, "scrubbing deleted text from", scrub))


def remove_unused_segments(folder: Path) -> None:
    """Delete the segment directories in ``folder`` that no collection of its Chroma
    database uses."""
    _remove(folder, _segments_in_use(folder, "reading", None))


def _segments_in_use(
    folder: Path, doing: str, first: Callable[[sqlite3.Connection], None] | None
) -> set[str]:
    """The segment ids ``folder``'s Chroma database uses, read after ``first`` ran on the
    same connection (``doing`` names the work in a :class:`StorageError`)."""
    db = folder / "chroma.sqlite3"
    try:
        con = sqlite3.connect(db, isolation_level=None, timeout=30)
        try:
            if first is not None:
                first(con)
            return {row[0] for row in con.execute("SELECT id FROM segments")}
        finally:
            con.close()
    except sqlite3.Error as e:
        raise storage_error(e, f"{doing} {db}") from e


def _remove(folder: Path, used: set[str]) -> None:
    for entry in folder.iterdir():
        if is_segment_dir(entry) and entry.name not in used:
            shutil.rmtree(entry, ignore_errors=True)
