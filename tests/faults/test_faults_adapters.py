"""Crash safety at the adapters: a ``create_agent`` + ``UCMAMiddleware`` agent and LlamaIndex
chat engines with ``UCMAChatMemory`` are killed with SIGKILL at random moments; after reopening,
every message the framework acknowledged is in the memory exactly once and the folder is
consistent (see ``tests/faults/adapter_scenarios.py``; ``python -m benchmarks.faults_report``
runs more trials and prints the table)."""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

from tests.faults.adapter_scenarios import ADAPTERS, kill_trial, table

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
    pytest.mark.slow,
]

SEED = int(os.environ.get("UCMA_FAULT_SEED", "20251126"))
TRIALS = 2  # per adapter here; python -m benchmarks.faults_report runs more


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(ADAPTERS))
def test_kill_during_a_turn_loses_and_duplicates_no_acknowledged_message(name: str, tmp_path: Path) -> None:
    rng = random.Random(f"{SEED}-{name}")
    outcomes = [kill_trial(name, tmp_path / f"t{n}", rng) for n in range(TRIALS)]
    print("\n" + table(outcomes))
    assert sum(o.acked for o in outcomes) > 0, "no turn was acknowledged before the kills"
    bad = [o for o in outcomes if not o.clean]
    assert not bad, "\n".join(f"{o.operation}: {o.detail}" for o in bad)
