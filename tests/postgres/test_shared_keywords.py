"""A shared memory's keyword index ranks like a folder's: the same BM25 scores (formula,
term statistics over the whole table, document lengths in words) and the same order of
ties, so fusion sees the same keyword evidence in both modes. The statistics are kept
by triggers, so they stay right through deletions, text changes and an upgrade of a
table made before them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import Servers
from ucma_core.storage.keywords import KeywordIndex, KeywordRow
from ucma_core.storage.postgres import PostgresTarget
from ucma_core.storage.postgres.connection import create_schema
from ucma_core.storage.postgres.keywords import PgKeywordIndex

TEXTS = [
    "Ana's sister lives in Porto near the river",
    "Ana moved to a new flat on Rua das Flores last spring",
    "The ferry to the island leaves at nine; Ana missed the ferry twice",
    "Bruno plays the cello in a small orchestra",
    "Ana said the cello lessons were expensive",
    "A long note about the weather, the garden, the cat, the neighbours and the island trip",
    "Ana loves the island",
    "Ana loves the island",
]
QUERIES = [
    "Where does Ana's sister live?",
    "Which ferry did Ana miss?",
    "Who plays the cello?",
    "island trip",
    "flat flowers spring",
    "nothing matches zebra",
]


@contextlib.contextmanager
def _both(
    servers: Servers, tmp_path: Path, rows: list[KeywordRow]
) -> Iterator[tuple[KeywordIndex, PgKeywordIndex, psycopg.Connection[Any], PostgresTarget]]:
    """A folder's keyword index and a shared memory's, both holding ``rows`` (and the
    shared one's connection and target, for tests that change its tables)."""
    folder = KeywordIndex(tmp_path)
    folder.add(rows)
    target = PostgresTarget.parse(servers.url())
    try:
        with psycopg.connect(target.conninfo, autocommit=True) as conn:
            create_schema(conn, target)
            shared = PgKeywordIndex(conn)
            shared.add(rows)
            yield folder, shared, conn, target
    finally:
        folder.close()


def _same_ranking(folder: KeywordIndex, shared: PgKeywordIndex) -> None:
    for query in QUERIES:
        for user in ("ana", False):
            want = folder.search(query, 5, user_id=user)
            got = shared.search(query, 5, user_id=user)
            assert [h.id for h in got] == [h.id for h in want], (query, user)
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-9)


def test_postgres_keyword_search_ranks_and_scores_like_the_folder(servers: Servers, tmp_path: Path) -> None:
    rows = [
        KeywordRow(f"m{n:02d}", text, "ana" if n != 3 else "bruno", None, None, "episodic", float(n))
        for n, text in enumerate(TEXTS)
    ]
    with _both(servers, tmp_path, rows) as (folder, shared, _, _):
        _same_ranking(folder, shared)
        in_range = shared.search("island", 5, user_id="ana", time_range=(6.0, 7.0))
        assert [h.id for h in in_range] == ["m06", "m07"]


def test_postgres_keyword_statistics_follow_deletes_text_changes_and_an_upgrade(
    servers: Servers, tmp_path: Path
) -> None:
    rows = [
        KeywordRow(f"m{n:02d}", text, "ana", None, None, "episodic", float(n)) for n, text in enumerate(TEXTS)
    ]
    with _both(servers, tmp_path, rows) as (folder, shared, conn, target):
        # a deletion, a text change (an upsert of the same id) and a write that changes only fields
        changed = KeywordRow("m02", "The island ferry was late again", "ana", None, None, "episodic", 2.0)
        for index in (folder, shared):
            index.delete(["m00", "m04", "m03"])
            index.delete(["m02"])
            index.add([changed])
        shared.add([changed])  # the same text again: nothing counted twice
        assert shared.count() == folder.count() == len(TEXTS) - 3
        _same_ranking(folder, shared)
        # a table made before the statistics existed: counted once when the schema is upgraded
        conn.execute("DROP TRIGGER records_count_insert ON records")
        conn.execute("DROP TRIGGER records_count_delete ON records")
        conn.execute("DROP TRIGGER records_count_update ON records")
        conn.execute("DROP TABLE record_stats, record_terms")
        extra = KeywordRow("m09", "Ana took the ferry to Porto", "ana", None, None, "episodic", 9.0)
        shared.add([extra])
        create_schema(conn, target)
        folder.add([extra])
        _same_ranking(folder, shared)
        # every row gone: no word of any text is left in the statistics
        for index in (folder, shared):
            index.delete([f"m{n:02d}" for n in range(10)])
        assert shared.count() == 0
        assert conn.execute("SELECT count(*) FROM record_terms").fetchone()[0] == 0
        assert shared.search("island ferry", 5, user_id=False) == []


def test_postgres_texts_are_the_folder_texts(servers: Servers, tmp_path: Path) -> None:
    """Retrieval reads the texts of candidates (name hop, context turns) without their
    stored fields: both indexes give the same ``{id: text}``, rows without fields left out."""
    rows = [
        KeywordRow(f"m{n:02d}", text, "ana", None, None, "episodic", float(n), {"n": n} if n % 3 else None)
        for n, text in enumerate(TEXTS)
    ]
    asked = [*(r.id for r in rows), "missing"]
    with _both(servers, tmp_path, rows) as (folder, shared, _, _):
        want = {r.id: r.content for r in rows if r.stored is not None}
        assert folder.texts(asked) == want
        assert shared.texts(asked) == want
        assert shared.texts([]) == {}
