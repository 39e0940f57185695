"""Keyword search and record copies on PostgreSQL full-text search.

:class:`PgKeywordIndex` has the interface of the folder's
:class:`~ucma_core.storage.keywords.KeywordIndex`: the ``records`` table keeps each
memory's text, scope, type, time and a copy of its stored fields (``rows`` serves
``remember`` without a Chroma read), and a generated ``tsvector`` (English stemming)
with a GIN index answers keyword queries: any of the query's keywords
(:func:`~ucma_core.storage.keywords.keywords`, stop words dropped), ranked by BM25
computed as the folder's SQLite FTS5 does (same formula, same scale in fusion). Rows
of a write that is not committed yet are invisible to readers because every caller
keeps only ids that are nodes of its graph.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ucma_core.errors import StorageError
from ucma_core.storage.keywords import KeywordHit, KeywordRow, keywords, search_filters
from ucma_core.storage.postgres.heldrows import HeldRows, Row
from ucma_core.storage.postgres.journal import db_errors

__all__ = ["PgKeywordIndex", "ts_query"]

_CHUNK = 500

# BM25 as SQLite FTS5's bm25() computes it (k1 = 1.2, b = 0.75, idf = ln((N - df + 0.5) /
# (df + 0.5)) floored at 1e-6; N, df and the mean length over the whole table; a text's
# length in word tokens, its term frequency from the tsvector's positions), so a shared
# memory ranks keyword hits like a folder does. Candidates come from the GIN index; N, the
# total length and each query term's df from the tables the triggers of
# :mod:`~ucma_core.storage.postgres.stats` keep (one row each, not a count per search).
# One statement, one snapshot: the figures agree with the rows scored. A hit's term
# frequencies come from its tsvector cut down to the query's lexemes (``setweight`` marks
# them, ``ts_filter`` keeps them) before it is unnested.
_BM25_SQL = """
WITH stats AS (
    SELECT coalesce(max(n), 0)::float8 AS n,
           coalesce(max(total)::float8 / nullif(max(n), 0), 0)::float8 AS avgdl
    FROM record_stats
),
terms AS (SELECT array_agg(DISTINCT lexeme) AS lexemes FROM unnest(to_tsvector('english', %s))),
idf AS (
    SELECT t.lexeme, greatest(ln((s.n - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)), 1e-6) AS idf
    FROM terms CROSS JOIN unnest(terms.lexemes) t (lexeme)
    LEFT JOIN record_terms d ON d.lexeme = t.lexeme CROSS JOIN stats s
),
hits AS (SELECT id, ts, tsv, dl FROM records WHERE tsv @@ to_tsquery('english', %s) {filters})
SELECT h.id,
       sum(i.idf * (tf.f * 2.2) / (tf.f + 1.2 * (0.25 + 0.75 * h.dl / greatest(s.avgdl, 1e-9)))) AS score,
       h.ts
