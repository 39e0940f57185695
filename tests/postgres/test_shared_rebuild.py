"""Re-keying and repairing a shared memory: the Chroma collection is rebuilt from the
``records`` table under the job lock ``rebuild`` while another worker keeps writing and
reading (its writes made during the copy are caught up, none is lost, and no search
returns a wrong result), and every worker follows the switch to the new collection."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import chromadb
import psycopg
import pytest

from tests.postgres.conftest import HOST, Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.keywords import KeywordRow
from ucma_core.storage.postgres import PostgresTarget
from ucma_core.storage.postgres.connection import lock_key
from ucma_core.storage.postgres.keywords import PgKeywordIndex

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _collections(servers: Servers) -> dict[str, dict[str, Any]]:
    client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
    return {c.name: dict(c.get(include=["metadatas", "documents"])) for c in client.list_collections()}


def _ours(servers: Servers, before: set[str]) -> dict[str, dict[str, Any]]:
    return {name: rows for name, rows in _collections(servers).items() if name not in before}


def _job_free(url: str) -> bool:
    target = PostgresTarget.parse(url)
    with psycopg.connect(target.conninfo, autocommit=True) as probe:
        key = lock_key(target, "job:rebuild")
        free = bool(probe.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0])
        if free:
            probe.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        return free


def test_rekey_while_another_worker_writes_and_reads(servers: Servers) -> None:
    url = servers.url()
    others = set(_collections(servers))
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as serving,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as rekeying,
    ):
        ids = [
            serving.observe(f"Ana packed item {n} for the glacier", user_id="ana", tags=["trip"], keep=True)
            for n in range(300)  # more than one page of the copy
        ]
        bob = serving.observe("Bob packed the glacier rope", user_id="bob", tags=["trip"], keep=True)
        doomed = ids[0]
        before = _ours(servers, others)
        assert len(before) == 1
        ((old_name, old_rows),) = before.items()
        old_keys = {k for m in old_rows["metadatas"] for k in m}
        during: list[Any] = []

        def serve(done: int, total: int, label: str) -> None:
            # another worker writes, deletes and reads in the middle of the copy
            if len(during) < 2:
                new = serving.observe(
                    f"Ana added crampons {done} to the glacier list", user_id="ana", tags=["trip"], keep=True
                )
                if not during:
                    serving.forget(doomed)
                hits = serving.remember("glacier crampons", user_id="ana", k=5, tags=["trip"])
                during.append((new, [h.record.user_id for h in hits], _job_free(url)))

        count = rekeying.rekey(progress=serve)

        assert len(during) == 2 and all(not free for _, _, free in during)  # served under the job lock
        assert all(users == ["ana"] * len(users) and users for _, users, _ in during)
        assert _job_free(url)
        added = [new for new, _, _ in during]
        assert count == 300 + len(added)  # the deletion and the writes during the copy were caught up
        after = _ours(servers, others)
        assert old_name not in after and len(after) == 1  # the old collection is dropped
        ((_, new_rows),) = after.items()
        new_keys = {k for m in new_rows["metadatas"] for k in m}
        assert sorted(new_rows["ids"]) == sorted([*ids[1:], bob, *added])
        # the keyed names changed: no tag / participant / metadata key of the old secret is left
        keyed_old = {k for k in old_keys if k.startswith(("tag:", "participant:", "meta:"))}
        assert keyed_old and not keyed_old & new_keys
        for n, worker in enumerate((serving, rekeying)):  # both follow the switch: filters use the new keys
            assert worker.verify().ok
            found = {m.id for m in worker.list_memories(user_id="ana", tags=["trip"], limit=1000)}
            assert found == {*ids[1:], *added}
            hits = worker.remember("glacier rope", user_id="bob", k=3, tags=["trip"])
            assert [h.id for h in hits] == [bob]
            # new writes after the switch land in the new collection, under the new keys
            late = worker.observe(f"Bob checked glacier map {n}", user_id="bob", tags=[f"map{n}"], keep=True)
            worker.flush()
            hits = worker.remember("glacier map", user_id="bob", k=5, tags=[f"map{n}"])
            assert late in {h.id for h in hits}
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as reopened:
        assert reopened.verify().ok
        assert len(reopened.list_memories(user_id="ana", tags=["trip"], limit=1000)) == 299 + len(added)


def test_repair_reembeds_lost_vectors_while_another_worker_serves(servers: Servers) -> None:
    url = servers.url()
    others = set(_collections(servers))
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as serving:
        ids = [serving.observe(f"Ana trued bicycle wheel {n}", user_id="ana", keep=True) for n in range(20)]
        serving.flush()
        ((name, _),) = _ours(servers, others).items()
        client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
        client.get_collection(name).delete(ids=ids[:5])  # Chroma lost five vectors
        assert not serving.verify().ok
        during: list[str] = []

        def serve(done: int, total: int, label: str) -> None:
            if "re-embedding" in label and not during:
                during.append(serving.observe("Ana oiled the bicycle chain", user_id="ana", keep=True))

        report = Memory.repair(url, embedder=HashingEmbedder(), config=servers.config(), progress=serve)
        assert report.applied and report.needed
        assert set(report.restored_from_keywords) == set(ids[:5])
        assert any("embedded the 21 record(s) again" in a for a in report.actions)
        assert any("keyword index" in a for a in report.actions)
        assert during  # another worker wrote during the re-embedding
        assert serving.verify().ok
        found = {m.id for m in serving.list_memories(user_id="ana", limit=100)}
        assert found == {*ids, *during}
        hits = serving.remember("bicycle chain oiled", user_id="ana", k=1)
        assert [h.id for h in hits] == during
        assert len(_ours(servers, others)) == 1  # one collection, the rebuilt one


_REKEY = """
import sys, time
from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(sys.argv[2])))
with Memory(sys.argv[1], embedder=HashingEmbedder(), config=config) as mem:
    def slow(done, total, label):
        print("copied", done, flush=True)
        if done:
            time.sleep(30)
    mem.rekey(progress=slow)
