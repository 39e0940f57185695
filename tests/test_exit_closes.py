"""A script that ends without ``close()`` gets what ``close()`` does (:mod:`ucma_core.shutdown`).

Each test runs a child interpreter that opens a memory folder, uses it and simply ends (no
``flush``, no ``close``); the test then opens the folder again. The child makes the background
writes wait (access marks an hour, group commit a minute), so only the exit can do them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._persist_util import run_child
from tests.test_vector_index_saved import files_with, index_files
from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

#: Prepended to every child: background writes wait far longer than the child lives.
SLOW_BACKGROUND = """
from ucma_core import GroupCommitConfig, RetentionConfig
slow = GroupCommitConfig(batch_size=1000, interval_seconds=60)
late = RetentionConfig(access_mark_delay_seconds=3600.0)
config = MemoryConfig(importance_threshold=0.0, group_commit=slow, retention=late)
"""


def _open(folder: Path) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))


@pytest.mark.slow  # another folder of 150 long texts goes through the child
def test_a_plain_exit_saves_the_index_writes_the_buffer_and_keeps_the_marks(tmp_path: Path) -> None:
    folder = tmp_path / "bob"
    notes, kettle = run_child(
        SLOW_BACKGROUND
        + """
from tests.test_vector_index_saved import handle_saffron_elsewhere
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
emit([mem.observe(f"Bob's note {n} about tea and biscuits", user_id="bob") for n in range(20)])
kettle = mem.observe("the blue kettle is on the top shelf of the pantry", user_id="bob")
emit(kettle)
assert [mem.remember("where is the blue kettle?", user_id="bob", k=1)[0].id for _ in range(2)] == [kettle] * 2
handle_saffron_elsewhere(Path(sys.argv[2]))  # her text passes through this process's buffers
# no flush, no close: the interpreter simply exits
""",
        folder,
        tmp_path / "ana",
    )
    index = index_files(folder)
    assert index
    assert files_with(folder, b"saffron") == []  # the bytes Chroma wrote unzeroed were cleared
    with _open(folder) as again:
        # the buffer went to Chroma at exit: the open had nothing to add from the journal
        assert not [note for note in again.verify().notes if "waiting for their Chroma write" in note]
        assert {h.id for h in again.remember("tea biscuits", k=20, user_id="bob")} >= set(notes)
        record = again.get(kettle)
        assert record is not None and record.access_count == 2
        assert index_files(folder) == index  # the index was loaded, not built again
        assert files_with(folder, b"saffron") == []


def test_a_thread_still_holding_one_memory_leaves_it_and_the_others_are_closed(tmp_path: Path) -> None:
    # The newest memory is held by a daemon thread that never returns (a rekey whose progress
    # callback blocks): the exit gives up on it after its bounded wait, says so, and still
    # closes the older memory.
    closed, busy = tmp_path / "closed", tmp_path / "busy"
    (kettle,) = run_child(
        SLOW_BACKGROUND
        + """
import threading
first = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
kettle = first.observe("the blue kettle is on the top shelf of the pantry", user_id="u")
emit(kettle)
first.remember("where is the blue kettle?", user_id="u", k=1)
held = Memory(sys.argv[2], embedder=HashingEmbedder(), config=config)
for n in range(3):
    held.observe(f"jar {n} of plum jam", user_id="u")
inside = threading.Event()

def block(done, total, label):
    inside.set()
    threading.Event().wait()

threading.Thread(target=held.rekey, kwargs={"progress": block}, daemon=True).start()
assert inside.wait(60)
# no close: the interpreter exits while the thread holds `held`
""",
        closed,
        busy,
        timeout=120.0,
    )
    with _open(closed) as again:
        record = again.get(kettle)
        assert record is not None and record.access_count == 1
    with _open(busy) as again:  # left as a crash leaves it: nothing acknowledged lost
        assert sorted(m.content for m in again.list_memories(user_id="u")) == [
            f"jar {n} of plum jam" for n in range(3)
        ]


def test_turns_a_writer_still_holds_are_embedded_at_exit_by_minilm_on_several_threads(tmp_path: Path) -> None:
    # The interpreter refuses new thread-pool work once its exit began; MiniLM's parallel
    # runs (two threads, five batches here) must still embed what the writer holds.
    from ucma_core.embedders import LocalMiniLMEmbedder

    run_child(
        """
from ucma_core.conversation import ChatTurn, WriteBehind
from ucma_core.embedders import LocalMiniLMEmbedder
mem = Memory(sys.argv[1], embedder=LocalMiniLMEmbedder(batch_size=2, threads=2))
writer = WriteBehind(mem, linger=30.0)
turns = [ChatTurn("user", f"my locker number {n} is by the stairs", message_id=f"m{n}") for n in range(10)]
writer.submit(turns, user_id="ana")
# no flush, no close: the interpreter simply exits
""",
        tmp_path,
        timeout=180.0,
    )
    with Memory(tmp_path, embedder=LocalMiniLMEmbedder()) as mem:
        assert sorted(m.content for m in mem.list_memories(user_id="ana")) == sorted(
            f"my locker number {n} is by the stairs" for n in range(10)
        )


def test_a_forked_child_that_exits_leaves_its_parents_memory_open(tmp_path: Path) -> None:
    # Closing releases the folder's lock, which a forked child shares with its parent: the
    # child's exit must not close the parent's memory, or a second process could open it.
    (locked,) = run_child(
        """
import subprocess
mem = Memory(sys.argv[1], embedder=HashingEmbedder())
mem.observe("the blue kettle is on the top shelf of the pantry", user_id="u")
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit of the child: it runs the exit hooks
os.waitpid(pid, 0)
opener = "import sys; from ucma_core import Memory; from ucma_core.embedders import HashingEmbedder; "
opener += "Memory(sys.argv[1], embedder=HashingEmbedder())"
other = subprocess.run([sys.executable, "-c", opener, sys.argv[1]], capture_output=True, text=True)
emit("MemoryLockedError" in other.stderr)
mem.observe("the red umbrella hangs behind the kitchen door", user_id="u")
""",
        tmp_path,
    )
    assert locked
    with _open(tmp_path) as again:
        assert len(again.list_memories(user_id="u")) == 2
