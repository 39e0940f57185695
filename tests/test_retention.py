"""Ebbinghaus retention, spaced reinforcement and the multi-factor rank against the memory's clock."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from ucma_core import Memory, RetentionConfig
from ucma_core.dynamics.retention import DAY, recency, reinforced_stability, retention

CFG = RetentionConfig()
times = st.floats(min_value=0, max_value=1e9, allow_nan=False)
stabilities = st.floats(min_value=0.01, max_value=1e4, allow_nan=False)


@given(stabilities, times, st.floats(min_value=0, max_value=1e7), st.floats(min_value=0, max_value=1e7))
def test_retention_is_monotone_decreasing_in_time(s: float, last: float, a: float, b: float) -> None:
    early, late = sorted((a, b))
    assert 0.0 <= retention(s, last, last + late) <= retention(s, last, last + early) <= 1.0


@given(stabilities, times, st.floats(min_value=0, max_value=1e8))
def test_reinforcement_never_lowers_stability(s: float, last: float, gap: float) -> None:
    assert reinforced_stability(s, last, last + gap, CFG) >= s


def test_formula_and_spacing_effect() -> None:
    assert retention(2.0, 0.0, 2 * DAY) == math.exp(-1.0)
    massed = spaced = 1.0
    t = 0.0
    for _ in range(4):  # four reviews an hour apart
        massed = reinforced_stability(massed, t, t + 3600, CFG)
        t += 3600
    t = 0.0
    for _ in range(4):  # four reviews five days apart
        spaced = reinforced_stability(spaced, t, t + 5 * DAY, CFG)
        t += 5 * DAY
    assert spaced > massed
    assert recency(0.0, 7 * DAY, 7.0) == 0.5


def test_use_reinforces_and_is_measured_on_the_memory_clock(mem: Memory, clock) -> None:
    memory_id = mem.observe("Ana's daughter starts school in September", user_id="ana", importance=0.8)
    assert memory_id is not None
    before = mem.get(memory_id)
    clock.advance(days=3)
    assert memory_id in [h.id for h in mem.remember("when does school start", user_id="ana")]
    read = mem.get(memory_id)  # a retrieval is counted, but it is not a rehearsal
    assert read.access_count == before.access_count + 1  # type: ignore[union-attr]
    assert (read.stability, read.last_access) == (before.stability, before.last_access)  # type: ignore[union-attr]
    assert mem.reinforce([memory_id], user_id="ana") == 1  # the app used it
    after = mem.get(memory_id)
    assert after.access_count == before.access_count + 2  # type: ignore[union-attr]
    assert after.stability == before.stability + CFG.stability_boost * 3  # type: ignore[union-attr]
    assert after.last_access == clock.now  # type: ignore[union-attr]
    assert mem.reinforce([memory_id], user_id="ben") == 0  # another user's memory is not there


def test_replayed_history_ranks_by_the_memory_clock_not_the_wall_clock(keep_all: Memory, clock) -> None:
    old = keep_all.observe("Ana's favourite cafe is Luna", timestamp=clock.now - 300 * DAY)
    new = keep_all.observe("Ana's favourite cafe is Sol", timestamp=clock.now - 1 * DAY)
    hits = keep_all.remember("Ana favourite cafe", k=2)
    assert [h.id for h in hits] == [new, old]
    assert hits[0].recency > hits[1].recency
    past = keep_all.remember("Ana favourite cafe", k=2, now=clock.now - 299 * DAY)
    # one event is a day old at that moment, the other has not happened yet (counts as 'now')
    assert sorted(round(h.recency, 4) for h in past) == [round(0.5 ** (1 / 7), 4), 1.0]
