"""Kill -9 at random points of a LangGraph run with the mirror in the background: after
reopening, every checkpointed message is in the memory exactly once.

``python -m benchmarks.faults_report --langgraph-kills N`` runs more trials and prints the
table; ``UCMA_FAULT_SEED`` explores other kill moments.
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from tests.faults.langgraph_trials import behind, kill_run_trial
from tests.faults.scenarios import table

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
    pytest.mark.slow,
]

SEED = int(os.environ.get("UCMA_FAULT_SEED", "20251126"))


@pytest.mark.timeout(900)
def test_killed_langgraph_runs_lose_and_duplicate_no_message(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    outcomes = [kill_run_trial(tmp_path / f"k{n}", rng) for n in range(3)]
    print("\n" + table(outcomes) + f"\nrecovered from the outbox on reopen: {behind(outcomes)} messages")
    bad = [o for o in outcomes if not o.clean]
    assert not bad, "\n".join(f"{o.fault}: {o.detail}" for o in bad)
    assert all(o.acked > 0 for o in outcomes)
