"""An imported history keeps what it says through the first sleep cycle: forgetting starts
from the import, not from each turn's old date."""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma_core import Memory
from ucma_core.dynamics.retention import DAY
from ucma_core.embedders import HashingEmbedder

_PEOPLE = ("Ana", "Ben", "Carla", "Dev", "Eli")
_THINGS = (
    "the garden",
    "a pottery class",
    "the new job",
    "a trip to Lisbon",
    "the dog",
    "a half marathon",
    "the kitchen repairs",
    "a book club",
    "the piano lessons",
    "a camping weekend",
)
_VERBS = (
    "talked about",
    "planned",
    "worried about",
    "finished",
    "started",
    "laughed about",
    "booked",
    "asked about",
)


def _turns(n: int, now: float) -> list[dict[str, object]]:
    """``n`` distinct turns spread evenly over the year before ``now``, 20 per session."""
    return [
        {
            "content": f"{_PEOPLE[i % 5]} {_VERBS[i % 8]} {_THINGS[(i // 8) % 10]} on visit {i}",
            "timestamp": now - 365 * DAY + i * (364 * DAY / n),
            "session_id": f"s{i // 20}",
            "participants": [_PEOPLE[i % 5]],
        }
        for i in range(n)
    ]


@pytest.mark.slow
def test_an_imported_year_of_turns_survives_one_default_sleep_cycle(folder: Path, clock) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        ids = [i for i in mem.observe_many(_turns(500, clock.now), user_id="ana") if i is not None]
        assert len(ids) >= 400  # most turns are worth storing
        mem.consolidate()
        kept = sum(mem.get(i) is not None for i in ids)
    assert kept >= 0.95 * len(ids), f"kept {kept} of {len(ids)}"


def test_an_old_turn_starts_its_retention_clock_when_stored(mem: Memory, clock) -> None:
    memory_id = mem.observe("Ana booked a trip to Lisbon", user_id="ana", timestamp=clock.now - 300 * DAY)
    assert memory_id is not None
    record = mem.get(memory_id)
    assert record is not None
    assert record.timestamp == clock.now - 300 * DAY  # what the turn says about its time stays
    assert record.last_access == clock.now  # forgetting counts from the import
    assert mem.prune(dry_run=True).forgotten == ()
    clock.advance(days=400)  # unused for longer than its stability: it fades after all
    assert memory_id in mem.prune(dry_run=True).forgotten
