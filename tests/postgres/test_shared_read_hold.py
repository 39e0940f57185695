"""A reader's shared hold of the write lock outlives its call briefly
(:mod:`ucma_core.storage.postgres.lock`): reads in quick succession continue one hold, an
idle hold is freed in the background, a worker that keeps reading still lets a writer in,
and ``close()`` leaves no thread behind. Another worker is a second :class:`Memory` on the
same URL (its own session) or a plain connection holding the memory's advisory lock."""

from __future__ import annotations

import threading
import time

import psycopg

from tests.postgres.conftest import Servers
from ucma_core import Memory, MemoryConfig, SharedConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget
from ucma_core.storage.postgres.connection import lock_key
from ucma_core.storage.postgres.lock import LINGER


def _try_lock(dba: psycopg.Connection[tuple[object, ...]], key: str) -> bool:
    """Whether another session gets the memory's write lock at once (then frees it)."""
    got = bool(dba.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0])  # type: ignore[index]
    if got:
        dba.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
    return got


def _threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name == "ucma-read-hold")


def test_an_idle_read_hold_is_freed_and_close_leaves_no_thread(servers: Servers) -> None:
    url = servers.url()
    target = PostgresTarget.parse(url)
    key = lock_key(target)
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem,
        psycopg.connect(target.conninfo, autocommit=True) as dba,
    ):
        mem.observe("Ana keeps bees on the roof", user_id="ana")
        for _ in range(3):
            assert mem.remember("bees", user_id="ana", k=3)
        # no call follows: the worker's shared hold is freed in the background, so a
        # writer's exclusive lock is granted soon (the worker never took it itself)
        deadline = time.monotonic() + 30
        while not dba.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0]:
            assert time.monotonic() < deadline, "an idle reader kept the memory's lock"
            time.sleep(LINGER)
        try:
            reading = threading.Thread(target=lambda: mem.remember("bees", user_id="ana", k=3))
            reading.start()
            reading.join(1.0)
            assert reading.is_alive(), "a read ran while another worker held the write lock"
        finally:
            dba.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        reading.join(60)
        assert not reading.is_alive()
    assert _threads() == []


def test_a_worker_that_keeps_reading_lets_another_worker_write(servers: Servers) -> None:
    url = servers.url()
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as reader,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as writer,
    ):
        reader.observe("Bruno fixed the harbour crane", user_id="bruno")
        stop, reads = threading.Event(), [0]
        end = time.monotonic() + 60

        def keep_reading() -> None:
            # back to back for up to a minute: each read may continue the last one's hold
            # (of a user with no memories: a read that returned nothing has no access marks
            # to write, so it never takes the lock exclusively on its own)
            while not stop.is_set() and time.monotonic() < end:
                reader.remember("harbour crane", user_id="nobody", k=3)
                reads[0] += 1

        loop = threading.Thread(target=keep_reading, daemon=True)
        loop.start()
        try:
            while reads[0] < 5:
                time.sleep(0.01)
            started = time.monotonic()
            written = writer.observe("Bruno painted the lighthouse red", user_id="bruno")
            waited = time.monotonic() - started
            # a hold is continued for HOLD_AT_MOST seconds at most; without that bound the
            # write would wait for the reading loop to end (a minute)
            assert waited < 10, f"a write waited {waited:.1f} s for a worker that kept reading"
            assert reads[0] and time.monotonic() < end
            seen_after = reads[0]
            deadline = time.monotonic() + 30
            while reads[0] < seen_after + 2:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        finally:
            stop.set()
            loop.join(60)
        assert not loop.is_alive()
        found = [h.id for h in reader.remember("lighthouse red", user_id="bruno", k=3)]
        assert written in found
    assert _threads() == []


def test_the_read_hold_is_a_setting(servers: Servers) -> None:
    url = servers.url()
    key = lock_key(PostgresTarget.parse(url))

    def config(hold: float) -> MemoryConfig:
        return MemoryConfig(
            chroma=servers.config().chroma,
            shared=SharedConfig(read_hold_seconds=hold, read_hold_at_most_seconds=hold),
        )

    with psycopg.connect(PostgresTarget.parse(url).conninfo, autocommit=True) as dba:
        # no hold: the lock is free the moment a read returns, and no releaser thread runs
        with Memory(url, embedder=HashingEmbedder(), config=config(0)) as mem:
            mem.observe("Carla tunes pianos on Fridays", user_id="carla")
            mem.flush()  # no background write of its vector takes the lock meanwhile
            for _ in range(3):
                assert mem.remember("pianos", user_id="carla", k=3)
                assert _try_lock(dba, key)
            assert _threads() == []
        # a long hold: another session cannot take the lock after a read returns, until
        # close() frees it
        mem = Memory(url, embedder=HashingEmbedder(), config=config(60))
        try:
            assert mem.remember("pianos", user_id="carla", k=3)
            assert not _try_lock(dba, key)
        finally:
            mem.close()
        # the session's end frees what it held (PostgreSQL ends it a moment after the
        # client leaves), long before the 60 s hold would have run out
        deadline = time.monotonic() + 30
        while not _try_lock(dba, key):
            assert time.monotonic() < deadline, "close() left the memory's lock held"
            time.sleep(0.05)
    assert _threads() == []
