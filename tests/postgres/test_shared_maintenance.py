"""Work that must run once on a shared memory: a consolidation cycle holds the memory's
job lock (one worker at a time) while other memory objects keep serving; forgetting and
expiry delete for every worker."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget
from ucma_core.storage.postgres.connection import lock_key

pytestmark = pytest.mark.slow


def test_a_consolidation_cycle_holds_the_job_lock_while_others_keep_serving(servers: Servers) -> None:
    url = servers.url()
    target = PostgresTarget.parse(url)
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as worker,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as other,
        psycopg.connect(target.conninfo, autocommit=True) as probe,
    ):
        for n in range(6):
            worker.observe(f"Ana booked the harbour ferry for trip {n}", user_id="ana", importance=1.0)
        seen: list[Any] = []

        def during(done: int, total: int, phase: str) -> None:
            free = probe.execute(
                "SELECT pg_try_advisory_lock(hashtext(%s))", (lock_key(target, "job:consolidate"),)
            ).fetchone()[0]
            if free:
                probe.execute(
                    "SELECT pg_advisory_unlock(hashtext(%s))", (lock_key(target, "job:consolidate"),)
                )
            # another worker serves (and sees the writes) in the middle of the cycle
            seen.append((free, len(other.list_memories(user_id="ana"))))

        worker.consolidate(progress=during)
        assert seen and all(free is False for free, _ in seen)
        assert all(count >= 6 for _, count in seen)
        free = probe.execute(
            "SELECT pg_try_advisory_lock(hashtext(%s))", (lock_key(target, "job:consolidate"),)
        ).fetchone()[0]
        assert free is True  # released with the cycle


def test_expire_in_one_worker_removes_the_memories_for_every_worker(servers: Servers) -> None:
    url = servers.url()
    clock = [1_750_000_000.0]
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config(), clock=lambda: clock[0]) as a,
        Memory(url, embedder=HashingEmbedder(), config=servers.config(), clock=lambda: clock[0]) as b,
    ):
        old = a.observe("The old parking permit expired in spring", user_id="ana", importance=1.0)
        clock[0] += 40 * 86_400
        new = a.observe("The new parking permit is valid all year", user_id="ana", importance=1.0)
        report = b.expire(30 * 86_400.0)
        assert list(report.forgotten) == [old]
        assert [r.id for r in a.list_memories(user_id="ana")] == [new]
        assert a.get(old) is None
        assert a.verify().ok
