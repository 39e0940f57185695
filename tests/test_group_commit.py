"""Group commit for vectors (``MemoryConfig.group_commit``): a small write is acknowledged once
durable in the folder's journal and found by every read at once; a writer thread adds it to
Chroma later. What waits survives a crash, a deletion is never undone by a later write to
Chroma, and forgetting a user leaves no text behind."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests._persist_util import run_child
from tests.faults.scenarios import folder_residue
from ucma_core import GroupCommitConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, StorageError

#: Nothing reaches Chroma by time alone during a test (only by flush, close or size).
SLOW = GroupCommitConfig(interval_seconds=60.0)


def _open(folder: Path, group: GroupCommitConfig = SLOW) -> Memory:
    return Memory(
        folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0, group_commit=group)
    )


def _text(i: int) -> str:
    return f"turn {i}: the parcel for locker {i * 7919 % 1000} was moved to shelf {i % 13}"


def test_every_acknowledged_observe_is_found_at_once_and_by_another_process(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    mem = _open(folder, GroupCommitConfig(batch_size=16, interval_seconds=0.01))
    ids: dict[str, str] = {}
    misses = []
    for i in range(120):
        memory_id = mem.observe(_text(i), user_id="u", metadata={"turn": i}, tags=["parcel"])
        assert memory_id is not None
        ids[memory_id] = _text(i)
        if memory_id not in [h.id for h in mem.remember(_text(i), user_id="u", k=3)]:
            misses.append(i)
        listed = mem.list_memories(user_id="u", metadata_filter={"turn": i}, tags=["parcel"])
        assert [r.id for r in listed] == [memory_id]
        assert mem.get(memory_id).content == _text(i)  # type: ignore[union-attr]
    assert misses == []
    assert mem.verify().ok
    mem.flush()
    mem.close()

    (found,) = run_child(
        """
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
expected = json.loads(sys.argv[2])
misses = [i for i, text in expected.items() if i not in [h.id for h in mem.remember(text, user_id="u", k=3)]]
emit({"misses": misses, "ok": mem.verify().ok, "count": mem.verify().chroma_records})
mem.close()
""",
        folder,
        json.dumps(ids),
    )
    assert found == {"misses": [], "ok": True, "count": 120}


def test_what_waited_for_chroma_is_written_when_the_folder_is_opened_after_a_kill(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    (acked,) = run_child(
        """
