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
from ucma_core import ANY, Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.postgres import PostgresTarget

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _worker(
    servers: Servers,
    url: str,
    user: str,
    count: int,
    *others: str,
    pause: float = 0.0,
    forget: bool = False,
    gap: float = 0.0,
) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "UCMA_TEST_PAUSE": str(pause),
        "UCMA_TEST_FORGET": "1" if forget else "0",
        "UCMA_TEST_GAP": str(gap),
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


def _documents(servers: Servers, prefix: str) -> list[str]:
    client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
    documents = [d for c in client.list_collections() for d in (c.get()["documents"] or [])]
    return [d for d in documents if d.startswith(prefix)]


def _probe(url: str, sql: str) -> bool:
    target = PostgresTarget.parse(url)
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{target.schema}"')
        return conn.execute(sql).fetchone() is not None


def test_a_writer_killed_before_its_vectors_reach_chroma_is_finished_by_the_next_worker(
    servers: Servers,
) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        kept = mem.observe("Amy keeps the harbour lighthouse logbook", user_id="amy", importance=1.0)
        proc = _worker(servers, url, "doomed", 1, pause=1.0)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        os.kill(servers.chroma_pid, signal.SIGSTOP)  # the worker's flush to Chroma now hangs
        try:
            line = proc.stdout.readline()  # observe returned: the record and its vector are committed
            assert line.startswith("ack "), line
            assert _probe(url, "SELECT id FROM pending")  # its vector waits for its flush
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            os.kill(servers.chroma_pid, signal.SIGCONT)
        doomed = line.split()[1]
        assert sorted(r.id for r in mem.list_memories(user_id=ANY)) == sorted([kept, doomed])
        report = mem.verify()  # the next flush (here: verify's) adds what the dead worker left
        assert report.ok and report.chroma_records == 2, report
        assert not _probe(url, "SELECT id FROM pending")
        assert [h.id for h in mem.remember("doomed note lighthouse", user_id="doomed", k=3)] == [doomed]
    assert len(_documents(servers, "doomed wrote")) == 1


def test_a_writer_killed_between_its_intent_and_chroma_is_finished_by_the_next_worker(
    servers: Servers,
) -> None:
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        kept = mem.observe("Amy keeps the harbour lighthouse logbook", user_id="amy", importance=1.0)
        proc = _worker(servers, url, "forgetter", 1, pause=1.0, forget=True, gap=2.0)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        first = proc.stdout.readline()
        assert first.startswith("ack "), first
        deadline = time.monotonic() + 30
        while _probe(url, "SELECT id FROM pending") and time.monotonic() < deadline:
            time.sleep(0.05)  # the note reached Chroma
        os.kill(servers.chroma_pid, signal.SIGSTOP)  # the deletion's Chroma write now hangs
        try:
            last_is_intent = (
                "SELECT 1 FROM journal WHERE seq = (SELECT max(seq) FROM journal) "
                """AND line LIKE '%"op":"b"%'"""
            )
            deadline = time.monotonic() + 30
            while not _probe(url, last_is_intent) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _probe(url, last_is_intent)  # its intent is committed, its Chroma write is not done
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            os.kill(servers.chroma_pid, signal.SIGCONT)
        time.sleep(1.0)  # let the server finish what it had received
        assert [r.id for r in mem.list_memories(user_id=ANY)] == [kept]  # the next call finished it
        report = mem.verify()
        assert report.ok and report.chroma_records == 1, report
    assert _documents(servers, "forgetter wrote") == []


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
