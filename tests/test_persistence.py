"""Persistence of a memory folder across processes: round trips of every memory type,
journal replay and compaction, torn journal lines, the folder lock, manifest checks,
corrupt files, reconcile between Chroma and the graph, forget_user scrubbing and
frequent snapshots.

The second process is a fresh interpreter (``subprocess.run([sys.executable, "-c", ...])``,
see :mod:`tests._persist_util`). A child that must *not* close its memory ends with
``os._exit(0)`` right after its writes, as a crash would.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._persist_util import (
    META,
    PRELUDE,
    REPO,
    child_env,
    folder_files,
    journal_lines,
    record_dict,
    records_of,
    run_child,
    write_all_types,
)
from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import (
    ConfigurationError,
    CorruptStoreError,
    EmbedderMismatchError,
    MemoryLockedError,
    RepairNeededError,
    SchemaVersionError,
    StorageError,
)

#: Fields that a read (``remember``) legitimately changes.
RETENTION = {"stability", "last_access", "access_count"}

JOURNAL = "graph.journal.jsonl"
SNAPSHOT = "graph.snapshot.json"


def _without(record: dict[str, Any] | None, keys: set[str]) -> dict[str, Any]:
    assert record is not None
    return {k: v for k, v in record.items() if k not in keys}


def _nearly(a: Any, b: Any) -> bool:
    """Equal, except that floats may differ in their last bit (Chroma 1.x does not keep float
    metadata bit-exact, and a record rebuilt from Chroma alone carries its floats)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_nearly(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_nearly(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _consistent(mem: Memory) -> None:
    """Graph memory nodes and Chroma records are the same set."""
    report = mem.verify()
    assert report.only_in_graph == report.only_in_chroma == ()
    assert mem.stats()["memories"] == report.chroma_records == report.graph_memories
    # No bare nodes (e.g. created implicitly by an edge to a node the graph lost).
    assert report.bare_nodes == ()


def _followed_by(mem: Memory, memory_id: str) -> list[str]:
    return [v for _, v, _, _ in mem.edges(memory_id, edge_type="followed_by", direction="out")]


# ---------------------------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------------------------

VERIFY_ALL_TYPES = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
ids = json.loads(sys.argv[2])
got = records_of(mem, ids)
recalled = {}
for kind, memory_id in ids.items():
    rec = got[kind]
    results = mem.remember(rec["content"], user_id=rec["user_id"], memory_types=[kind], k=5)
    hit = [r for r in results if r.id == memory_id]
    recalled[kind] = None if not hit else {
        "record": record_dict(hit[0].record), "metadata": hit[0].metadata, "content": hit[0].content,
        "memory_type": hit[0].memory_type.value, "source_ids": list(hit[0].source_ids),
        "timestamp": hit[0].timestamp,
    }
after = records_of(mem, ids)
mem.close()
emit({"got": got, "recalled": recalled, "after": after})
"""


def test_every_memory_type_round_trips_through_another_process(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        ids = write_all_types(mem)
        expected = records_of(mem, ids)
    # The writes did change state after the first write; that state must come back too.
    assert expected["procedural"]["executions"] == 4
    assert expected["procedural"]["status"] == "active"
    assert expected["learning"]["successes"] == 1 and expected["learning"]["failures"] == 1
    assert expected["learning"]["validated"] is True
    assert expected["semantic"]["source_ids"] == [ids["episodic"]]
    assert expected["episodic"]["participants"] == ["Ana", "Bob"]

    (out,) = run_child(VERIFY_ALL_TYPES, folder, json.dumps(ids))

    assert out["got"] == expected, "get() after reopen in another process differs from what was written"
    for kind, memory_id in ids.items():
        hit = out["recalled"][kind]
        assert hit is not None, f"remember() did not return the {kind} memory {memory_id} after reopen"
        assert hit["record"] == expected[kind]
        assert hit["memory_type"] == kind
        assert hit["content"] == expected[kind]["content"]
        assert hit["metadata"] == META
        assert hit["source_ids"] == expected[kind]["source_ids"]
        assert hit["timestamp"] == expected[kind]["timestamp"]
        after = out["after"][kind]
        # remember() reinforced it in the reader; nothing else changed.
        assert after["access_count"] == expected[kind]["access_count"] + 1
        assert after["stability"] >= expected[kind]["stability"]
        assert _without(after, RETENTION) == _without(expected[kind], RETENTION)

    # The reader's reinforcement was persisted as well.
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert records_of(mem, ids) == out["after"]
        _consistent(mem)


def test_retention_state_persists(folder: Path, clock: Any) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        memory_id = mem.observe("the quarterly report is due on Friday", user_id="ana", importance=0.5)
        assert memory_id is not None
        initial = mem.get(memory_id)
        assert initial is not None
        for _ in range(3):
            clock.advance(days=2)
            assert [r.id for r in mem.remember("quarterly report due", user_id="ana", k=1)] == [memory_id]
            assert mem.reinforce([memory_id]) == 1  # used, not only read
        reinforced = record_dict(mem.get(memory_id))
    assert reinforced is not None
    assert reinforced["access_count"] == 6
    assert reinforced["stability"] > initial.stability
    assert reinforced["last_access"] == clock.now

    code = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
before = record_dict(mem.get(sys.argv[2]))
mem.remember("quarterly report due", user_id="ana", k=1)
after = record_dict(mem.get(sys.argv[2]))
mem.close()
emit([before, after])
"""
    ((before, after),) = run_child(code, folder, memory_id)
    assert before == reinforced
    assert after["access_count"] == 7
    assert after["stability"] >= before["stability"]
    assert after["last_access"] >= before["last_access"]

    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        assert record_dict(mem.get(memory_id)) == after


METADATAS: list[Any] = [
    META,
    None,
    {},
    {"k": "v"},
    {"$and": "not an operator", "a.b": 1, "": "empty key", " spaced key ": [" v "]},
    {"ключ": "значение", "emoji 🎉": ["🎉", "🧠"], "rtl": "שלום", "zwj": "👩‍💻"},
    {"deep": [[1, [2, [3, [4, [5]]]]]], "mixed": [1, "1", 1.5, None, False, {"x": []}]},
    {"long": "x" * 20_000, "control": "\u0000\u0001\u001f", "surrogate-free": "\ud7ff\ue000"},
]


def test_metadata_comes_back_unchanged(folder: Path) -> None:
    written: dict[str, Any] = {}
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        for n, meta in enumerate(METADATAS):
            memory_id = mem.observe(
                f"metadata case number {n} marmalade", user_id="m", importance=1.0, metadata=meta
            )
            assert memory_id is not None
            written[memory_id] = {} if meta is None else meta
        fact = mem.assert_fact("marmalade", "is made of", "oranges", user_id="m", metadata=METADATAS[5])
        written[fact.id] = METADATAS[5]
    code = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
by_get = {i: mem.get(i).metadata for i in json.loads(sys.argv[2])}
by_remember = {r.id: [r.metadata, r.record.metadata] for r in mem.remember("marmalade", user_id="m", k=50)}
mem.close()
emit({"get": by_get, "remember": by_remember})
"""
    (out,) = run_child(code, folder, json.dumps(list(written)))
    assert out["get"] == written
    assert set(out["remember"]) == set(written)
    for memory_id, (meta, record_meta) in out["remember"].items():
        assert meta == written[memory_id]
        assert record_meta == written[memory_id]


def test_float_fields_come_back_bit_exact(folder: Path) -> None:
    """What a write returns is what a later read returns, to the last bit: floats that
    need all 17 significant digits included (about one float in eight does)."""
    priority = 0.9870497179280261
    importance = 0.48449872261249405
    timestamp = 1_744_949_106.4788737
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        intention = mem.intend("pay the electricity bill", "bill", priority=priority)
        assert intention.priority == priority
        episode = mem.observe("the electricity bill arrived", importance=importance, timestamp=timestamp)
        assert episode is not None
        assert mem.get(intention.id).priority == priority  # type: ignore[union-attr]
    (out,) = run_child(
        """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
emit([record_dict(mem.get(sys.argv[2])), record_dict(mem.get(sys.argv[3]))])
mem.close()
""",
        folder,
        intention.id,
        episode,
    )
    stored_intention, stored_episode = out
    assert stored_intention["priority"] == priority
    assert stored_episode["importance"] == importance
    assert stored_episode["timestamp"] == timestamp


# ---------------------------------------------------------------------------------------------
# Journal: compaction, replay, torn lines
# ---------------------------------------------------------------------------------------------


def test_journal_is_compacted_into_the_snapshot_on_close(folder: Path) -> None:
    mem = Memory(folder, embedder=HashingEmbedder())
    ids = write_all_types(mem)
    expected = records_of(mem, ids)
    assert not (folder / SNAPSHOT).exists(), "no snapshot expected before close (snapshot_every=5000)"
    assert len(journal_lines(folder)) > 10
    mem.close()
    mem.close()  # idempotent

    assert (folder / JOURNAL).read_bytes() == b""
    lines = [json.loads(line) for line in (folder / SNAPSHOT).read_text("utf-8").splitlines()]
    assert lines[0]["format"] == "ucma-graph-snapshot"
    assert lines[-1] == {"end": True, "entries": len(lines) - 2}
    nodes = {entry[1]: entry[2] for entry in lines[1:-1] if entry[0] == "n"}
    for kind, memory_id in ids.items():
        assert nodes[memory_id]["memory_type"] == kind
        for key in ("access_count", "stability", "last_access"):
            assert nodes[memory_id][key] == expected[kind][key]

    (out,) = run_child(
        """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
emit(records_of(mem, json.loads(sys.argv[2])))
os._exit(0)
""",
        folder,
        json.dumps(ids),
    )
    assert out == expected


KILLED_WRITER = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
ids = write_all_types(mem)
emit({"ids": ids, "records": records_of(mem, ids)})
os._exit(0)  # no close(): the graph exists only as journal lines
"""


@pytest.fixture(scope="module")
def killed_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, Any]]:
    """A folder whose writer process died without close(); tests work on copies of it."""
    folder = tmp_path_factory.mktemp("killed") / "memory"
    (out,) = run_child(KILLED_WRITER, folder)
    return folder, out["ids"], out["records"]