from ucma_core import GroupCommitConfig
config = MemoryConfig(importance_threshold=0.0, group_commit=GroupCommitConfig(interval_seconds=60.0))
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
ids = {mem.observe(f"waiting note {i} about the harbour crane {i}", user_id="u"): i for i in range(10)}
ids.update({i: -1 for i in mem.observe_many([f"bulk note {i} on the quay" for i in range(5)], user_id="u")})
emit(ids)
os.kill(os.getpid(), 9)
""",
        folder,
        expect_rc=-signal.SIGKILL,
    )
    assert len(acked) == 15
    mem = _open(folder)
    try:
        report = mem.verify()
        assert report.ok, report
        assert report.chroma_records == 15
        assert any("waiting for their Chroma write" in note for note in report.notes)
        for memory_id, i in acked.items():
            assert mem.get(memory_id) is not None
            if i >= 0:
                query = f"waiting note {i} about the harbour crane {i}"
                assert memory_id in [h.id for h in mem.remember(query, user_id="u", k=3)]
    finally:
        mem.close()


def test_a_waiting_record_that_is_deleted_or_replaced_is_never_brought_back(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    mem = _open(folder)
    keep = mem.observe("the blue kettle is on the top shelf", user_id="u")
    gone = mem.observe("the red umbrella is behind the door", user_id="u")
    keyed = mem.upsert("k1", "the spare key is under the mat", user_id="u")
    assert gone is not None and keep is not None
    mem.forget(gone)
    replaced = mem.upsert("k1", "the spare key is in the flower pot", user_id="u")
    assert replaced == keyed
    assert gone not in [h.id for h in mem.remember("red umbrella behind the door", user_id="u", k=5)]
    top = mem.remember("where is the spare key", user_id="u", k=1)
    assert top[0].content == "the spare key is in the flower pot"
    mem.flush()
    mem.close()

    mem = _open(folder)
    try:
        assert mem.get(gone) is None
        assert mem.get(keep) is not None
        assert mem.get_by_key("k1", user_id="u").content == "the spare key is in the flower pot"  # type: ignore[union-attr]
        report = mem.verify()
        assert report.ok and report.chroma_records == 2, report
    finally:
        mem.close()


def test_forgetting_a_user_whose_memories_wait_leaves_no_text(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    mem = _open(folder)
    mem.observe("zanzibarquokka is my secret word", user_id="ana")
    mem.observe("the weather is mild today", user_id="bo")
    assert mem.forget_user("ana") == 1
    assert mem.remember("zanzibarquokka", user_id="ana") == []
    assert folder_residue(folder, ["zanzibarquokka"]) == []
    assert mem.remember("weather mild", user_id="bo", k=1)[0].content == "the weather is mild today"
    mem.close()
    assert folder_residue(folder, ["zanzibarquokka"]) == []


def test_a_chroma_that_refuses_writes_loses_nothing_and_flush_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ucma_core.storage.vectors import VectorStore

    mem = _open(tmp_path / "m", GroupCommitConfig(interval_seconds=0.01))
    real_add = VectorStore.add

    def refuse(*args: object, **kwargs: object) -> None:
        raise StorageError("Chroma: no space left on device")

    monkeypatch.setattr(VectorStore, "add", refuse)
    memory_id = mem.observe("the lighthouse keeper logs the tide", user_id="u")
    assert memory_id is not None
    assert mem.remember("lighthouse keeper tide", user_id="u", k=1)[0].id == memory_id
    with pytest.raises(StorageError, match="durable in the journal"):
        mem.flush()
    assert any("wait for their Chroma write" in p for p in mem.verify().problems)
    monkeypatch.setattr(VectorStore, "add", real_add)
    mem.flush()
    report = mem.verify()
    assert report.ok and report.chroma_records == 1, report
    mem.close()


def test_group_commit_can_be_turned_off_and_is_checked(tmp_path: Path) -> None:
    mem = _open(tmp_path / "m", GroupCommitConfig(enabled=False))
    memory_id = mem.observe("written to chroma before observe returns", user_id="u")
    mem.flush()  # nothing waits
    assert mem.remember("written to chroma", user_id="u", k=1)[0].id == memory_id
    mem.close()
    with pytest.raises(ConfigurationError, match="batch_size"):
        GroupCommitConfig(batch_size=0)
    with pytest.raises(ConfigurationError, match="interval_seconds"):
        GroupCommitConfig(interval_seconds=0.0)


def test_a_score_is_the_same_whether_its_record_waits_or_is_in_chroma(tmp_path: Path) -> None:
    # The buffer measures distances as narrow searches do (wheresets.nearest_among: float32
    # unit vectors, 1 - dot, as Chroma's cosine space does), so a record's dense score (rounded
    # to 6 places) does not move when flush() writes it. The old float64 arithmetic moved
    # one of these 18 scores by 1e-6.
    texts = [
        "the blue kettle is on the top shelf of the pantry next to the tea tins",
        "a kettle",
        "the red umbrella hangs behind the kitchen door",
        "spare key under the flower pot by the gate, the blue one",
        "the pantry shelf holds jars of plum jam and a blue kettle lid",
        "we moved the kettle",
    ]
    queries = ["where is the blue kettle?", "kettle", "what hangs behind the door in the kitchen"]
    with _open(tmp_path / "m") as mem:
        for text in texts:
            mem.observe(text, user_id="u")

        def dense() -> list[dict[str, float]]:
            hits = [mem.remember(q, user_id="u", k=len(texts), reinforce=False) for q in queries]
            return [{r.id: r.signals["dense"] for r in found} for found in hits]

        waiting = dense()  # SLOW: nothing has reached Chroma yet
        mem.flush()
        stored = dense()
        assert [sorted(s) for s in stored] == [sorted(w) for w in waiting]
        assert stored == waiting  # identical, not approximately equal
