"""Many worker processes on one shared memory: every acknowledged write of every worker
is there, each worker sees the others' writes, no result crosses users, and a worker
killed with SIGKILL in the middle of writing leaves no record without its vector or
vector without its record."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import chromadb
import psycopg
import pytest

from tests.postgres.conftest import HOST, Servers
from ucma_core import ANY, ChromaConfig, LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _worker(
    servers: Servers, url: str, user: str, count: int, *others: str, pause: float = 0.0, keyed: bool = False
) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "UCMA_TEST_PAUSE": str(pause),
        "UCMA_TEST_KEYED": "1" if keyed else "0",
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.postgres._worker",
            url,
            str(servers.chroma_port),
            user,
            str(count),
            *others,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _acks(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if line.startswith("ack ")]


def test_four_workers_write_and_read_one_memory_at_once(servers: Servers) -> None:
    url = servers.url()
    users = [f"user{i}" for i in range(4)]
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()):
        pass  # created once, so the workers race on writes rather than on creating the tables
    procs = [_worker(servers, url, u, 8, *[o for o in users if o != u]) for u in users]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    acked = {u: _acks(out) for u, (out, _) in zip(users, outs, strict=True)}
    for u, (out, _) in zip(users, outs, strict=True):
        report = json.loads(out.splitlines()[-1])
        assert report["seen"] == {o: 8 for o in users if o != u}
        assert report["leaked"] == []
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        for u in users:
            assert sorted(r.id for r in mem.list_memories(user_id=u)) == sorted(acked[u])
            assert {h.record.user_id for h in mem.remember("harbour lighthouse note", user_id=u, k=20)} == {u}
        report = mem.verify()
        assert report.ok and report.chroma_records == 32, report


def test_a_write_in_one_process_is_seen_by_remember_in_another_within_a_second(servers: Servers) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as reader:
        assert reader.remember("harbour lighthouse", user_id="ana") == []
        proc = _worker(servers, url, "ana", 1)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        written_at = time.monotonic()
        hits = reader.remember("harbour lighthouse", user_id="ana")
        assert time.monotonic() - written_at < 1.0
        assert [h.id for h in hits] == _acks(out)


def test_a_writer_killed_mid_write_leaves_no_orphan(servers: Servers) -> None:
    url = servers.url()
    rng = random.Random(7)
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()):
        pass
    acked: list[str] = []
    for round_ in range(3):
        victim = _worker(servers, url, f"victim{round_}", 10_000)
        steady = _worker(servers, url, f"steady{round_}", 15)
        time.sleep(rng.uniform(1.5, 3.0))
        os.kill(victim.pid, signal.SIGKILL)
        out, _ = victim.communicate(timeout=60)
        acked += _acks(out)
        out, err = steady.communicate(timeout=240)
        assert steady.returncode == 0, err[-3000:]
        acked += _acks(out)
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        report = mem.verify()
        assert report.ok, report
        assert not report.only_in_chroma and not report.only_in_graph and not report.missing_keywords
        stored = {r.id for r in mem.list_memories(user_id=ANY, limit=100_000)}
        assert set(acked) <= stored


#: A short Chroma timeout: a dead worker's pending vectors are swept after it.
GRACE = 2.0


def _doomed_documents(servers: Servers) -> list[str]:
    client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
    documents = [d for c in client.list_collections() for d in (c.get()["documents"] or [])]
    return [d for d in documents if d.startswith("doomed wrote")]


def _kill_with_chroma_stopped(servers: Servers, url: str, proc: subprocess.Popen[str], marker: str) -> None:
    """Stop the Chroma server, wait until ``marker`` (SQL returning a row) shows the worker's
    write under way, kill the worker, start the server again: its add was in flight."""
    target = PostgresTarget.parse(url)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
    os.kill(servers.chroma_pid, signal.SIGSTOP)  # the worker's Chroma write now hangs
    try:
        with psycopg.connect(target.conninfo, autocommit=True) as probe:
            probe.execute(f'SET search_path TO "{target.schema}"')
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and probe.execute(marker).fetchone() is None:
                time.sleep(0.05)
            assert probe.execute(marker).fetchone() is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        os.kill(servers.chroma_pid, signal.SIGCONT)


def _config(servers: Servers) -> MemoryConfig:
    return MemoryConfig(
        chroma=ChromaConfig(host=HOST, port=servers.chroma_port),
        limits=LimitsConfig(chroma_timeout_seconds=GRACE),
    )


def test_a_writer_killed_during_its_staged_chroma_add_is_undone_by_the_next_worker(servers: Servers) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=_config(servers)) as mem:
        kept = mem.observe("Amy keeps the harbour lighthouse logbook", user_id="amy", importance=1.0)
        proc = _worker(servers, url, "doomed", 1, pause=1.0)
        _kill_with_chroma_stopped(servers, url, proc, "SELECT id FROM pending")
        assert [r.id for r in mem.list_memories(user_id=ANY)] == [kept]  # never visible
        report = mem.verify()  # in flight until the grace has passed: no orphan
        assert report.ok, report
        time.sleep(GRACE + 1.0)
        other = mem.observe("Amy also logs the ferry times", user_id="amy", importance=1.0)  # sweeps
        report = mem.verify()
        assert report.ok and report.chroma_records == 2, report
        assert sorted(r.id for r in mem.list_memories(user_id=ANY)) == sorted([kept, other])
    assert _doomed_documents(servers) == []


def test_a_writer_killed_between_its_intent_and_chroma_is_undone_by_the_next_worker(servers: Servers) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=_config(servers)) as mem:
        kept = mem.observe("Amy keeps the harbour lighthouse logbook", user_id="amy", importance=1.0)
        proc = _worker(servers, url, "doomed", 1, pause=1.0, keyed=True)
        _kill_with_chroma_stopped(
            servers,
            url,
            proc,
            'SELECT 1 FROM journal WHERE seq = (SELECT max(seq) FROM journal) AND line LIKE \'%"op":"b"%\'',
        )
        # the next call undoes the open intent at once; the dead worker's add may land after
        # that (the server was stopped with it queued): the ids stay pending and are deleted
        # again once the grace has passed
        assert [r.id for r in mem.list_memories(user_id=ANY)] == [kept]
        time.sleep(GRACE + 1.0)
        mem.observe("Amy also logs the ferry times", user_id="amy", importance=1.0)
        report = mem.verify()
        assert report.ok and report.chroma_records == 2, report
    assert _doomed_documents(servers) == []


def test_forget_user_leaves_no_text_in_pg_dump_or_the_chroma_collection(servers: Servers) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        mem.observe("Zed keeps the spare key under the blue flowerpot", user_id="zed", importance=1.0)
        mem.observe("Zed's locker code is quokka-4471", user_id="zed", importance=1.0)
        mem.observe("Amy waters the garden on Mondays", user_id="amy", importance=1.0)
        before = servers.pg_dump(url)
        assert "quokka-4471" in before and "flowerpot" in before
        assert mem.forget_user("zed") == 2
    dump = servers.pg_dump(url)
    assert "quokka-4471" not in dump and "flowerpot" not in dump
    assert "waters the garden" in dump
    client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
    documents = [d for c in client.list_collections() for d in (c.get()["documents"] or [])]
    assert not any("quokka" in d or "flowerpot" in d for d in documents)
    assert any("waters the garden" in d for d in documents)
