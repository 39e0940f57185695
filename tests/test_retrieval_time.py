"""Time as evidence, not a filter: graded edges, vague recency, anchors, a memory's own dates.

Every test goes through ``Memory.remember`` on the hashing embedder, with the clock on
Wednesday 2025-06-18 15:00 UTC.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

DAY = 86_400.0
NOW = datetime(2025, 6, 18, 15, 0, tzinfo=timezone.utc).timestamp()


def _at(month: int, day: int, hour: int = 12, year: int = 2025) -> float:
    return datetime(year, month, day, hour, tzinfo=timezone.utc).timestamp()


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        clock=lambda: NOW,
        config=MemoryConfig(importance_threshold=0.0),
    ) as m:
        yield m


def _chatter(mem: Memory, at: float, n: int = 12, session: str = "chat") -> None:
    for i in range(n):
        mem.observe(
            f"small talk number {i} about the weather and lunch", timestamp=at + i * 60, session_id=session
        )


def _ids(hits: list) -> list[str]:
    return [h.id for h in hits]


def test_a_misread_time_costs_little(mem: Memory) -> None:
    boiler = mem.observe("the plumber says the boiler valve needs replacing", timestamp=NOW - 60 * DAY)
    _chatter(mem, NOW - DAY)  # a busy yesterday that has nothing to do with the boiler
    hits = mem.remember("what did the plumber say about the boiler valve yesterday?", k=5)
    assert hits[0].id == boiler  # the range is wrong for it, the words are right
    assert "time" not in hits[0].signals
    assert all(h.route.kind == "temporal" and h.route.reason.startswith("time: yesterday") for h in hits)


def test_a_right_time_still_wins_big(mem: Memory) -> None:
    march = mem.observe("update on the kitchen tiles: the grout is cracking", timestamp=_at(3, 12))
    mem.observe("update on the kitchen tiles: the grout is cracking again", timestamp=_at(5, 20))
    mem.observe("update on the kitchen tiles: the grout was redone", timestamp=_at(1, 8))
    hits = mem.remember("what was the update on the kitchen tiles in March?", k=3)
    assert hits[0].id == march and hits[0].signals["time"] == 1.0
    assert len(hits) == 3  # nothing was filtered out


def test_a_memory_just_outside_the_range_still_scores(mem: Memory) -> None:
    told_after = mem.observe(
        "finally repainted the hallway sage green at the weekend", timestamp=_at(4, 1, 9)
    )
    mem.observe("finally repainted the hallway sage green, second coat", timestamp=_at(5, 20))
    hits = mem.remember("what colour did I paint the hallway in March?", k=2)
    assert hits[0].id == told_after
    assert 0.5 < hits[0].signals["time"] < 1.0  # graded edge: told the morning after March ended


def test_vague_recency_prefers_the_newest_match_weeks_back(mem: Memory) -> None:
    mem.observe("the sourdough starter smells like old socks", timestamp=_at(1, 5))
    mem.observe("my sourdough loaf came out flat as a pancake", timestamp=_at(2, 20))
    latest = mem.observe("finally a sourdough loaf with an open crumb", timestamp=_at(4, 28))
    _chatter(mem, NOW - 3 * DAY)  # the last two weeks hold only small talk
    hits = mem.remember("how is my sourdough going lately?", k=5)
    assert hits[0].id == latest
    assert hits[0].route.reason.startswith("recency: 'lately'")
    assert sum("sourdough" in h.content for h in hits) == 3  # older mentions are not filtered out


def test_before_and_after_include_the_events_own_session(mem: Memory) -> None:
    day = _at(5, 11, 9)
    worry = mem.observe(
        "honestly I'm scared my left calf cramps at kilometre fifteen", timestamp=day + 600, session_id="race"
    )
    anchor = mem.observe(
        "the half marathon is on Sunday, my kit is laid out", timestamp=day, session_id="race"
    )
    mem.observe(
        "my calf cramped at five-a-side, hopping like an idiot", timestamp=_at(6, 10), session_id="later"
    )
    hits = mem.remember("what was I worried about before the half marathon?", k=3)
    assert hits[0].id == worry
    assert anchor != hits[0].id
    assert "its day and session count as before it" in hits[0].route.reason


def test_a_date_in_the_question_anchors_its_relative_phrase(mem: Memory) -> None:
    grant = mem.observe(
        "submitted the grant application one minute before the deadline", timestamp=_at(3, 3, 17)
    )
    mem.observe("submitted the grant report for the other project", timestamp=_at(6, 16, 10))  # last Monday
    hits = mem.remember("what did I submit last Monday, on 3 March?", k=2)
    assert hits[0].id == grant
    assert "the date given anchoring 'last Monday'" in hits[0].route.reason


def test_the_weekend_before_a_date(mem: Memory) -> None:
    weekend = mem.observe("spent today repainting the garden fence", timestamp=_at(6, 7, 15))  # Saturday
    mem.observe("spent today repainting the garden fence, round two", timestamp=_at(6, 12, 18))  # Thursday
    hits = mem.remember("what did I repaint the weekend before 12 June?", k=2)
    assert hits[0].id == weekend


def test_a_memorys_own_time_words_are_read_against_its_timestamp(mem: Memory) -> None:
    pottery = mem.observe(
        "I took up pottery back in 2023 and still can't centre the clay", timestamp=_at(2, 1)
    )
    mem.observe("last year I took up bouldering, my forearms hate me", timestamp=_at(3, 1))
    mem.observe("I took up the drums when I was fifteen, for a month", timestamp=_at(4, 1))
    hits = mem.remember("what did I take up two years ago?", k=3)
    assert hits[0].id == pottery and hits[0].signals["time"] == 1.0
    assert "no memory is dated then" in hits[0].route.reason


def test_a_relative_phrase_in_an_old_memory_counts_from_that_memorys_date(mem: Memory) -> None:
    told_2023 = mem.observe("we moved to Porto two years ago, for the job", timestamp=_at(6, 1, year=2023))
    told_2025 = mem.observe("we moved to Porto two years ago, for the school", timestamp=_at(6, 1))
    hits = mem.remember("where did we move in 2021?", k=2)
    assert [h.id for h in hits] == [told_2023, told_2025]  # 2023 - 2 years, not 2025 - 2
    assert hits[0].signals["time"] == 1.0 and "time" not in hits[1].signals


def test_vague_counts_are_read_loosely(mem: Memory) -> None:
    sail = mem.observe("I learned to sail a few years ago on the lake", timestamp=_at(6, 1))
    mem.observe("I learned to knit on the lake a while back", timestamp=_at(6, 2))
    for question in ("what did I learn on the lake in 2021?", "what did I learn on the lake in 2022?"):
        hits = mem.remember(question, k=2)
        assert hits[0].id == sail and hits[0].signals["time"] > 0  # "a few" is two to five years


def test_an_empty_range_falls_back_and_keeps_its_words(mem: Memory) -> None:
    cabin = mem.observe("for my birthday last year we rented a cabin with a hot tub", timestamp=_at(2, 2))
    mem.observe("no idea what to do for my birthday this time", timestamp=_at(6, 1))
    mem.observe("my sister's birthday is next week and I have no present", timestamp=_at(6, 10))
    hits = mem.remember("what did I do for my birthday last year?", k=3)
    assert hits[0].id == cabin  # the words "last year" are searched too, and the memory says them
    assert len(hits) == 3


def test_imported_history_keeps_its_dates_and_fades_from_the_import(tmp_path: Path) -> None:
    clock = {"t": NOW + 30 * DAY}  # imported a month after the last event
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        clock=lambda: clock["t"],
        config=MemoryConfig(importance_threshold=0.0),
    ) as mem:
        old = mem.observe("we adopted a grey cat called Pebble", timestamp=NOW - 200 * DAY)
        new = mem.observe("Pebble learned to open the fridge", timestamp=NOW - DAY)
        records = {i: mem.get(i) for i in (old, new)}
        assert records[old].timestamp == pytest.approx(NOW - 200 * DAY)  # type: ignore[union-attr]
        assert records[old].last_access == records[new].last_access == clock["t"]  # type: ignore[union-attr]
        hits = {h.id: h for h in mem.remember("Pebble the cat", k=2, now=NOW)}
        assert hits[new].recency > hits[old].recency  # asked in the past, the dates still count
        assert hits[old].retention == hits[new].retention == 1.0  # neither has faded: both just imported
