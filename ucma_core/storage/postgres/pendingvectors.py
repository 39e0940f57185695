"""Vectors another worker committed that Chroma does not hold yet, read from ``pending``.

A worker's new record is committed to PostgreSQL with its vector in the ``pending``
table, and a background thread adds it to Chroma a moment later. Until then another
worker finds the record by keyword, entity, time and graph, but Chroma has no vector
for it: a candidate without a vector cannot be scored, so it used to be dropped from
that ``remember`` (on a busy machine, about one ``remember`` in seven right after
another worker's write). :func:`pending_vectors` reads those vectors from the table
they wait in; it is asked only for ids Chroma did not return.

Examples:
    >>> class Rows:  # what a psycopg connection's ``execute`` answers
    ...     def fetchall(self):
    ...         return [("m1", [0.5, 0.25])]
    >>> class Conn:
    ...     def execute(self, sql, params):
    ...         return Rows()
    >>> found = pending_vectors(Conn(), ["m1", "gone"])
    >>> {i: v.tolist() for i, v in found.items()}
    {'m1': [0.5, 0.25]}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ucma_core.storage.postgres.journal import db_errors

__all__ = ["pending_vectors"]


def pending_vectors(conn: Any, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """``{id: float32 vector}`` for those of ``ids`` whose vectors wait in ``pending``."""
    if not ids:
        return {}
    with db_errors("reading vectors that wait for Chroma"):
        rows = conn.execute("SELECT id, vector FROM pending WHERE id = ANY(%s)", (list(ids),)).fetchall()
    return {memory_id: np.asarray(vector, dtype=np.float32) for memory_id, vector in rows}
