"""A worker on a memory in PostgreSQL that ends without ``close()`` commits what it kept
(:mod:`ucma_core.shutdown`): the reader marks of its ``remember`` calls, which a plain
``Memory(url)`` keeps until its next write; a worker a thread still holds is left as a crash
leaves it, and the others are closed all the same."""

from __future__ import annotations

import dataclasses
import threading

from tests._persist_util import run_child
from tests.postgres.conftest import Servers
from tests.test_cadence_close import CONFIG, HeldProvider, Releaser, reopen_and_resume, seed
from ucma_core import Memory
from ucma_core.conversation import Cadence
from ucma_core.embedders import HashingEmbedder


def test_a_worker_that_never_closes_keeps_its_reader_marks(servers: Servers) -> None:
    url = servers.url()
    kettle, seen = run_child(
        """
from ucma_core import ChromaConfig
config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(sys.argv[2])), importance_threshold=0.0)
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
emit(mem.observe("the blue kettle is on the top shelf of the pantry", user_id="u"))
emit([mem.remember("where is the blue kettle?", user_id="u", k=1)[0].id for _ in range(2)])
# only reads since the last write, no close: the interpreter simply exits
""",
        url,
        servers.chroma_port,
    )
    assert seen == [kettle] * 2
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as again:
        record = again.get(kettle)
        assert record is not None and record.access_count == 2


def test_a_worker_held_by_a_thread_at_exit_is_left_as_a_crash_leaves_it_and_the_others_close(
    servers: Servers,
) -> None:
    # The newest memory is held by a daemon thread that never returns (its embedder blocks
    # inside assert_fact, under the memory's write lock): the exit gives up on it after its
    # bounded wait, says so, and still closes the older memory with its reader marks.
    closed, busy = servers.url(), servers.url()
    stderr: list[str] = []
    (kettle,) = run_child(
        """
import threading
from ucma_core import ChromaConfig
config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(sys.argv[3])), importance_threshold=0.0)
inside = threading.Event()

class Stuck(HashingEmbedder):
    def embed(self, texts):
        if any("cellar" in text for text in texts):
            inside.set()
            threading.Event().wait()
        return super().embed(texts)

first = Memory(sys.argv[1], embedder=HashingEmbedder(), config=config)
kettle = first.observe("the blue kettle is on the top shelf of the pantry", user_id="u")
emit(kettle)
first.remember("where is the blue kettle?", user_id="u", k=1)
held = Memory(sys.argv[2], embedder=Stuck(), config=config)
for n in range(3):
    held.observe(f"jar {n} of plum jam", user_id="u")
threading.Thread(target=held.assert_fact, args=("Ana", "keeps", "the cellar key"), kwargs={"user_id": "u"},
                 daemon=True).start()
assert inside.wait(60)
# no close: the interpreter exits while the thread holds `held`
""",
        closed,
        busy,
        servers.chroma_port,
        timeout=120.0,
        stderr=stderr,
    )
    assert "as a crash would at exit" in stderr[0]
    with Memory(closed, embedder=HashingEmbedder(), config=servers.config()) as again:
        record = again.get(kettle)
        assert record is not None and record.access_count == 1  # the exit committed its mark
    with Memory(busy, embedder=HashingEmbedder(), config=servers.config()) as again:
        # nothing acknowledged is lost; the fact whose call never returned was never stored
        jars = [f"jar {n} of plum jam" for n in range(3)]
        assert sorted(m.content for m in again.list_memories(user_id="u")) == jars
        assert sorted(h.content for h in again.remember("jar of plum jam", user_id="u", k=3)) == jars
        assert again.verify().ok


def test_close_stops_a_workers_cadence_cycle_between_batches(servers: Servers) -> None:
    # As in a folder (tests/test_cadence_close.py): the cycle holds the memory's job lock
    # in PostgreSQL, and close() waits for it to stop before the worker lets go.
    url = servers.url()
    config = dataclasses.replace(
        servers.config(), importance_threshold=0.0, consolidation=CONFIG.consolidation
    )
    release = threading.Event()
    provider = HeldProvider(release)
    mem = Memory(url, embedder=HashingEmbedder(), provider=provider, config=config)
    episodes = seed(mem)
    mem.attach(Releaser(release))
    cadence = Cadence(1, background=True)
    cadence.tick(mem)
    assert provider.entered.wait(60)
    mem.close()
    assert cadence.wait(timeout=0)
    report = cadence.last_report
    assert cadence.last_error is None and report is not None and report.interrupted
    assert provider.calls == 1
    reopen_and_resume(url, episodes, config)