FROM hits h CROSS JOIN stats s CROSS JOIN terms
CROSS JOIN LATERAL unnest(ts_filter(setweight(h.tsv, 'A', terms.lexemes), '{{a}}')) u
JOIN idf i ON i.lexeme = u.lexeme
CROSS JOIN LATERAL (SELECT coalesce(array_length(u.positions, 1), 1)::float8 AS f) tf
GROUP BY h.id, h.ts ORDER BY score DESC, h.ts, h.id LIMIT %s
"""
# the same, with each hit's text and stored fields (a read that keeps rows, see .heldrows)
_BM25_ROWS_SQL = (
    f"SELECT b.id, b.score, r.content, r.stored FROM ({_BM25_SQL}) b "
    "JOIN records r ON r.id = b.id ORDER BY b.score DESC, b.ts, b.id"
)
# and the rows of candidates seen before (a narrow dense search answered in the process):
# they come with a NULL score, after the hits
_BM25_AHEAD_SQL = (
    f"SELECT b.id, b.score, r.content, r.stored, 0 AS part, b.ts FROM ({_BM25_SQL}) b "
    "JOIN records r ON r.id = b.id UNION ALL SELECT id, NULL, content, stored, 1, NULL FROM records "
    "WHERE id = ANY(%s) ORDER BY 5, 2 DESC, 6, 1"
)


# every row in one statement, so the statistics triggers run once per write
_WRITE_SQL = (
    "INSERT INTO records (id, content, user_id, agent_id, session_id, memory_type, ts, stored) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
    "%s::float8[], %s::text[]) ON CONFLICT (id) DO UPDATE SET "
    "content = excluded.content, user_id = excluded.user_id, agent_id = excluded.agent_id, "
    "session_id = excluded.session_id, memory_type = excluded.memory_type, ts = excluded.ts, "
    "stored = excluded.stored"
)


def ts_query(text: str) -> str | None:
    """A ``to_tsquery`` expression matching any keyword of ``text``, or ``None``.

    >>> ts_query("What did Alice say about the Paris trip?")
    'alice | paris | trip'
    """
    terms = keywords(text)
    return " | ".join(terms[:64]) if terms else None


class PgKeywordIndex:
    """The ``records`` table of one shared memory (see the module)."""

    created = False

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        #: The rows kept for the reader's hold of the lock: a search keeps its hits' rows there.
        self.held: HeldRows | None = None

    def get_meta(self, key: str) -> str | None:
        with db_errors("reading meta"):
            row = self._conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with db_errors("writing meta"):
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def count(self) -> int:
        with db_errors("counting records"):
            return int(self._conn.execute("SELECT coalesce(max(n), 0) FROM record_stats").fetchone()[0])

    def add(self, rows: Iterable[KeywordRow]) -> None:
        data = list(rows)
        if not data:
            return
        with db_errors("writing records"), self._conn.transaction(), self._conn.cursor() as cur:
            self.write(cur, data)

    @staticmethod
    def write(cur: Any, rows: Sequence[KeywordRow]) -> None:
        """Upsert ``rows`` with ``cur`` (inside the caller's transaction)."""
        if not rows:
            return
        latest = {r.id: r for r in rows}  # one statement may not write a row twice: the last wins
        data = [latest[i] for i in sorted(latest)]
        try:
            stored = [
                None if r.stored is None else json.dumps(r.stored, ensure_ascii=False, allow_nan=False)
                for r in data
            ]
        except (TypeError, ValueError) as e:
            raise StorageError(f"a record's fields cannot be written as JSON: {e}") from e
        cur.execute(
            _WRITE_SQL,
            (
                [r.id for r in data],
                [r.content for r in data],
                [r.user_id or "" for r in data],
                [r.agent_id or "" for r in data],
                [r.session_id or "" for r in data],
                [r.memory_type for r in data],
                [r.timestamp for r in data],
                stored,
            ),
        )

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        with db_errors("deleting records"), self._conn.transaction():
            for start in range(0, len(ids), _CHUNK):
                self._conn.execute(
                    "DELETE FROM records WHERE id = ANY(%s)", (list(ids[start : start + _CHUNK]),)
                )

    def scrub(self) -> None:
        """Reclaim deleted rows (``VACUUM``), so their text leaves the table's live pages."""
        with db_errors("vacuuming records"):
            self._conn.execute("VACUUM records")
            self._conn.execute("VACUUM journal")
            self._conn.execute("VACUUM snapshot")
            self._conn.execute("VACUUM pending")
            self._conn.execute("VACUUM record_terms")
            self._conn.execute("VACUUM record_stats")

    def ids(self) -> set[str]:
        with db_errors("reading record ids"):
            return {r[0] for r in self._conn.execute("SELECT id FROM records")}

    def rows(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, str | int | float | bool]]]:
        """``{id: (text, stored fields)}`` for those of ``ids`` whose row keeps its fields."""
        out: dict[str, tuple[str, dict[str, str | int | float | bool]]] = {}
        with db_errors("reading records"):
            for start in range(0, len(ids), _CHUNK):
                chunk = list(ids[start : start + _CHUNK])
                for memory_id, content, stored in self._conn.execute(
                    "SELECT id, content, stored FROM records WHERE id = ANY(%s) AND stored IS NOT NULL",
                    (chunk,),
                ):
                    out[memory_id] = (content, json.loads(stored))
        return out

    def select(self, ids: Sequence[str]) -> dict[str, Row]:
        """``{id: (text, stored fields as JSON or None)}`` for those of ``ids`` that exist."""
        out: dict[str, Row] = {}
        with db_errors("reading records"):
            for start in range(0, len(ids), _CHUNK):
                chunk = list(ids[start : start + _CHUNK])
                for memory_id, content, stored in self._conn.execute(
                    "SELECT id, content, stored FROM records WHERE id = ANY(%s)", (chunk,)
                ):
                    out[memory_id] = (content, stored)
        return out

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: text}`` for those of ``ids`` whose row keeps its fields (as :meth:`rows`,
        without reading or decoding the fields)."""
        out: dict[str, str] = {}
        with db_errors("reading record texts"):
            for start in range(0, len(ids), _CHUNK):
                chunk = list(ids[start : start + _CHUNK])
                out.update(
                    self._conn.execute(
                        "SELECT id, content FROM records WHERE id = ANY(%s) AND stored IS NOT NULL", (chunk,)
                    )
                )
        return out

    def search(
        self,
        query: str,
        n: int,
        *,
        user_id: str | bool | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        memory_types: Sequence[str] = (),
        time_range: tuple[float, float] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[KeywordHit]:
        """Best ``n`` matches of any of ``query``'s keywords. ``user_id=False`` searches every user."""
        expr = ts_query(query)
        if expr is None or n <= 0:
            return []
        found = search_filters(
            "%s",
            lambda column, values: (f"{column} = ANY(%s)", [list(values)]),
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            memory_types=memory_types,
            time_range=time_range,
            ids=ids,
        )
        if found is None:
            return []
        held = self.held if self.held is not None and self.held.active else None
        ahead = held.ahead() if held is not None else []
        sql = _BM25_SQL if held is None else _BM25_AHEAD_SQL if ahead else _BM25_ROWS_SQL
        args: list[object] = [" ".join(keywords(query)[:64]), expr, *found[1], n, *([ahead] if ahead else [])]
        with db_errors("searching keywords"):
            # prepared at once: planning this statement costs several times running it, and
            # psycopg would otherwise plan it anew for its first 5 runs (a new worker's remembers)
            rows = self._conn.execute(sql.format(filters=" ".join(found[0])), args, prepare=True).fetchall()
        if held is not None:  # the hits' rows came along (and the candidates'): later reads are kept
            held.keep({r[0]: (r[2], r[3]) for r in rows}, ahead)
        return [KeywordHit(r[0], float(r[1])) for r in rows if r[1] is not None]

    def rewrite_stored(
        self,
        rewrite: Callable[[str, str, dict[str, Any]], dict[str, str | int | float | bool]],
        meta: dict[str, str],
    ) -> int:
        """Replace every row's stored fields with ``rewrite(id, text, fields)`` and set the
        ``meta`` values, in one transaction; returns how many rows were rewritten."""
        with db_errors("rewriting records"), self._conn.transaction():
            found = self._conn.execute("SELECT id, content, stored FROM records WHERE stored IS NOT NULL")
            changed = [
                (json.dumps(rewrite(i, content, json.loads(stored)), ensure_ascii=False), i)
                for i, content, stored in found.fetchall()
            ]
            with self._conn.cursor() as cur:
                cur.executemany("UPDATE records SET stored = %s WHERE id = %s", changed)
                cur.executemany(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    list(meta.items()),
                )
        return len(changed)

    def close(self) -> None:
        """Nothing to close (the backend owns the connection)."""