@pytest.fixture
def killed(
    killed_template: tuple[Path, dict[str, str], dict[str, Any]], tmp_path: Path
) -> tuple[Path, dict[str, str], dict[str, Any]]:
    template, ids, records = killed_template
    folder = tmp_path / "memory"
    shutil.copytree(template, folder)
    return folder, ids, records


def test_journal_is_replayed_when_the_writer_did_not_close(killed: Any) -> None:
    folder, ids, expected = killed
    assert not (folder / SNAPSHOT).exists()
    lines = journal_lines(folder)
    assert lines and all(line.endswith(b"\n") for line in lines)
    seqs = [json.loads(line)["seq"] for line in lines]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # State that only the journal knows (Chroma keeps first values only).
    assert expected["procedural"]["executions"] == 4 and expected["procedural"]["access_count"] >= 5
    assert expected["learning"]["successes"] == 1

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert records_of(mem, ids) == expected
        hits = mem.remember(expected["episodic"]["content"], user_id="ana", k=3)
        assert ids["episodic"] in [h.id for h in hits]
        assert [f.id for f in mem.facts_about("Ana", user_id="ana", agent_id="agent-1")] == [ids["semantic"]]
        _consistent(mem)
    assert (folder / JOURNAL).read_bytes() == b""


TORN_TAILS: dict[str, Callable[[list[bytes], dict[str, str]], bytes]] = {
    "garbage_without_newline": lambda lines, ids: b"#!garbage{{ not json at all",
    "half_a_json_line": lambda lines, ids: lines[-1][: len(lines[-1]) // 2],
    "half_a_line_cut_inside_utf8": lambda lines, ids: (
        b'{"op":"n","id":"' + ids["episodic"].encode() + b'","a":{"summary":"caf\xc3'
    ),
    "complete_json_without_newline": lambda lines, ids: json.dumps(
        {"op": "n", "id": ids["episodic"], "a": {"access_count": 999}, "seq": 10**9}
    ).encode(),
    "garbled_last_line_with_newline": lambda lines, ids: b'{"op": "n", "id": \n',
    "invalid_utf8_last_line_with_newline": lambda lines, ids: b"\x80\x81\xfe torn \xc3\n",
}


@pytest.mark.parametrize("tail", list(TORN_TAILS))
def test_torn_last_journal_line_is_ignored(killed: Any, tail: str) -> None:
    folder, ids, expected = killed
    path = folder / JOURNAL
    intact = path.read_bytes()
    path.write_bytes(intact + TORN_TAILS[tail](journal_lines(folder), ids))

    mem = Memory(folder, embedder=HashingEmbedder())
    try:
        assert records_of(mem, ids) == expected
        # The torn tail was cut off, so the next append starts on a clean line.
        assert path.read_bytes() == intact
        new_id = mem.observe("written after the repair", user_id="ana", importance=1.0)
        assert new_id is not None
        data = path.read_bytes()
        assert data.startswith(intact) and data.endswith(b"\n")
        ops = [json.loads(line) for line in data.splitlines()]
        assert any(op.get("id") == new_id for op in ops)
        _consistent(mem)
    finally:
        mem.close()
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert records_of(mem, ids) == expected
        assert mem.get(new_id) is not None
        _consistent(mem)


BAD_MIDDLE_LINES = {
    "not_json": b"this line is not json\n",
    "json_array": b"[1, 2, 3]\n",
    "json_number": b"42\n",
    "non_numeric_seq": b'{"op": "n", "id": "x", "a": {}, "seq": "abc"}\n',
    "unknown_op": b'{"op": "zz", "seq": 999999}\n',
    "node_without_id": b'{"op": "n", "seq": 999999}\n',
}


@pytest.mark.parametrize("bad", list(BAD_MIDDLE_LINES))
def test_unreadable_line_inside_the_journal_is_reported_not_dropped(killed: Any, bad: str) -> None:
    folder, ids, expected = killed
    path = folder / JOURNAL
    lines = journal_lines(folder)
    original = b"".join(lines)
    damaged = b"".join(lines[:2]) + BAD_MIDDLE_LINES[bad] + b"".join(lines[2:])
    path.write_bytes(damaged)
    with pytest.raises(CorruptStoreError):
        Memory(folder, embedder=HashingEmbedder())
    assert path.read_bytes() == damaged, "a failed open must not truncate the journal"
    path.write_bytes(original)
    with Memory(folder, embedder=HashingEmbedder()) as mem:  # the failed open released the lock
        assert records_of(mem, ids) == expected


def test_invalid_utf8_inside_the_journal_is_a_corrupt_store(killed: Any) -> None:
    folder, _, _ = killed
    path = folder / JOURNAL
    lines = journal_lines(folder)
    path.write_bytes(b"".join(lines[:2]) + b'{"op":"n","id":"\x80\x81"}\n' + b"".join(lines[2:]))
    with pytest.raises(CorruptStoreError):
        Memory(folder, embedder=HashingEmbedder())


# ---------------------------------------------------------------------------------------------
# Lock
# ---------------------------------------------------------------------------------------------

LOCK_PROBE = """
out = {}
for label, timeout in (("immediate", 0.0), ("waiting", 0.5)):
    start = time.monotonic()
    try:
        Memory(sys.argv[1], embedder=HashingEmbedder(), config=MemoryConfig(lock_timeout=timeout)).close()
        out[label] = ["opened", time.monotonic() - start]
    except UCMAError as e:
        out[label] = [type(e).__name__, time.monotonic() - start]
emit(out)
"""


def test_second_memory_on_an_open_folder_is_locked_out(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        first = mem.observe("holding the folder open", user_id="u", importance=1.0)
        assert first is not None

        (out,) = run_child(LOCK_PROBE, folder)
        assert out["immediate"][0] == "MemoryLockedError"
        assert out["waiting"][0] == "MemoryLockedError"
        assert out["waiting"][1] >= 0.5, "lock_timeout=0.5 must wait before giving up"

        # A second Memory in this same process is refused too.
        with pytest.raises(MemoryLockedError):
            Memory(folder, embedder=HashingEmbedder())
        start = time.monotonic()
        with pytest.raises(MemoryLockedError) as info:
            Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(lock_timeout=0.5))
        assert time.monotonic() - start >= 0.5
        assert isinstance(info.value, StorageError)

        # The refused openers did not disturb the owner, nor release its lock.
        second = mem.observe("still writable", user_id="u", importance=1.0)
        assert second is not None and mem.get(first) is not None
        (out,) = run_child(LOCK_PROBE, folder)
        assert out["immediate"][0] == "MemoryLockedError"

    (out,) = run_child(LOCK_PROBE, folder)  # released by close()
    assert out["immediate"][0] == "opened"
    assert out["waiting"][0] == "opened"


HOLDER = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
emit(mem.observe("written by the holder", user_id="u", importance=1.0))
time.sleep(float(sys.argv[2]))
mem.close()
"""


def test_lock_timeout_waits_for_the_holder_to_close(folder: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", PRELUDE + HOLDER, str(folder), "1.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=child_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("@@RESULT "), (
            f"holder failed: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )
        held_id = json.loads(line.split(" ", 1)[1])
        with pytest.raises(MemoryLockedError):
            Memory(folder, embedder=HashingEmbedder())
        start = time.monotonic()
        with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(lock_timeout=60)) as mem:
            waited = time.monotonic() - start
            record = mem.get(held_id)
            assert record is not None and record.content == "written by the holder"
        assert waited > 0.3
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


# ---------------------------------------------------------------------------------------------
# Manifest and corrupt files
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrong",
    [HashingEmbedder(128), HashingEmbedder(256, name="other-embedder")],
    ids=["other_dimension", "other_name"],
)
def test_other_embedder_is_refused_and_the_data_is_kept(folder: Path, wrong: HashingEmbedder) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        ids = write_all_types(mem)
        expected = records_of(mem, ids)
    before = {k: v for k, v in folder_files(folder).items() if k != "LOCK"}

    with pytest.raises(EmbedderMismatchError) as info:
        Memory(folder, embedder=wrong)
    assert isinstance(info.value, ConfigurationError)
    out = run_child(
        """
try:
    Memory(sys.argv[1], embedder=HashingEmbedder(int(sys.argv[2]), name=sys.argv[3]))
    emit("opened")
except UCMAError as e:
    emit(type(e).__name__)
""",
        folder,
        wrong.dimension,
        wrong.name,
    )
    assert out == ["EmbedderMismatchError"]

    after = {k: v for k, v in folder_files(folder).items() if k != "LOCK"}
    assert after.keys() == before.keys()
    assert [k for k in before if before[k] != after[k]] == []

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert records_of(mem, ids) == expected
    with Memory(folder) as mem:  # no embedder: the recorded built-in one
        assert mem.embedder.name == "hashing-256"
        assert records_of(mem, ids) == expected


@pytest.mark.parametrize("version", [2, 0, None, "1"], ids=["newer", "older", "missing", "string"])
def test_other_schema_version_is_refused(folder: Path, version: Any) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        memory_id = mem.observe("schema version probe", importance=1.0)
    manifest = folder / "ucma.json"
    original = manifest.read_bytes()
    data = json.loads(original)
    if version is None:
        del data["schema_version"]
    else:
        data["schema_version"] = version
    manifest.write_text(json.dumps(data), encoding="utf-8")

    with pytest.raises(SchemaVersionError):
        Memory(folder, embedder=HashingEmbedder())
    with pytest.raises(SchemaVersionError):
        Memory(folder)

    manifest.write_bytes(original)
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert mem.get(memory_id) is not None


CORRUPT_SNAPSHOTS = {
    "not_json": b"{not json",
    "empty_file": b"",
    "a_list": b"[]",
    "no_seq": b'{"nodes": [], "edges": []}',
    "bad_node": b'{"seq": 3, "nodes": [["only-an-id"]], "edges": []}',
    "bad_edge": b'{"seq": 3, "nodes": [], "edges": [["a", "b", {}]]}',
    "truncated": None,  # the real snapshot cut in half
    "invalid_utf8": b'{"seq": 1, "nodes": [["\x80\x81", {}]], "edges": []}',
}


@pytest.mark.parametrize("case", list(CORRUPT_SNAPSHOTS))
def test_corrupt_snapshot_raises_corrupt_store_error(folder: Path, case: str) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        memory_id = mem.observe("corrupt snapshot probe", importance=1.0)
    path = folder / SNAPSHOT
    original = path.read_bytes()
    damaged = CORRUPT_SNAPSHOTS[case]
    path.write_bytes(original[: len(original) // 2] if damaged is None else damaged)

    with pytest.raises(CorruptStoreError):
        Memory(folder, embedder=HashingEmbedder())

    path.write_bytes(original)  # the failed open released the lock and changed nothing
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert mem.get(memory_id) is not None


CORRUPT_MANIFESTS = {
    "fields_missing": b'{"format": "ucma-memory-folder", "schema_version": 1}',
    "not_json": b'{"format": "ucma-memory-folder", ',
    "a_list": b"[1]",
    "other_format": b'{"format": "something-else", "schema_version": 1}',
    "embedder_not_an_object": None,  # filled from the real manifest below
    "invalid_utf8": b'{"format": "ucma-memory-folder\x80", "schema_version": 1}',
}


@pytest.mark.parametrize("case", list(CORRUPT_MANIFESTS))
def test_corrupt_manifest_raises_corrupt_store_error(folder: Path, case: str) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        memory_id = mem.observe("manifest probe", importance=1.0)
    path = folder / "ucma.json"
    original = path.read_bytes()
    damaged = CORRUPT_MANIFESTS[case]
    if damaged is None:
        data = json.loads(original)
        data["embedder"] = "hashing-256"
        damaged = json.dumps(data).encode()
    path.write_bytes(damaged)
    with pytest.raises(CorruptStoreError):
        Memory(folder, embedder=HashingEmbedder())
    with pytest.raises(CorruptStoreError):
        Memory(folder)  # reading the recorded embedder fails the same way
    path.write_bytes(original)
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert mem.get(memory_id) is not None


# ---------------------------------------------------------------------------------------------
# Reconcile
# ---------------------------------------------------------------------------------------------

RECONCILE_WRITER = """
folder = sys.argv[1]
mem = Memory(folder, embedder=HashingEmbedder())
e1 = mem.observe("first step: unpack the telescope", user_id="u", session_id="night", importance=1.0,
                 timestamp=1_000.0)
e2 = mem.observe("second step: align the finder scope", user_id="u", session_id="night", importance=1.0,
                 timestamp=2_000.0)
f1 = mem.assert_fact("telescope", "is pointed at", "Vega", user_id="u").id
mem.remember("telescope finder scope", user_id="u", k=3)
mem.close()
mem = Memory(folder, embedder=HashingEmbedder())
e3 = mem.observe("third step: focus on Saturn", user_id="u", session_id="night", importance=1.0,
                 timestamp=3_000.0)
f2 = mem.assert_fact("Saturn", "has", "rings", user_id="u").id
ids = {"e1": e1, "e2": e2, "e3": e3, "f1": f1, "f2": f2}
emit({"ids": ids, "records": {k: record_dict(mem.get(v)) for k, v in ids.items()}})
mem.flush()  # group commit: Chroma has e3 and f2 only once flushed (until then only the journal does)
os._exit(0)  # e3 and f2 are in Chroma, and in the graph only through the journal
"""


@pytest.mark.parametrize("lost", ["journal", "journal_and_snapshot", "snapshot"])
def test_lost_graph_files_refuse_to_open_then_repair_restores_from_chroma(folder: Path, lost: str) -> None:
    (out,) = run_child(RECONCILE_WRITER, folder)
    ids, written = out["ids"], out["records"]
    if lost != "snapshot":
        (folder / JOURNAL).unlink()
    if lost != "journal":
        (folder / SNAPSHOT).unlink()
    # What comes back only from Chroma (first values); the rest comes from the graph files
    # that are left (the previous journal generation still reaches back to entry 1).
    restored = {"journal": ["e3", "f2"], "journal_and_snapshot": ["e3", "f2"], "snapshot": []}[lost]

    if lost == "snapshot":  # nothing was lost: the kept journal replays from the start
        with Memory(folder, embedder=HashingEmbedder()) as mem:
            assert {k: record_dict(mem.get(v)) for k, v in ids.items()} == written
            _consistent(mem)
        return

    def graph_files() -> dict[str, bytes]:  # UCMA's own files (Chroma and SQLite tidy theirs)
        return {k: v for k, v in folder_files(folder).items() if k.startswith(("graph", "ucma"))}

    before = graph_files()
    with pytest.raises(RepairNeededError) as refused:
        Memory(folder, embedder=HashingEmbedder())
    assert "graph.journal.jsonl is missing" in str(refused.value)
    assert "repair" in str(refused.value)
    assert graph_files() == before, "a refused open must change nothing"
    dry = Memory.repair(folder, embedder=HashingEmbedder(), dry_run=True)
    assert not dry.applied and dry.problems and dry.plan
    report = Memory.repair(folder, embedder=HashingEmbedder())
    assert report.applied and sorted(report.restored_from_chroma) == sorted(ids[k] for k in restored)
    assert report.dropped == ()

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        for key, memory_id in ids.items():
            record = record_dict(mem.get(memory_id))
            assert record is not None, f"{key} was not restored"
            if key in restored:
                # Rebuilt from Chroma: its first values (never reinforced, so entirely as written).
                assert _nearly(record, written[key]), (record, written[key])
            else:
                assert _nearly(_without(record, RETENTION), _without(written[key], RETENTION))
        # The restored episode is back in its session chain.
        assert _followed_by(mem, ids["e2"]) == [ids["e3"]]
        assert _followed_by(mem, ids["e1"]) == [ids["e2"]]
        assert _followed_by(mem, ids["e3"]) == []
        assert ids["e2"] in [n for n, hops, _ in mem.neighbours(ids["e3"]) if hops == 1]
        # The restored fact is back in the knowledge graph.
        assert [f.id for f in mem.facts_about("Saturn", user_id="u")] == [ids["f2"]]
        assert mem.related_entities("Saturn", user_id="u") == {"rings": 1}
        assert [f.id for f in mem.facts_about("Vega", user_id="u")] == [ids["f1"]]
        assert ids["e3"] in [r.id for r in mem.remember("focus on Saturn", user_id="u", k=3)]
        _consistent(mem)
    # The repair itself was persisted.
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert _followed_by(mem, ids["e2"]) == [ids["e3"]]
        assert [f.id for f in mem.facts_about("Saturn", user_id="u")] == [ids["f2"]]
        _consistent(mem)


def test_records_chroma_lost_refuse_to_open_and_repair_puts_them_back(folder: Path) -> None:
    import chromadb

    from ucma_core.storage.vectors import chroma_settings

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        e1 = mem.observe(
            "orphan test one: boil water", user_id="u", session_id="tea", importance=1.0, timestamp=10.0
        )
        e2 = mem.observe(
            "orphan test two: add the leaves", user_id="u", session_id="tea", importance=1.0, timestamp=20.0
        )
        e3 = mem.observe(
            "orphan test three: wait four minutes",
            user_id="u",
            session_id="tea",
            importance=1.0,
            timestamp=30.0,
        )
        fact = mem.assert_fact("green tea", "steeps at", "80 degrees", user_id="u").id
        assert _followed_by(mem, e1) == [e2]
        written = {i: record_dict(mem.get(i)) for i in (e1, e2, e3, fact)}

    # Chroma loses e2 and the fact behind UCMA's back.
    collection = json.loads((folder / "ucma.json").read_text("utf-8"))["collection"]
    client = chromadb.PersistentClient(path=str(folder / "chroma"), settings=chroma_settings())
    client.get_collection(collection).delete(ids=[e2, fact])
    client.close()

    with pytest.raises(RepairNeededError) as refused:
        Memory(folder, embedder=HashingEmbedder())
    assert "missing from Chroma" in str(refused.value)
    report = Memory.repair(folder, embedder=HashingEmbedder())
    assert sorted(report.restored_from_keywords) == sorted([e2, fact]) and report.dropped == ()

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert {i: record_dict(mem.get(i)) for i in written} == written
        assert _followed_by(mem, e1) == [e2] and _followed_by(mem, e2) == [e3]
        assert [f.id for f in mem.facts_about("green tea", user_id="u")] == [fact]
        assert e2 in [r.id for r in mem.remember("orphan test leaves", user_id="u", k=10)]
        _consistent(mem)
        assert mem.stats()["memories"] == 4


# ---------------------------------------------------------------------------------------------
# forget_user
# ---------------------------------------------------------------------------------------------

#: Unique words only Ana's memories contain.
ANA_WORDS = {
    name: f"qzvxkw{name}"
    for name in (
        "episode",
        "meta",
        "subject",
        "object",
        "procname",
        "step",
        "description",
        "insight",
        "title",
        "intention",
        "trigger",
        "action",
        "bulk",
    )
}


def _files_containing(folder: Path, words: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, data in folder_files(folder).items():
        hits = [w for w in words if w.encode("utf-8") in data]
        if hits:
            found[name] = hits
    return found


VERIFY_BOB = """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
bob, ana = json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {
    "bob_get": {i: (mem.get(i).content if mem.get(i) else None) for i in bob},
    "bob_recall": {i: [r.id for r in mem.remember(mem.get(i).content, user_id="bob", k=3)] for i in bob
                   if mem.get(i)},
    "ana_get": [i for i in ana if mem.get(i) is not None],
    "ana_recall": [r.id for r in mem.remember("qzvxkwepisode qzvxkwbulk", user_id="ana", k=10)],
    "any_recall": [r.content for r in mem.remember("qzvxkwepisode qzvxkwbulk", user_id=ANY, k=50)],
    "stats": mem.stats()["memories"],
    "chroma": mem.verify().chroma_records,
}
mem.close()
emit(out)
"""


def test_forget_user_erases_their_text_from_every_file(folder: Path) -> None:
    w = ANA_WORDS
    bob: dict[str, str] = {}
    ana: list[str] = []
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        for i in range(25):
            ana_id = mem.observe(
                f"Ana note {i}: {w['bulk']} {w['episode']} secret plans",
                user_id="ana",
                session_id="a1",
                importance=1.0,
                metadata={"note": w["meta"], "n": i},
            )
            bob_id = mem.observe(
                f"Bob note {i}: the garden needs watering on day {i}",
                user_id="bob",
                session_id="b1",
                importance=1.0,
                metadata={"note": f"bob {i}"},
            )
            assert ana_id is not None and bob_id is not None
            ana.append(ana_id)
            bob[bob_id] = f"Bob note {i}: the garden needs watering on day {i}"
        ana.append(
            mem.assert_fact(
                w["subject"],
                "likes",
                w["object"],
                user_id="ana",
                source_ids=[ana[0]],
                metadata={"why": w["meta"]},
            ).id
        )
        ana.append(
            mem.add_procedure(
                w["procname"], [w["step"], "second step"], description=w["description"], user_id="ana"
            ).id
        )
        ana.append(mem.learn(w["insight"], title=w["title"], user_id="ana").id)
        ana.append(mem.intend(w["intention"], [w["trigger"]], action=w["action"], user_id="ana").id)
        bob_fact = mem.assert_fact("Bob", "likes", "gardening", user_id="bob")
        bob[bob_fact.id] = bob_fact.content
        mem.remember("secret plans", user_id="ana", k=5)
        assert _files_containing(folder, list(w.values())), "the test words should be on disk before"

        assert mem.forget_user("ana") == len(ana)
        assert _files_containing(folder, list(w.values())) == {}, "Ana's text is still on disk"
        assert all(mem.get(i) is None for i in ana)
        _consistent(mem)
    assert _files_containing(folder, list(w.values())) == {}, "Ana's text is on disk after close"

    (out,) = run_child(VERIFY_BOB, folder, json.dumps(list(bob)), json.dumps(ana))
    assert out["bob_get"] == bob
    for memory_id, hits in out["bob_recall"].items():
        assert memory_id in hits
    assert out["ana_get"] == [] and out["ana_recall"] == []
    assert not any("qzvxkw" in content for content in out["any_recall"])
    assert out["stats"] == out["chroma"] == len(bob)


def test_forget_user_erases_their_tags_and_participants(folder: Path) -> None:
    """Tags (also procedure trigger tags and learning applicability) and participant names
    are the user's text as much as the content is."""
    words = ["qzvxkwtag", "qzvxkwtrigtag", "qzvxkwapplies", "qzvxkwperson"]
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        mem.observe(
            "Ana met someone about the project",
            user_id="ana",
            importance=1.0,
            tags=["qzvxkwtag"],
            participants=["Qzvxkwperson"],
        )
        mem.add_procedure("ana routine", ["do it"], trigger_tags=["qzvxkwtrigtag"], user_id="ana")
        mem.learn("ana lesson", applicability=["qzvxkwapplies"], user_id="ana")
        keep = mem.observe("Bob keeps this", user_id="bob", importance=1.0, tags=["garden"])
        assert mem.forget_user("ana") == 3
        assert mem.get(keep) is not None
    assert _files_containing(folder, words) == {}, "Ana's tags or participant names are still on disk"


# ---------------------------------------------------------------------------------------------
# Frequent snapshots
# ---------------------------------------------------------------------------------------------

SNAPSHOTTING_WRITER = """
folder = Path(sys.argv[1])
mem = Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(snapshot_every=int(sys.argv[2])))
ids = []
journal_lengths = []
snapshot_seen = False
for i in range(15):
    ids.append(mem.observe(f"snapshot item {i} about topic {i % 4}", user_id="u", session_id="s",
                           importance=1.0, timestamp=1_000.0 + i))
    if i % 3 == 0:
        mem.remember(f"topic {i % 4}", user_id="u", k=2)
    if i % 5 == 4:
        ids.append(mem.assert_fact(f"item{i}", "belongs to", f"topic{i % 4}", user_id="u").id)
    journal_lengths.append(len((folder / "graph.journal.jsonl").read_bytes().splitlines()))
    snapshot_seen = snapshot_seen or (folder / "graph.snapshot.json").exists()
emit({"ids": ids, "records": {i: record_dict(mem.get(i)) for i in ids}, "journal_lengths": journal_lengths,
      "snapshot_seen": snapshot_seen})
os._exit(0)
"""


@pytest.mark.parametrize("every", [1, 5])
def test_small_snapshot_every_compacts_during_writes(folder: Path, every: int) -> None:
    (out,) = run_child(SNAPSHOTTING_WRITER, folder, every)
    ids, records, lengths = out["ids"], out["records"], out["journal_lengths"]
    assert out["snapshot_seen"], "no snapshot was written during the writes"
    # A snapshot waits for max(snapshot_every, graph nodes) entries (O(1) per write), so the
    # journal is folded into the snapshot again and again while the writes go on.
    assert sum(1 for a, b in itertools.pairwise(lengths) if b < a) >= 2, lengths
    snapshot_seq = json.loads((folder / SNAPSHOT).read_text("utf-8").splitlines()[0])["seq"]
    assert all(json.loads(line)["seq"] > snapshot_seq for line in journal_lines(folder))

    config = MemoryConfig(snapshot_every=every)
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        assert {i: record_dict(mem.get(i)) for i in ids} == records
        assert all(mem.get(i) is not None for i in ids)
        episodes = [i for i in ids if records[i]["memory_type"] == "episodic"]
        for before, after in itertools.pairwise(episodes):
            assert _followed_by(mem, before) == [after]
        _consistent(mem)
        extra = mem.observe(
            "one more after reopening", user_id="u", session_id="s", importance=1.0, timestamp=2_000.0
        )
        mem.remember("snapshot item topic", user_id="u", k=4)
        records = {i: record_dict(mem.get(i)) for i in [*ids, extra]}
    assert (folder / JOURNAL).read_bytes() == b""
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        assert {i: record_dict(mem.get(i)) for i in records} == records
        assert _followed_by(mem, episodes[-1]) == [extra]
        _consistent(mem)


# ---------------------------------------------------------------------------------------------
# Reopen in the same process
# ---------------------------------------------------------------------------------------------

OTHER_WRITER = """
with Memory(sys.argv[1], embedder=HashingEmbedder()) as mem:
    emit(mem.observe(sys.argv[2], user_id="u", importance=1.0))
"""


def test_reopen_in_the_same_process_sees_what_another_process_wrote(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        first = mem.observe("the first note, written by the test process", user_id="u", importance=1.0)
    (second,) = run_child(OTHER_WRITER, folder, "the second note, written by another process")
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        record = mem.get(second)
        assert record is not None and record.content == "the second note, written by another process"
        hits = [r.id for r in mem.remember("second note written by another process", user_id="u", k=2)]
        assert second in hits and first in hits
        _consistent(mem)


# ---------------------------------------------------------------------------------------------
# Commit marks, intents and the previous snapshot generation
# ---------------------------------------------------------------------------------------------


def test_changes_without_their_commit_mark_are_not_replayed(killed: Any) -> None:
    folder, ids, expected = killed
    path = folder / JOURNAL
    seq = json.loads(path.read_bytes().splitlines()[-1])["seq"]
    uncommitted = [
        {"op": "b", "add": ["never-committed"], "seq": seq + 1},
        {"op": "n", "id": ids["episodic"], "a": {"access_count": 999}, "seq": seq + 2},
    ]
    with open(path, "ab") as fh:
        fh.write(b"".join(json.dumps(op).encode() + b"\n" for op in uncommitted))
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert records_of(mem, ids) == expected  # the access count of 999 was never committed
        assert mem.get("never-committed") is None
        _consistent(mem)


def test_a_damaged_snapshot_falls_back_to_the_previous_generation(folder: Path) -> None:
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        first = mem.observe("written before the first snapshot", user_id="u", importance=1.0)
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        second = mem.observe("written before the second snapshot", user_id="u", importance=1.0)
        mem.remember("written before", user_id="u", k=2)
        expected = {i: record_dict(mem.get(i)) for i in (first, second)}
    assert (folder / "graph.snapshot.prev.json").exists() and (folder / "graph.journal.prev.jsonl").exists()
    (folder / SNAPSHOT).write_bytes(b'{"format": "ucma-graph-snapshot", "seq": ')
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert {i: record_dict(mem.get(i)) for i in (first, second)} == expected
        notes = mem.verify().notes
        assert any("previous" in n or "prev" in n for n in notes), notes
        _consistent(mem)


def test_a_failed_write_is_undone_and_the_memory_keeps_working(folder: Path) -> None:
    from ucma_core.storage.journal import Journal

    with Memory(folder, embedder=HashingEmbedder()) as mem:
        kept = mem.observe("stored before the failure", user_id="u", importance=1.0)
        real = Journal.append

        def failing(self: Journal, ops: Any, **kwargs: Any) -> None:
            ops = list(ops)
            if any(op.get("op") == "c" for op in ops):
                raise StorageError("the journal cannot be written")
            real(self, ops, **kwargs)

        Journal.append = failing  # type: ignore[method-assign]
        try:
            with pytest.raises(StorageError):
                mem.observe("this one fails", user_id="u", importance=1.0, session_id="s")
            with pytest.raises(StorageError):
                mem.assert_fact("Ana", "lives in", "Lisbon", user_id="u")
        finally:
            Journal.append = real  # type: ignore[method-assign]
        assert mem.stats()["memories"] == 1 and mem.verify().ok
        assert [r.content for r in mem.remember("this one fails", user_id="u", k=5)] == [
            "stored before the failure"
        ]
        after = mem.observe("stored after the failure", user_id="u", importance=1.0, session_id="s")
        assert mem.history(session_id="s", user_id="u")[0].id == after
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        assert mem.get(kept) is not None and mem.get(after) is not None
        assert mem.stats()["memories"] == 2 and mem.facts_about("Ana", user_id="u") == []
        _consistent(mem)
