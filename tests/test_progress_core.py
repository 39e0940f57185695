"""Progress from the core's long calls: ``observe_many`` per embedding batch and ``consolidate``
per phase and batch. Silent unless a reporter is given; a reporter's updates never go back and
end at the total."""

from __future__ import annotations

import threading
from collections import defaultdict
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.consolidation import PHASES
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ProviderError

DAY = 86_400.0


class Recorder:
    """A progress reporter that keeps every update."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, int, int]] = []

    def __call__(self, done: int, total: int, label: str) -> None:
        self.updates.append((label, done, total))

    def by_label(self) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for label, done, total in self.updates:
            found[label].append((done, total))
        return dict(found)


def assert_monotone_to_the_total(steps: list[tuple[int, int]]) -> None:
    totals = {total for _, total in steps}
    assert len(totals) == 1 and totals.pop() > 0, steps
    done = [d for d, _ in steps]
    assert done == sorted(done), steps
    assert done[-1] == steps[-1][1], steps


def test_observe_many_reports_each_embedding_batch(mem: Memory) -> None:
    bar = Recorder()
    items = [f"Note {n}: the build on branch {n} passed." for n in range(600)]
    ids = mem.observe_many(items, keep=True, user_id="ana", progress=bar)
    assert len(ids) == 600 and all(ids)
    steps = bar.by_label()["observe"]
    assert_monotone_to_the_total(steps)
    assert steps == [(0, 600), (256, 600), (512, 600), (599, 600), (600, 600)]
    assert {label for label, _, _ in bar.updates} == {"observe"}


def test_observe_many_counts_items_not_kept_and_views_pass_progress_on(mem: Memory) -> None:
    bar = Recorder()
    items = ["ok", {"content": "I moved to Lisbon in May.", "keep": True}]
    ids = mem.scope(user_id="ana").observe_many(items, progress=bar)
    assert ids[0] is None and ids[1] is not None
    assert_monotone_to_the_total(bar.by_label()["observe"])
    assert bar.updates[-1] == ("observe", 2, 2)


class FailsOnSecondCall:
    """An embedder whose second call fails (the first batch embeds, the second does not)."""

    name = "fails-on-second-call"
    dimension = 64

    def __init__(self) -> None:
        self.calls = 0
        self._inner = HashingEmbedder(64)

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == 2:
            raise ProviderError("the embedding service went away")
        return self._inner.embed(texts)


def test_a_failed_observe_many_stores_nothing_and_never_reports_the_total(folder: Path) -> None:
    bar = Recorder()
    with Memory(folder, embedder=FailsOnSecondCall()) as mem:
        with pytest.raises(ProviderError):
            mem.observe_many([f"Note {n}" for n in range(300)], keep=True, progress=bar)
        assert mem.stats()["memories"] == 0
    assert bar.updates and all(done < total for _, done, total in bar.updates)


def _weeks(memory: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    for day in range(6):
        memory.observe_many(
            [
                f"Day {day}: I went hiking in the Alps with my sister.",
                f"Day {day}: the build failed until I cleared the cache.",
                "I live in Lisbon now.",
            ],
            user_id="ana",
            session_id=f"s{day}",
        )
        clock.advance(days=1)
    clock.advance(days=10)


def test_consolidate_reports_every_phase_to_its_total(keep_all: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    _weeks(keep_all, clock)
    bar = Recorder()
    report = keep_all.consolidate(progress=bar)
    assert not report.interrupted and report.errors == []
    steps = bar.by_label()
    assert list(steps) == [f"consolidate {phase}" for phase in PHASES]  # in the cycle's order
    for phase_steps in steps.values():
        assert_monotone_to_the_total(phase_steps)
    assert len(steps["consolidate patterns"]) > 2  # per episode
    assert steps["consolidate merge"] == [(0, 1), (1, 1)]  # per user: only Ana here
    assert steps["consolidate extract"][0] == (0, 1)  # one batch of episodes
    assert steps["consolidate reinforce"] == [(1, 1)]  # nothing to count: one unit, done


def test_consolidate_is_silent_by_default(keep_all: Memory, clock, capsys) -> None:  # type: ignore[no-untyped-def]
    _weeks(keep_all, clock)
    keep_all.consolidate()
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "")


def test_a_stopped_cycle_leaves_progress_short_of_the_total(folder: Path, clock) -> None:  # type: ignore[no-untyped-def]
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        _weeks(mem, clock)
        stop = threading.Event()
        seen: list[tuple[str, int, int]] = []

        def halt_in_patterns(done: int, total: int, label: str) -> None:
            seen.append((label, done, total))
            if label == "consolidate patterns" and done == 3:
                stop.set()

        report = mem.consolidate(stop=stop, progress=halt_in_patterns)
        assert report.interrupted
        assert seen[-1][:2] == ("consolidate patterns", 3) and seen[-1][2] > 3
        assert {label for label, _, _ in seen} == {
            "consolidate compress",
            "consolidate group",
            "consolidate extract",
            "consolidate patterns",
        }
        # the next cycle finishes the job and reaches every total
        bar = Recorder()
        mem.consolidate(progress=bar)
        for steps in bar.by_label().values():
            assert_monotone_to_the_total(steps)


async def test_the_async_partners_take_progress_too(mem: Memory) -> None:
    bar = Recorder()
    await mem.aobserve_many(["I moved to Lisbon in May."], keep=True, progress=bar)
    await mem.aconsolidate(phases=["extract"], progress=bar)
    assert bar.updates[-1] == ("consolidate extract", 1, 1)
    assert ("observe", 1, 1) in bar.updates
