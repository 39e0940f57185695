"""Connecting to PostgreSQL (psycopg 3, imported lazily) and creating a memory's tables.

The core imports without psycopg: only opening a ``postgresql://`` memory needs it,
and without it :class:`~ucma_core.errors.DependencyMissingError` names the extra to
install. Each memory is one schema (``ucma_<memory>``) with these tables:

``meta``
    key/value: the manifest (embedder, Chroma collection, key secret) and the sequence
    number the graph snapshot was taken at.
``journal``
    the graph journal (:mod:`~ucma_core.storage.journal`'s lines, one row each, by
    sequence number): write intents, graph changes and commit marks of every worker.
``snapshot``
    the graph folded at ``meta.snapshot_seq`` (one row per node or edge).
``records``
    every memory's text, scope, type and time, a copy of its stored fields, and a
    ``tsvector`` for keyword search (the folder's ``keywords.sqlite3``) and the text's
    length in words (``dl``, for BM25); ``changed``, from a sequence, grows with every
    insert and update of the row (a rebuild's catch-up reads the rows changed since it
    began, :mod:`~ucma_core.storage.postgres.repair`).
``record_stats``, ``record_terms``
    the ``records`` table's row count, total length and each word's document
    frequency, kept by triggers (:mod:`~ucma_core.storage.postgres.stats`).
``pending``
    committed records whose vectors are not in Chroma yet (id, text, stored fields,
    vector): written in the transaction that commits the record, deleted once a flush
    has added them to Chroma (see :class:`~ucma_core.storage.postgres.backend.PgBackend`).
``skipped``
    what the conversation helpers were handed and did not store (:mod:`.skipped`).
``tombstones``
    ids deleted while their vectors were pending, deleted from Chroma once more after
    the time a dead worker's flush can stay in flight (:mod:`.tombstones`).

Connections: each open memory keeps one dedicated connection for its session-level
advisory locks (the write lock, held across the statements of one call) and the
journal, and a small :func:`pool` (``psycopg_pool``) for everything else: the
background flush of pending vectors, and the short-held flush and job locks (a pooled
connection is checked out for as long as its lock is held, and the lock released
before it goes back to the pool).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ucma_core.errors import DependencyMissingError, StorageError
from ucma_core.storage.postgres.stats import STATEMENTS
from ucma_core.storage.postgres.url import PostgresTarget

__all__ = [
    "POOL_MAX",
    "POOL_MIN",
    "SCHEMA_VERSION",
    "connect",
    "create_schema",
    "lock_key",
    "pool",
    "use_schema",
]

_TABLES = [
    "CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS journal (seq bigint PRIMARY KEY, line text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS snapshot (n bigint PRIMARY KEY, entry text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (id text PRIMARY KEY, content text NOT NULL, user_id text NOT NULL, "
    "agent_id text NOT NULL, session_id text NOT NULL, memory_type text NOT NULL, ts double precision "
    "NOT NULL, stored text, tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)",
    # the text's length in word tokens (as the folder's FTS5 counts them), for BM25; added to a
    # table made before it (one rewrite), without locking the table when it is there already
    "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = "
    "current_schema() AND table_name = 'records' AND column_name = 'dl') THEN ALTER TABLE records "
    "ADD COLUMN dl integer GENERATED ALWAYS AS (coalesce(array_length(regexp_split_to_array(btrim("
    "regexp_replace(content, '[^[:alnum:]]+', ' ', 'g')), ' '), 1), 0)) STORED; END IF; END $$",
    "CREATE INDEX IF NOT EXISTS records_tsv ON records USING gin (tsv)",
    "CREATE INDEX IF NOT EXISTS records_dl ON records (dl)",
    "CREATE INDEX IF NOT EXISTS records_scope ON records (user_id, agent_id, session_id)",
    # each row's change number: a new row takes the sequence's next value, and so does a
    # changed one (trigger): a rebuild's catch-up reads only the rows changed since its copy
    # began (:mod:`.repair`). A table made before it gets numbers in one rewrite.
    "CREATE SEQUENCE IF NOT EXISTS records_change_seq",
    "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = "
    "current_schema() AND table_name = 'records' AND column_name = 'changed') THEN ALTER TABLE records "
    "ADD COLUMN changed bigint NOT NULL DEFAULT nextval('records_change_seq'); END IF; END $$",
    "CREATE INDEX IF NOT EXISTS records_changed ON records (changed)",
    "CREATE OR REPLACE FUNCTION records_change() RETURNS trigger LANGUAGE plpgsql "
    "SET search_path FROM CURRENT AS $f$ BEGIN NEW.changed := nextval('records_change_seq'); "
    "RETURN NEW; END $f$",
    "CREATE OR REPLACE TRIGGER records_change BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION "
    "records_change()",
    "CREATE TABLE IF NOT EXISTS pending (id text PRIMARY KEY, document text NOT NULL, fields text NOT NULL, "
    "vector double precision[] NOT NULL, since timestamptz NOT NULL DEFAULT clock_timestamp())",
    "CREATE TABLE IF NOT EXISTS tombstones (id text PRIMARY KEY, until timestamptz NOT NULL)",
    "CREATE TABLE IF NOT EXISTS skipped (n bigserial PRIMARY KEY, entry text NOT NULL)",
    *STATEMENTS,
]

#: Written to ``meta`` by :func:`create_schema`: a memory whose tables carry it is opened
#: without DDL and without the write lock (:func:`use_schema`).
SCHEMA_VERSION = hashlib.sha256("\n".join(_TABLES).encode()).hexdigest()[:16]

#: Pool sizes per open memory: one connection kept open, at most four; an idle extra
#: connection is closed after five minutes.
POOL_MIN, POOL_MAX, POOL_IDLE_SECONDS = 1, 4, 300.0


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise DependencyMissingError(
            "a postgresql:// memory needs psycopg 3; install the extra: pip install 'ucma[postgres]'"
        ) from e
    return psycopg


def connect(target: PostgresTarget, *, timeout: float = 10.0) -> Any:
    """An autocommit connection to ``target``'s database (a :class:`StorageError` saying
    what failed when it cannot be reached)."""
    psycopg = _psycopg()
    try:
        return psycopg.connect(
            target.conninfo,
            autocommit=True,
            connect_timeout=max(1, int(timeout)),
            application_name="ucma",
        )
    except psycopg.Error as e:
        raise StorageError(
            f"cannot connect to {target.display}: {str(e).strip()}; check that PostgreSQL runs there "
            "and the user may log in"
        ) from e


def lock_key(target: PostgresTarget, what: str = "write") -> str:
    """The text whose ``hashtext`` is the advisory-lock key for ``what`` in ``target``'s memory."""
    return f"ucma:{target.schema}:{what}"