"""


def test_a_worker_killed_during_a_rekey_leaves_the_memory_as_it_was(servers: Servers) -> None:
    url = servers.url()
    others = set(_collections(servers))
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        ids = [
            mem.observe(f"Ana labelled jar {n} of plum jam", user_id="ana", tags=["pantry"], keep=True)
            for n in range(300)
        ]
        mem.flush()
        ((old_name, _),) = _ours(servers, others).items()
        proc = subprocess.Popen(
            [sys.executable, "-c", _REKEY, url, str(servers.chroma_port)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            assert proc.stdout is not None
            while not proc.stdout.readline().startswith("copied 256"):  # a page is in the copy
                assert proc.poll() is None
            assert len(_ours(servers, others)) == 2  # the old collection and the partial copy
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        # the memory is as it was: old collection, old keys, every record found by tag
        assert mem.verify().ok
        assert {m.id for m in mem.list_memories(user_id="ana", tags=["pantry"], limit=1000)} == set(ids)
        assert _job_free(url)  # the dead worker's job lock went with its session
        assert mem.rekey() == 300  # the next rebuild drops the partial copy and finishes
        after = _ours(servers, others)
        assert len(after) == 1 and old_name not in after
        assert {m.id for m in mem.list_memories(user_id="ana", tags=["pantry"], limit=1000)} == set(ids)
        assert mem.verify().ok


def test_a_rekey_catches_up_records_replaced_after_the_copy_read_them(servers: Servers) -> None:
    """A record replaced (same id, new text) after the copy wrote it: the catch-up finds its
    row by its change number and writes the new text into the new collection."""
    url = servers.url()
    others = set(_collections(servers))
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as serving,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as rekeying,
    ):
        keyed = {
            serving.upsert(f"shelf-{n}", f"Shelf {n} holds the blue boxes", user_id="ana"): n
            for n in range(20)
        }
        plain = [serving.observe(f"Ana sorted parcel {n} in the depot", user_id="ana") for n in range(280)]
        page_one = sorted([*keyed, *plain])[:256]  # the copy reads the ids in order, 256 a page
        replaced: list[str] = []

        def replace(done: int, total: int, label: str) -> None:
            if done == 256:  # the first page is in the new collection
                for memory_id in [i for i in keyed if i in page_one]:
                    n = keyed[memory_id]
                    assert (
                        serving.upsert(f"shelf-{n}", f"Shelf {n} now holds red crates", user_id="ana")
                        == memory_id
                    )
                    replaced.append(memory_id)

        assert rekeying.rekey(progress=replace) == 300
        assert replaced
        ((_, rows),) = _ours(servers, others).items()
        documents = dict(zip(rows["ids"], rows["documents"], strict=True))
        assert len(documents) == 300
        for memory_id, n in keyed.items():
            text = "now holds red crates" if memory_id in replaced else "holds the blue boxes"
            assert documents[memory_id] == f"Shelf {n} {text}"
        hits = serving.remember("red crates shelf", user_id="ana", k=3)
        assert hits and hits[0].id in replaced and hits[0].content.endswith("now holds red crates")
        assert serving.verify().ok and rekeying.verify().ok


def test_a_rekey_catches_up_rows_updated_in_place_after_the_copy_read_them(servers: Servers) -> None:
    """A ``records`` row written again in place (an insert of an id that exists takes
    ``ON CONFLICT … DO UPDATE``, the index's own write; no delete, so no new row) after the
    copy wrote it: the update trigger moves its change number on, and the catch-up writes
    the new text and fields into the new collection."""
    url = servers.url()
    others = set(_collections(servers))
    target = PostgresTarget.parse(url)
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem,
        psycopg.connect(target.conninfo, autocommit=True) as conn,
    ):
        ids = [mem.observe(f"Ana sorted parcel {n} in the depot", user_id="ana") for n in range(270)]
        mem.flush()
        conn.execute(f'SET search_path TO "{target.schema}"')
        index = PgKeywordIndex(conn)
        first = sorted(i for i in ids if i is not None)[:3]  # in the copy's first page (256 ids)
        rewritten: dict[str, str] = {}

        def rewrite(done: int, total: int, label: str) -> None:
            if done == 256 and not rewritten:  # the first page is in the new collection
                found = conn.execute(
                    "SELECT id, content, user_id, agent_id, session_id, memory_type, ts, stored "
                    "FROM records WHERE id = ANY(%s)",
                    (first,),
                ).fetchall()
                rows = [KeywordRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7])) for r in found]
                index.add(
                    [dataclasses.replace(r, content=r.content.replace("parcel", "crate")) for r in rows]
                )
                rewritten.update((r.id, r.content.replace("parcel", "crate")) for r in rows)

        assert mem.rekey(progress=rewrite) == 270
        assert sorted(rewritten) == first
        ((_, rows),) = _ours(servers, others).items()
        documents = dict(zip(rows["ids"], rows["documents"], strict=True))
        assert len(documents) == 270
        for memory_id in first:
            assert documents[memory_id] == rewritten[memory_id]


_SWITCH_THEN_WAIT = """
import sys, threading
from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(sys.argv[2])))
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
def wait_after_switch(done, total, label):
    if label == "dropping the old collection" and done == 0:
        print("switched", flush=True)
        threading.Event().wait()
