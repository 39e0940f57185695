"""The restart story: process 1 talks on thread t1 and exits; process 2 resumes t1 with the same
state and, in a new thread, recalls what was said in t1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

STEPS = Path(__file__).with_name("lg_restart_steps.py")
ROOT = Path(__file__).parents[2]


def run(step: str, folder: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(STEPS), step, str(folder)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_restart_resumes_the_thread_and_recalls_in_a_new_one(tmp_path: Path) -> None:
    folder = tmp_path / "agent_memory"
    first = run("first", folder)
    second = run("second", folder)

    assert second["t1_resumed"] == first["t1"]  # same messages, same ids, same order
    assert [text for kind, _, text in first["t1"] if kind == "human"] == [
        "Remember that my cat is called Miso",
        "I also moved to Lisbon in May",
    ]
    assert "Miso" in second["t2_answer"]
    assert "my cat is called Miso" in second["t2_prompt"]
    assert "Ana wants answers in Portuguese" in second["language_memories"]
    assert second["t1_continued"][: len(first["t1"])] == first["t1"]
    assert second["t1_continued"][-2][2] == "Back in the first thread"
    turns = second["t1_turns"]  # each message of t1 observed once, across both processes
    assert len(turns) == len(set(turns)) == 7  # 3 turns x 2 messages + the memory save_memory stored
    # (the tool's memory is dated when the tool ran; a message when its checkpoint was stored,
    # which LangGraph's default "async" durability may do a moment later)
    assert set(turns[:3]) == {"Remember that my cat is called Miso", "my cat is called Miso", "Saved."}
    assert turns.index("Remember that my cat is called Miso") < turns.index("Saved.")
    assert turns[-2] == "Back in the first thread"
