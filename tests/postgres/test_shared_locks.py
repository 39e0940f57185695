"""Which calls of a shared memory wait for whom. Reads (``get``, ``get_by_key``,
``history``, ``list_memories``, ``list_scopes``, ``stats``) and opening a memory take the
memory's write lock *shared*: they run while another worker reads, and wait only while
a worker writes. Another worker is played by a plain connection holding the memory's
advisory lock (:func:`~ucma_core.storage.postgres.connection.lock_key`), the way a
worker's reads and writes hold it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget
from ucma_core.storage.postgres.connection import lock_key


class _Call:
    """``fn()`` in a thread: whether it finished, its result or error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self.result = fn()
        except BaseException as e:  # handed to the test
            self.error = e

    def done(self, within: float) -> bool:
        self._thread.join(within)
        if self.error is not None:
            raise self.error
        return not self._thread.is_alive()


@pytest.fixture
def other_worker(servers: Servers) -> Iterator[tuple[str, Any]]:
    """A memory's URL and a connection standing for another worker's hold on its write lock."""
    url = servers.url()
    key = lock_key(PostgresTarget.parse(url))
    with psycopg.connect(PostgresTarget.parse(url).conninfo, autocommit=True) as conn:

        def hold(how: str) -> None:
            verbs = {
                "read": "pg_advisory_lock_shared",
                "write": "pg_advisory_lock",
                "release read": "pg_advisory_unlock_shared",
                "release write": "pg_advisory_unlock",
            }
            conn.execute(f"SELECT {verbs[how]}(hashtext(%s))", (key,))

        yield url, hold


def test_reads_run_beside_another_workers_read_and_wait_for_its_write(
    servers: Servers, other_worker: tuple[str, Any]
) -> None:
    url, hold = other_worker
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        tea = mem.observe("Ana prefers tea in the morning", user_id="ana", session_id="s1", key="drink")
        assert tea is not None
        hold("read")
        reads = _Call(
            lambda: (
                mem.get(tea),
                mem.get_by_key("drink", user_id="ana"),
                [e.id for e in mem.history(user_id="ana", session_id="s1")],
                [r.id for r in mem.list_memories(user_id="ana")],
                mem.list_scopes(),
                mem.stats()["memories"],
            )
        )
        assert reads.done(within=30), "a read waited for another worker's read"
        got, keyed, turns, listed, scopes, count = reads.result
        assert got is not None and got.content == "Ana prefers tea in the morning"
        assert keyed is not None and keyed.id == tea
        assert turns == listed == [tea]
        assert scopes == [("ana", None, "s1")]
        assert count == 1
        hold("release read")

        hold("write")
        waiting = _Call(lambda: mem.get(tea))
        try:
            assert not waiting.done(within=1.0), "a read ran while another worker held the write lock"
        finally:
            hold("release write")
        assert waiting.done(within=30)
        assert waiting.result is not None and waiting.result.id == tea


def test_opening_runs_beside_another_workers_read_and_waits_for_its_write(
    servers: Servers, other_worker: tuple[str, Any]
) -> None:
    url, hold = other_worker
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        first = mem.observe("Bruno plays the cello", user_id="bruno")
    hold("read")
    opening = _Call(lambda: Memory(url, embedder=HashingEmbedder(), config=servers.config()))
    try:
        assert opening.done(within=60), "opening waited for another worker's read"
    finally:
        hold("release read")
    with opening.result as again:
        assert again.get(first) is not None
        # the memory it opened is shared as before: its write is another open's read
        second = again.observe("Bruno practises on Tuesdays", user_id="bruno")
    hold("write")
    blocked = _Call(lambda: Memory(url, embedder=HashingEmbedder(), config=servers.config()))
    try:
        assert not blocked.done(within=1.0), "an open read the graph while another worker was writing"
    finally:
        hold("release write")
    assert blocked.done(within=60)
    with blocked.result as third:
        assert {r.id for r in third.list_memories(user_id="bruno")} == {first, second}
