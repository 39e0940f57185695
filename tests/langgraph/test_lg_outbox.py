"""The checkpoint database is the mirror's outbox: every message acknowledged into a
checkpoint reaches the memory exactly once, however the process ends."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph.lg_outbox_steps import count
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer

pytestmark = pytest.mark.slow  # real interpreters, each importing LangGraph and Chroma

STEPS = Path(__file__).with_name("lg_outbox_steps.py")


def step(name: str, folder: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(STEPS), name, str(folder), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def counts(folder: Path) -> dict[str, Any]:
    """What the folder holds, read in this process (a fresh one for the folder)."""
    return count(folder)


def catch_up(folder: Path) -> None:
    mem = Memory(folder, embedder=HashingEmbedder())
    UCMACheckpointer(mem)  # replays the outbox
    mem.close()  # drains what it queued


def assert_exactly_once(found: dict[str, Any], messages: int) -> None:
    assert len(found["checkpointed"]) == messages
    stored = Counter(found["stored"])
    assert {m: stored[m] for m in found["checkpointed"]} == dict.fromkeys(found["checkpointed"], 1)
    assert sum(stored.values()) == messages  # nothing else was stored


def test_the_natural_script_mirrors_every_message(tmp_path: Path) -> None:
    step("natural", tmp_path, "4")  # compile(checkpointer=UCMACheckpointer(mem)), invoke, mem.close()
    assert_exactly_once(counts(tmp_path), 8)


def test_a_script_that_ends_without_close_mirrors_every_message(tmp_path: Path) -> None:
    step("no_close", tmp_path, "4")
    assert_exactly_once(counts(tmp_path), 8)


def test_what_a_hard_exit_left_in_the_outbox_is_mirrored_on_the_next_open(tmp_path: Path) -> None:
    step("hard_exit", tmp_path, "6")  # the mirror waits 30 s to gather: nothing was stored
    found = counts(tmp_path)
    assert len(found["checkpointed"]) == 12 and found["stored"] == []
    catch_up(tmp_path)  # UCMACheckpointer(mem) replays the outbox; mem.close() drains it
    assert_exactly_once(counts(tmp_path), 12)
    catch_up(tmp_path)  # a second open finds the outbox empty: nothing stored twice
    assert_exactly_once(counts(tmp_path), 12)