def create_schema(conn: Any, target: PostgresTarget) -> None:
    """Create the memory's schema and tables if missing and put them first on the
    search path (call with the memory's write lock held: DDL races otherwise)."""
    from psycopg import sql

    schema = sql.Identifier(target.schema)
    with conn.transaction():
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
        conn.execute(sql.SQL("SET search_path TO {}").format(schema))
        for statement in _TABLES:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION,),
        )


def use_schema(conn: Any, target: PostgresTarget) -> bool:
    """Put the memory's schema first on ``conn``'s search path if its tables are those of
    this version (returns ``True``); ``False`` when :func:`create_schema` must run first.
    Reads only: no lock needed."""
    from psycopg import sql

    row = conn.execute("SELECT to_regclass(%s)", (f"{target.schema}.meta",)).fetchone()
    if row[0] is None:
        return False
    query = sql.SQL("SELECT value FROM {}.meta WHERE key = 'schema_version'")
    found = conn.execute(query.format(sql.Identifier(target.schema))).fetchone()
    if found is None or found[0] != SCHEMA_VERSION:
        return False
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(target.schema)))
    return True


def pool(target: PostgresTarget, *, timeout: float = 10.0) -> Any:
    """A ``psycopg_pool.ConnectionPool`` of autocommit connections to ``target`` with the
    memory's schema on their search path (sizes: :data:`POOL_MIN` .. :data:`POOL_MAX`)."""
    psycopg = _psycopg()
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as e:
        raise DependencyMissingError(
            "a postgresql:// memory needs psycopg_pool; install the extra: pip install 'ucma[postgres]'"
        ) from e
    from psycopg import sql

    search_path = sql.SQL("SET search_path TO {}").format(sql.Identifier(target.schema))

    def configure(conn: Any) -> None:
        conn.execute(search_path)

    opened = ConnectionPool(
        target.conninfo,
        min_size=POOL_MIN,
        max_size=POOL_MAX,
        max_idle=POOL_IDLE_SECONDS,
        timeout=timeout,
        kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout)), "application_name": "ucma"},
        configure=configure,
        open=False,
    )
    try:
        opened.open(wait=True, timeout=timeout)
    except psycopg.Error as e:  # psycopg_pool.PoolTimeout is one
        opened.close()
        raise StorageError(
            f"cannot connect to {target.display}: {str(e).strip()}; check that PostgreSQL runs there "
            "and the user may log in"
        ) from e
    return opened