mem.rekey(progress=wait_after_switch)
"""


def test_a_worker_killed_between_the_switch_and_the_drop(servers: Servers) -> None:
    """Killed -9 after the switch committed, before the old collection was dropped: every
    worker serves the new collection under the new keys, and the next worker to open drops
    the old one (no rebuild runs then)."""
    url = servers.url()
    others = set(_collections(servers))
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        ids = [
            mem.observe(f"Ana labelled jar {n} of plum jam", user_id="ana", tags=["pantry"], keep=True)
            for n in range(30)
        ]
        mem.flush()
        ((old_name, _),) = _ours(servers, others).items()
        proc = subprocess.Popen(
            [sys.executable, "-c", _SWITCH_THEN_WAIT, url, str(servers.chroma_port)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "switched"  # it waits there: no race with the kill
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        both = _ours(servers, others)
        assert old_name in both and len(both) == 2  # killed before the drop
        # the open worker follows the switch: the new keys find every record
        assert {m.id for m in mem.list_memories(user_id="ana", tags=["pantry"], limit=1000)} == set(ids)
        assert mem.verify().ok
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as reopened:
        assert {m.id for m in reopened.list_memories(user_id="ana", tags=["pantry"], limit=1000)} == set(ids)
        hits = reopened.remember("plum jam jar 7", user_id="ana", k=3, tags=["pantry"])
        assert ids[7] in {h.id for h in hits}
        assert reopened.verify().ok
        after = _ours(servers, others)
        assert old_name not in after and len(after) == 1  # dropped by the open
