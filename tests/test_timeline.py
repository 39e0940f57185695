"""The episode indexes' time line reads exactly as a sorted list of ``(timestamp, id)`` tuples."""

from __future__ import annotations

import bisect

from hypothesis import given, settings
from hypothesis import strategies as st

from ucma_core.stores.timeline import TimeLine

PAIRS = st.tuples(st.sampled_from([0.0, 1.5, 2.0, 1e9, -3.25]), st.sampled_from(["a", "b", "c", "d0", "z"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), PAIRS), max_size=40), PAIRS, PAIRS)
def test_time_line_matches_a_sorted_list_of_tuples(
    steps: list[tuple[bool, tuple[float, str]]], probe: tuple[float, str], upper: tuple[float, str]
) -> None:
    line, model = TimeLine(), []
    for add, (stamp, memory_id) in steps:
        if add:
            if (stamp, memory_id) not in model:  # an episode is indexed once
                line.insert(stamp, memory_id)
                bisect.insort(model, (stamp, memory_id))
        else:
            was = (stamp, memory_id) in model
            assert line.remove(stamp, memory_id) is was
            if was:
                model.remove((stamp, memory_id))
        assert list(line) == model and len(line) == len(model)
    assert line.position(*probe) == bisect.bisect_left(model, probe)
    assert line.ids() == [memory_id for _, memory_id in model]
    start, end = sorted((probe[0], upper[0]))
    assert line.between(start, end) == [i for t, i in model if start <= t <= end]
    if model:
        assert line[0] == model[0] and line[-1] == model[-1] and line[1:] == model[1:]
