"""Crash safety of every multi-record operation: a writer process is killed with SIGKILL at a
random moment, or crashes at a chosen point between the stores; after reopening, every
acknowledged write is there, no operation is half done, and a forgotten user leaves no
bytes in the folder.

The default run samples a few operations and crash points; the ``slow`` test runs every
operation and every crash point (set ``UCMA_FAULT_SEED`` to explore other kill moments);
``python -m benchmarks.faults_report`` runs as many trials as asked and prints the table.
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from tests.faults.scenarios import POINTS_FOR, SCENARIOS, crash_trial, kill_trial, table

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

SEED = int(os.environ.get("UCMA_FAULT_SEED", "20250611"))

FAST_KILLS = ["observe_many", "assert_fact(exclusive)", "forget_user", "consolidate(group)"]
FAST_POINTS = [
    ("observe_many", "before commit"),
    ("assert_fact(exclusive)", "after Chroma write"),
    ("upsert", "after Chroma replace"),
    ("forget", "after Chroma delete"),
    ("forget_user", "after collection copy"),
    ("consolidate(extract)", "before commit"),
]


@pytest.mark.parametrize("name", FAST_KILLS)
def test_kill_at_a_random_moment_loses_nothing_and_leaves_nothing_half_done(
    name: str, tmp_path: Path
) -> None:
    out = kill_trial(name, tmp_path, random.Random(f"{SEED}-{name}"))
    assert out.clean, (out, "\n".join(out.detail))


@pytest.mark.parametrize(("name", "point"), FAST_POINTS)
def test_crash_between_the_stores_is_undone_or_finished(name: str, point: str, tmp_path: Path) -> None:
    out = crash_trial(name, point, tmp_path)
    assert out.clean, (out, "\n".join(out.detail))
    assert "the crash point was not reached" not in out.detail


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_every_operation_survives_kills_and_crashes_at_every_point(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outcomes = []
    n = 0
    for name in SCENARIOS:
        for _ in range(2):
            n += 1
            outcomes.append(kill_trial(name, tmp_path / f"k{n}", rng))
        for point in POINTS_FOR[name]:
            n += 1
            outcomes.append(crash_trial(name, point, tmp_path / f"c{n}", skip=n % 2))
    print("\n" + table(outcomes))
    bad = [o for o in outcomes if not o.clean]
    assert not bad, "\n".join(f"{o.operation} / {o.fault}: {o.detail}" for o in bad)
