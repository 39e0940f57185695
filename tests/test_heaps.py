"""The process's C heaps once a memory folder is open: threads share ``trim.ARENAS`` heaps.

Each test runs a fresh interpreter (the cap is per process and glibc fixes it when the
process first needs more heaps) and counts the heaps glibc's ``malloc_stats()`` lists.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ucma_core.storage import trim

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
pytestmark = [
    pytest.mark.slow,  # two fresh interpreters that import Chroma
    pytest.mark.skipif(not GLIBC, reason="glibc only"),
]

SCRIPT = textwrap.dedent(
    """
    import ctypes, ctypes.util, sys
    from ucma_core import Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    config = MemoryConfig(importance_threshold=0.0)
    with Memory(sys.argv[1], embedder=HashingEmbedder(), config=config) as mem:
        notes = [f"note {i} about the garden and the bees" for i in range(100)]
        mem.observe_many([{"content": note, "user_id": "u"} for note in notes])
        for i in range(10):
            mem.observe(f"message {i}: the bees swarmed near the pond", user_id="u")
        for i in range(5):
            mem.remember(f"what about the bees {i}", k=5, user_id="u")
        sys.stderr.flush()
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_stats()
    """
)


def heaps(folder: Path, env: dict[str, str]) -> int:
    """How many heaps ("Arena N:" lines) a process that used a memory in ``folder`` had."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return sum(line.startswith("Arena ") for line in done.stderr.splitlines())


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    return env


def test_the_threads_of_an_open_memory_share_at_most_ARENAS_heaps(tmp_path: Path) -> None:
    # Chroma's runtime and SQLite workers plus the memory's own threads: a dozen threads,
    # which glibc would otherwise give a dozen heaps.
    assert heaps(tmp_path / "mem", clean_env()) <= trim.ARENAS


def test_MALLOC_ARENA_MAX_in_the_environment_wins(tmp_path: Path) -> None:
    env = clean_env()
    env["MALLOC_ARENA_MAX"] = str(trim.ARENAS + 2)
    assert heaps(tmp_path / "mem", env) > trim.ARENAS
