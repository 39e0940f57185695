"""A shared memory's reader reads record texts from the rows it holds (``PgBackend.texts``
under a shared hold, :mod:`ucma_core.storage.postgres.heldrows`), a folder from its keyword
index and, for a row without its copy of the fields (a table from before that copy), from
Chroma. Both give a ``remember`` the same texts: the same content-free turn goes last, the
same neighbouring turns come with each hit (real PostgreSQL and Chroma servers)."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from tests.postgres.conftest import Servers
from ucma_core import Memory, MemoryConfig
from ucma_core.config import FusionConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget

TURNS = [
    "Ana asked where the harbour ferry leaves from",
    "Thanks a lot!",
    "The harbour ferry leaves from pier 4 at nine",
    "Ana said she will bring the ferry tickets",
    "Marta keeps the spare keys of the boat house",
]
QUERIES = ["where does the harbour ferry leave from?", "thanks a lot for the ferry", "who keeps the keys?"]
#: The turns whose rows lose their copy of the fields (the content-free one among them).
BARE = (1, 2)


def _answers(mem: Memory) -> list[list[tuple[Any, ...]]]:
    """Each query's hits by content: the text, whether it says nothing, and its neighbours."""
    out = []
    for query in QUERIES:
        hits = mem.remember(query, user_id="ana", k=len(TURNS), reinforce=False)
        out.append(
            [(r.content, "content_free" in r.signals, tuple(c.content for c in r.context)) for r in hits]
        )
    return out


def _fill(mem: Memory) -> list[str]:
    ids = []
    for n, text in enumerate(TURNS):
        memory_id = mem.observe(text, user_id="ana", session_id="trip", metadata={"turn": n})
        assert memory_id is not None
        ids.append(memory_id)
    mem.flush()
    return ids


def test_held_texts_of_rows_without_stored_fields_are_the_folders(servers: Servers, tmp_path: Path) -> None:
    local = MemoryConfig(importance_threshold=0.0, fusion=FusionConfig(context_turns=1))
    config = dataclasses.replace(local, chroma=servers.config().chroma)
    folder = tmp_path / "m"
    with Memory(folder, embedder=HashingEmbedder(), config=local) as mem:
        folder_ids = _fill(mem)
        before = _answers(mem)
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        shared_ids = _fill(mem)
        assert _answers(mem) == before

    # rows written before the copy of the fields existed: their fields are only in Chroma
    with sqlite3.connect(folder / "keywords.sqlite3") as db:
        db.executemany("UPDATE rowids SET stored = NULL WHERE id = ?", [(folder_ids[n],) for n in BARE])
    target = PostgresTarget.parse(url)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{target.schema}"')
        bare = conn.execute(
            "UPDATE records SET stored = NULL WHERE id = ANY(%s)", ([shared_ids[n] for n in BARE],)
        )
        assert bare.rowcount == len(BARE)

    with Memory(folder, embedder=HashingEmbedder(), config=local) as mem:
        assert _answers(mem) == before
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        assert _answers(mem) == before
        assert {i: r.content for i in shared_ids if (r := mem.get(i)) is not None} == dict(
            zip(shared_ids, TURNS, strict=True)
        )
