"""Kept where-sets on a shared memory: a worker's own write for one user keeps another
user's kept set and is seen in its own user's; another worker's write drops the sets at
the sync and is seen, also when its vectors reached Chroma only after the reader listed
the clause (real PostgreSQL and Chroma servers)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres.connection import lock_key
from ucma_core.storage.postgres.url import PostgresTarget

NOW = 1_800_000_000.0
TEXTS = [
    "Ana drinks green tea every morning",
    "the quarterly tax filing deadline is in April",
    "Ana's sister lives in Porto and teaches music",
    "we booked a train to Porto for the spring holiday",
]


def _ask(mem: Memory, user: str, question: str = "green tea") -> list[str]:
    return [r.id for r in mem.remember(question, k=4, user_id=user, now=NOW, reinforce=False)]


def test_a_workers_write_for_one_user_keeps_another_users_set(servers: Servers) -> None:
    url = servers.url()
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as other,
    ):
        for n, text in enumerate(TEXTS * 2):
            mem.observe(text, user_id=f"u{n % 2}", timestamp=NOW - 1000 + n, keep=True)
        mem.flush()
        before = [_ask(mem, "u1") for _ in range(3)]  # listed on the second ask, kept from the third
        hits = mem.stats()["where_sets"]["hits"]
        assert hits >= 1 and before[0] == before[2]
        new = mem.observe("u0 now drinks green tea with mint", user_id="u0", timestamp=NOW - 1, keep=True)
        mem.flush()
        assert _ask(mem, "u1") == before[0]
        assert mem.stats()["where_sets"]["hits"] > hits  # u1's set was kept through u0's write
        assert new in _ask(mem, "u0", "green tea with mint")  # and the write is seen in u0's
        # another worker's write drops every set at the sync (its metadata is not read there)
        hits = mem.stats()["where_sets"]["hits"]
        theirs = other.observe("u0 likes mint tea too", user_id="u0", timestamp=NOW - 1, keep=True)
        other.flush()
        assert theirs is not None and other.get(theirs) is not None
        assert mem.get(theirs) is not None and mem.stats()["where_sets"]["sets"] == 0
        assert _ask(mem, "u1") == before[0] and mem.stats()["where_sets"]["hits"] == hits


class _Pinned(HashingEmbedder):
    """The hashing embedder, but every text with "alpha" or "omega" gets one fixed vector: a
    question about "omega" finds the "alpha" record by vector only (no shared keyword)."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        pinned = [1.0] + [0.0] * (self.dimension - 1)
        found = super().embed(texts)
        return [pinned if "alpha" in t or "omega" in t else v for t, v in zip(texts, found, strict=True)]


@contextlib.contextmanager
def _two_workers(
    servers: Servers, embedder: type[HashingEmbedder]
) -> Iterator[tuple[Memory, Memory, Any, PostgresTarget]]:
    """Two workers of one shared memory, and a DBA's connection in the memory's schema."""
    url = servers.url()
    target = PostgresTarget.parse(url)
    with (
        Memory(url, embedder=embedder(), config=servers.config()) as mem,
        Memory(url, embedder=embedder(), config=servers.config()) as other,
        psycopg.connect(target.conninfo, autocommit=True) as conn,
    ):
        conn.execute(f'SET search_path TO "{target.schema}"')
        yield mem, other, conn, target


@contextlib.contextmanager
def _flush_held(conn: Any, target: PostgresTarget) -> Iterator[None]:
    """Hold the memory's flush lock, as a DBA could: every worker's new vectors wait in `pending`."""
    key = lock_key(target, "flush")
    conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
    try:
        yield
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))


def test_a_clause_listed_while_another_workers_vectors_wait_is_not_kept(servers: Servers) -> None:
    with _two_workers(servers, _Pinned) as (mem, other, conn, target):
        for n, text in enumerate(TEXTS):
            other.observe(text, user_id="u1", timestamp=NOW - 1000 + n, keep=True)
        other.flush()
        for _ in range(2):
            _ask(mem, "u1", "omega")
        with _flush_held(conn, target):  # the other worker's next vector waits in `pending`
            new = other.observe("alpha note", user_id="u1", timestamp=NOW - 1, keep=True)
            for _ in range(3):  # the clause is listed while the vector is not in Chroma yet
                assert new not in _ask(mem, "u1", "omega")
        deadline = time.monotonic() + 120
        while conn.execute("SELECT 1 FROM pending").fetchone() is not None:
            assert time.monotonic() < deadline, "the other worker never flushed its pending vector"
            time.sleep(0.05)
        # nothing was committed since: only a set listed before the flush could hide it
        assert new in _ask(mem, "u1", "omega")


def test_another_workers_record_is_found_by_keyword_while_its_vector_waits(servers: Servers) -> None:
    """A record another worker committed is found by keyword before its vector reaches
    Chroma, and scored against its own vector (from ``pending``); ``flush()`` puts every
    worker's waiting vectors in Chroma."""
    with _two_workers(servers, HashingEmbedder) as (mem, other, conn, target):
        for n, text in enumerate(TEXTS):
            mem.observe(text, user_id="u1", timestamp=NOW - 1000 + n, keep=True)
        mem.flush()
        assert conn.execute("SELECT count(*) FROM pending").fetchone() == (0,)
        with _flush_held(conn, target):  # the other worker's vector waits in `pending`
            theirs = other.observe("u1 likes mint tea too", user_id="u1", timestamp=NOW - 1, keep=True)
            assert conn.execute("SELECT count(*) FROM pending").fetchone() == (1,)
            waiting = {r.id: r for r in mem.remember("mint tea", k=4, user_id="u1", now=NOW, reinforce=False)}
            assert theirs in waiting and waiting[theirs].signals["keyword"] > 0
            dense = waiting[theirs].signals["dense"]
            assert dense > 0.2
        other.flush()
        assert conn.execute("SELECT count(*) FROM pending").fetchone() == (0,)
        flushed = {r.id: r for r in mem.remember("mint tea", k=4, user_id="u1", now=NOW, reinforce=False)}
        assert flushed[theirs].signals["dense"] == pytest.approx(dense, abs=1e-5)
