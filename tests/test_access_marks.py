"""Access marks (:mod:`ucma_core.stores.accessmarks`): ``remember`` queues them and leaves
their write to a background thread, yet every read sees them at once, a close keeps them, and
so does a ``flush()`` before a kill -9."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from tests._persist_util import run_child
from ucma_core import Memory, MemoryConfig, RetentionConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, StorageError
from ucma_core.stores.accessmarks import AccessMarks

TEXTS = [
    "the blue kettle is on the top shelf of the pantry",
    "the red umbrella hangs behind the kitchen door",
    "the spare key is under the flower pot by the gate",
]


def _open(folder: Path) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))


def _count(mem: Memory, memory_id: str) -> int:
    record = mem.get(memory_id)
    assert record is not None
    return record.access_count


def test_every_read_sees_the_marks_of_the_remembers_before_it(tmp_path: Path) -> None:
    with _open(tmp_path / "m") as mem:
        ids = [mem.observe(t, user_id="u") for t in TEXTS]
        kettle = ids[0]
        assert kettle is not None and _count(mem, kettle) == 0
        for n in range(1, 4):
            assert mem.remember("where is the blue kettle?", user_id="u", k=1)[0].id == kettle
            assert _count(mem, kettle) == n  # at once, in the same process
        listed = {r.id: r.access_count for r in mem.list_memories(user_id="u")}
        assert listed[kettle] == 3
        assert mem.remember("blue kettle", user_id="u", k=1, reinforce=False)[0].id == kettle
        assert _count(mem, kettle) == 3  # reinforce=False marks nothing
        # marks of two remembers in a row, read by a write's own read afterwards
        mem.remember("blue kettle top shelf", user_id="u", k=1)
        mem.remember("kettle in the pantry", user_id="u", k=1)
        mem.observe("a fourth note about the garden hose", user_id="u")
        assert _count(mem, kettle) == 5


def test_marks_survive_close_and_a_kill_after_flush(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    mem = _open(folder)
    kettle = mem.observe(TEXTS[0], user_id="u")
    assert kettle is not None
    mem.remember("where is the blue kettle?", user_id="u", k=1)
    mem.remember("blue kettle on the shelf", user_id="u", k=1)
    mem.close()  # the queued marks are written first
    with _open(folder) as again:
        assert _count(again, kettle) == 2

    (seen,) = run_child(
        """
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))
top = [mem.remember("where is the blue kettle?", user_id="u", k=1)[0].id for _ in range(3)]
mem.flush()
emit(top)
os.kill(os.getpid(), 9)
""",
        folder,
        expect_rc=-signal.SIGKILL,
    )
    assert seen == [kettle] * 3
    with _open(folder) as again:
        assert _count(again, kettle) == 5


def test_queued_marks_are_written_in_the_background_and_kept_when_refused() -> None:
    lock = threading.RLock()
    written: list[tuple[str, float]] = []
    done = threading.Event()
    refuse = [True]

    def apply(marks: list[tuple[str, float]]) -> None:
        if refuse[0]:
            raise StorageError("disk full")
        written.extend(marks)
        done.set()

    marks = AccessMarks(apply, lock, delay=0.01)
    try:
        marks.add(["a", "b"], 1.0)
        with lock:
            assert marks.settle() is False  # refused: kept, in order, for the next try
            assert len(marks) == 2
            marks.add(["c"], 2.0)
            refuse[0] = False
        assert done.wait(60), "the background write never came"
        assert written == [("a", 1.0), ("b", 1.0), ("c", 2.0)]
        assert len(marks) == 0
    finally:
        marks.close()


def test_a_rewritten_text_is_read_anew_by_retrieval(tmp_path: Path) -> None:
    # retrieval keeps the texts it read (storage/textcache.py): a rewrite must reach it
    with _open(tmp_path / "m") as mem:
        mem.observe("the parcel for locker twelve arrived this morning", user_id="u")
        keyed = mem.upsert("k", "Thanks a lot!", user_id="u")
        first = {r.id: r for r in mem.remember("thanks a lot for the parcel", user_id="u", k=2)}
        assert "content_free" in first[keyed].signals  # says nothing: below the content
        mem.upsert("k", "Thanks a lot, the parcel went to locker twelve by the stairs", user_id="u")
        again = {r.id: r for r in mem.remember("thanks a lot for the parcel", user_id="u", k=2)}
        assert "content_free" not in again[keyed].signals
        assert again[keyed].content == "Thanks a lot, the parcel went to locker twelve by the stairs"


def test_a_script_that_never_closes_keeps_its_last_marks(tmp_path: Path) -> None:
    # The child makes the background write wait an hour, so only the exit can write its marks.
    folder = tmp_path / "m"
    (kettle, seen) = run_child(
        """
