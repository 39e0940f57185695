"""Term statistics of a shared memory's ``records`` table, kept current by triggers.

BM25 as the folder's FTS5 computes it (:mod:`~ucma_core.storage.postgres.keywords`)
needs the table's row count, its total length in words and each query term's
document frequency. Counting them on every search costs O(rows); here two small
tables keep them instead, and a search reads one row of each:

``record_stats``
    one row: how many records (``n``) and the sum of their lengths in words (``total``).
``record_terms``
    one row per lexeme of any record's ``tsv``: in how many records it occurs (``df``).
    A lexeme no record holds any more is deleted, so forgetting a user leaves none of
    its words here (:meth:`~ucma_core.storage.postgres.keywords.PgKeywordIndex.scrub`
    vacuums the table like the others).

Statement triggers on ``records`` (with transition tables) update both in the
transaction of every insert, delete and text change, whatever code runs it, so a
search's snapshot always sees figures that agree with the rows it scores. One
statement updates the ``record_stats`` row once, however many rows it wrote: a row
trigger would add a row version per record, and a transaction writing thousands of
records would then walk ever longer version chains (quadratic). Writes to ``records``
happen under the memory's write lock, so that single row is not contended; a write
that changes only stored fields (same text) counts nothing. A table made before
the triggers is counted once when they are created (:data:`STATEMENTS`, run by
:func:`~ucma_core.storage.postgres.connection.create_schema` under the write lock).
"""

from __future__ import annotations

__all__ = ["STATEMENTS"]

_FUNCTION = """
CREATE OR REPLACE FUNCTION records_count() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $f$
BEGIN
    IF TG_OP = 'UPDATE' THEN  -- (nested: the query below names tables only an update has)
        IF NOT EXISTS (
            SELECT 1 FROM old_rows o JOIN new_rows r ON r.id = o.id WHERE r.content IS DISTINCT FROM o.content
        ) THEN
            RETURN NULL;  -- fields only: nothing counted changes
        END IF;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE record_stats SET n = n - s.c, total = total - s.t
            FROM (SELECT count(*) AS c, coalesce(sum(dl), 0) AS t FROM old_rows) s WHERE s.c > 0;
        UPDATE record_terms d SET df = d.df - g.c
            FROM (SELECT u.lexeme, count(*) AS c FROM old_rows o, unnest(tsvector_to_array(o.tsv)) u (lexeme)
                  GROUP BY u.lexeme) g
            WHERE d.lexeme = g.lexeme;
        DELETE FROM record_terms WHERE df <= 0
            AND lexeme IN (SELECT unnest(tsvector_to_array(o.tsv)) FROM old_rows o);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        UPDATE record_stats SET n = n + s.c, total = total + s.t
            FROM (SELECT count(*) AS c, coalesce(sum(dl), 0) AS t FROM new_rows) s WHERE s.c > 0;
        INSERT INTO record_terms (lexeme, df)
            SELECT u.lexeme, count(*) FROM new_rows r, unnest(tsvector_to_array(r.tsv)) u (lexeme)
            GROUP BY u.lexeme ORDER BY u.lexeme
            ON CONFLICT (lexeme) DO UPDATE SET df = record_terms.df + excluded.df;
    END IF;
    RETURN NULL;
END
$f$
"""

_TRIGGER = (
    "CREATE TRIGGER records_count_{0} AFTER {1} ON records REFERENCING {2} FOR EACH STATEMENT "
    "EXECUTE FUNCTION records_count(); "
)

#: Run in order, after ``records`` exists, in the schema's transaction: the two tables,
#: then (once) the trigger function, the triggers and the first count of what is there.
STATEMENTS = [
    "CREATE TABLE IF NOT EXISTS record_stats (one boolean PRIMARY KEY DEFAULT true CHECK (one), "
    "n bigint NOT NULL, total bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS record_terms (lexeme text PRIMARY KEY, df integer NOT NULL)",
    "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'records'::regclass "
    "AND tgname = 'records_count_insert') THEN "
    f"EXECUTE $q${_FUNCTION}$q$; "
    "DELETE FROM record_stats; DELETE FROM record_terms; "
    "INSERT INTO record_stats (n, total) SELECT count(*), coalesce(sum(dl), 0) FROM records; "
    "INSERT INTO record_terms (lexeme, df) SELECT u.lexeme, count(*) FROM records r, unnest(r.tsv) u "
    "GROUP BY u.lexeme; "
    + _TRIGGER.format("insert", "INSERT", "NEW TABLE AS new_rows")
    + _TRIGGER.format("delete", "DELETE", "OLD TABLE AS old_rows")
    + _TRIGGER.format("update", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows")
    + "END IF; END $$",
]
