"""The crash suite (tests/test_crash.py) on a memory in PostgreSQL: writers of
``observe``, ``observe_many``, facts and forgets killed with SIGKILL at random moments,
each round checked by a verifier in another process: every acknowledged write is
there, nothing forgotten comes back, graph and Chroma hold the same memories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.postgres.conftest import Servers
from tests.test_crash import crash_rounds

pytestmark = pytest.mark.slow


#: Four of the folder suite's rounds (each round a writer and a verifier open the memory):
#: observe, observe + forget, everything with frequent snapshots, observe_many.
ROUNDS = [("plain", 5000), ("forget", 5000), ("mixed", 3), ("many", 5000)]


@pytest.mark.timeout(600)
def test_acknowledged_writes_survive_sigkill_in_postgres(servers: Servers, tmp_path: Path) -> None:
    seed = int(os.environ.get("UCMA_CRASH_SEED", "20240611"))
    crash_rounds(servers.url(), tmp_path, seed=seed, chroma_port=servers.chroma_port, rounds=ROUNDS)