from ucma_core import RetentionConfig
config = MemoryConfig(importance_threshold=0.0, retention=RetentionConfig(access_mark_delay_seconds=3600.0))
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
emit(mem.observe("the blue kettle is on the top shelf of the pantry", user_id="u"))
emit([mem.remember("where is the blue kettle?", user_id="u", k=1)[0].id for _ in range(2)])
# no flush, no close: the interpreter simply exits
""",
        folder,
    )
    assert seen == [kettle] * 2
    with _open(folder) as again:
        assert _count(again, kettle) == 2


def test_the_exit_settle_leaves_closed_and_collected_memories_alone(tmp_path: Path) -> None:
    # A memory closed, and one dropped without close whose folder is then deleted: the
    # exit neither writes, nor hangs, nor fails; a collected memory is not kept alive.
    (alive,) = run_child(
        """
import gc, shutil, weakref
from ucma_core import RetentionConfig
config = MemoryConfig(importance_threshold=0.0, retention=RetentionConfig(access_mark_delay_seconds=3600.0))
closed = Memory(Path(sys.argv[1]) / "closed", embedder=HashingEmbedder(), config=config)
closed.observe("the red umbrella hangs behind the kitchen door", user_id="u")
closed.remember("red umbrella", user_id="u", k=1)
closed.close()
dropped = Memory(Path(sys.argv[1]) / "dropped", embedder=HashingEmbedder(), config=config)
dropped.observe("the spare key is under the flower pot", user_id="u")
dropped.remember("spare key", user_id="u", k=1)
ref = weakref.ref(dropped)
del dropped
gc.collect()
emit(ref() is not None)
gone = Memory(Path(sys.argv[1]) / "gone", embedder=HashingEmbedder(), config=config)
gone.observe("the blue kettle is on the top shelf", user_id="u")
gone.remember("blue kettle", user_id="u", k=1)
shutil.rmtree(Path(sys.argv[1]) / "gone")
""",
        tmp_path,
    )
    assert alive is False
    with _open(tmp_path / "closed") as again:
        assert [r.access_count for r in again.list_memories(user_id="u")] == [1]


def test_mark_writes_leave_the_graph_snapshot_to_the_next_write(tmp_path: Path) -> None:
    """A snapshot costs O(graph) under the memory's lock: a write of access marks (in the
    background, while a ``remember`` may wait for that lock) lets the journal grow to four
    times its usual length before it writes one; the next ordinary write folds it as usual."""
    folder = tmp_path / "m"
    config = MemoryConfig(importance_threshold=0.0, snapshot_every=1)
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        for text in TEXTS:
            mem.observe(text, user_id="u")
    journal = folder / "graph.journal.jsonl"
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        lengths = []
        for _ in range(3):  # 3 marks each: past the usual due count (3 nodes) from the first
            assert len(mem.remember("kettle umbrella key", user_id="u", k=3)) == 3
            mem.flush()  # writes the marks
            lengths.append(len(journal.read_bytes().splitlines()))
        assert lengths[0] > 0 and lengths == sorted(set(lengths)), lengths  # never folded
        mem.observe("the garden hose is coiled by the shed", user_id="u")
        assert journal.read_bytes() == b""  # the ordinary write wrote the snapshot


def test_one_writer_thread_serves_every_batch_and_ends_at_close() -> None:
    # a thread started per batch made remember wait for it to be scheduled (on a busy machine)
    lock = threading.RLock()
    batches: list[list[tuple[str, float]]] = []
    got = threading.Event()

    def apply(marks: list[tuple[str, float]]) -> None:
        batches.append(list(marks))
        got.set()

    def writers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "ucma-access-marks"}

    before = writers()
    marks = AccessMarks(apply, lock, delay=0.01)
    seen: set[threading.Thread] = set()
    try:
        for n in range(3):
            got.clear()
            marks.add([f"m{n}"], float(n))
            assert got.wait(60), "the background write never came"
            seen |= writers() - before
        assert batches == [[("m0", 0.0)], [("m1", 1.0)], [("m2", 2.0)]]
        assert len(seen) == 1, seen
    finally:
        marks.close()
    (thread,) = seen
    thread.join(60)
    assert not thread.is_alive()


def test_the_write_delay_is_a_checked_setting() -> None:
    assert RetentionConfig().access_mark_delay_seconds == 0.5
    assert RetentionConfig(access_mark_delay_seconds=0.0).access_mark_delay_seconds == 0.0
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ConfigurationError, match="access_mark_delay_seconds must be"):
            RetentionConfig(access_mark_delay_seconds=bad)
