"""A background cadence cycle is a thread of the memory's (:mod:`ucma_core.background`):
``close()`` and the interpreter's exit ask it to stop between two steps and wait for it, so
the folder closes with each step applied whole and the next cycle resumes where it stopped.

The cycle is held inside its first model call (``extract_facts``) by an event; an
attachment (closed, or asked to store, before the memory's folder is) lets it go. By then
the close has asked the cycle to stop: it applies the batch it holds and stops before the
next one. Nothing here races on time: every wait is for an event.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from tests._persist_util import journal_lines, run_child
from ucma_core import ConsolidationConfig, Memory, MemoryConfig
from ucma_core.conversation import Cadence
from ucma_core.embedders import HashingEmbedder
from ucma_core.providers import OfflineProvider
from ucma_core.providers.protocols import ExtractedFact

#: Two episodes per batch of the ``extract`` phase: four episodes make two batches.
CONFIG = MemoryConfig(importance_threshold=0.0, consolidation=ConsolidationConfig(batch_size=2))
TEXTS = [f"locker {n} is on floor {n}" for n in range(4)]


class HeldProvider(OfflineProvider):
    """Offline answers; its first ``extract_facts`` call waits until ``release`` is set."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release
        self.entered = threading.Event()
        self.calls = 0

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            self.release.wait()
        return [[ExtractedFact(text.split(" is ")[0], "is", text.split(" is ")[1], 0.9)] for text in texts]


class Releaser:
    """An attachment that lets the held model call go when the memory stores or closes
    its attachments (optionally waiting, when storing, for the cadence's cycle to end)."""

    name = "cycle-releaser"

    def __init__(self, release: threading.Event, cadence: Cadence | None = None) -> None:
        self.release = release
        self.cadence = cadence

    def files(self) -> Sequence[Path]:
        return ()

    def flush(self, timeout: float | None = None) -> bool:
        self.release.set()
        return self.cadence is None or self.cadence.wait(timeout)

    def close(self) -> None:
        self.release.set()

    def forget_user(self, user_id: str) -> None:
        pass

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        pass

    def verify(self) -> Sequence[str]:
        return ()


def seed(mem: Memory) -> list[str]:
    """Four episodes, oldest first (the order the cycle takes them in)."""
    ids = []
    for text in TEXTS:
        memory_id = mem.observe(text, user_id="ana", keep=True)
        assert memory_id is not None
        ids.append(memory_id)
    return ids


def fact_sources(mem: Memory) -> set[str]:
    """The episodes the stored facts were extracted from."""
    return {
        i for fact in mem.list_memories(user_id="ana", memory_types=["semantic"]) for i in fact.source_ids
    }


def reopen_and_resume(target: Path | str, episodes: list[str], config: MemoryConfig = CONFIG) -> None:
    """The memory holds the first batch's facts only, is consistent, and the next cycle
    extracts the rest."""
    released = threading.Event()
    released.set()
    with Memory(target, embedder=HashingEmbedder(), provider=HeldProvider(released), config=config) as again:
        assert again.verify().ok
        assert fact_sources(again) == set(episodes[:2])  # the first batch, whole; nothing of the second
        report = again.consolidate()
        assert report.phases["extract"] == {"facts": 2, "episodes": 2}
        assert fact_sources(again) == set(episodes)


def test_close_stops_a_running_cadence_cycle_between_batches_and_waits_for_it(tmp_path: Path) -> None:
    release = threading.Event()
    provider = HeldProvider(release)
    mem = Memory(tmp_path, embedder=HashingEmbedder(), provider=provider, config=CONFIG)
    episodes = seed(mem)
    mem.attach(Releaser(release))
    cadence = Cadence(1, background=True)
    assert cadence.tick(mem) is None  # started in the background
    assert provider.entered.wait(60)
    assert mem.consolidation_running
    mem.close()
    assert cadence.wait(timeout=0)  # the cycle ended before close() returned
    report = cadence.last_report
    assert cadence.last_error is None and report is not None
    assert report.interrupted and report.phases["extract"] == {"facts": 2, "episodes": 2}
    assert provider.calls == 1  # the second batch never reached the model
    reopen_and_resume(tmp_path, episodes)


def test_stop_consolidation_stops_a_cadence_cycle_and_the_next_due_turn_starts_one(tmp_path: Path) -> None:
    release = threading.Event()
    provider = HeldProvider(release)
    with Memory(tmp_path, embedder=HashingEmbedder(), provider=provider, config=CONFIG) as mem:
        episodes = seed(mem)
        cadence = Cadence(1, background=True)
        cadence.tick(mem)
        assert provider.entered.wait(60)
        stopper = threading.Thread(target=mem.stop_consolidation)
        stopper.start()
        release.set()  # before or after the stop was asked: either way the cycle ends
        stopper.join()
        assert not mem.consolidation_running and cadence.wait(timeout=0)
        cadence.tick(mem)  # not closed: the next due turn runs a cycle
        assert cadence.wait(timeout=60)
        assert cadence.last_report is not None and not cadence.last_report.interrupted
        assert fact_sources(mem) == set(episodes)


CHILD = """
import threading
from tests.test_cadence_close import CONFIG, HeldProvider, Releaser, seed
from ucma_core.conversation import Cadence

release = threading.Event()
provider = HeldProvider(release)
mem = Memory(sys.argv[1], embedder=HashingEmbedder(), provider=provider, config=CONFIG)
emit(seed(mem))
cadence = Cadence(1, background=True)
mem.attach(Releaser(release, cadence))  # the exit asks it to store: the model call goes on
cadence.tick(mem)
assert provider.entered.wait(60)
# no close: the script ends while the cycle waits for the model
"""


def test_a_script_that_ends_during_a_cadence_cycle_leaves_a_clean_folder(tmp_path: Path) -> None:
    stderr: list[str] = []
    (episodes,) = run_child(CHILD, tmp_path, timeout=180.0, stderr=stderr)
    assert "UCMA" not in stderr[0]  # no "left ... as a crash would", no failed step
    assert journal_lines(tmp_path) == []  # closed: the graph was folded into its snapshot
    reopen_and_resume(tmp_path, episodes)
