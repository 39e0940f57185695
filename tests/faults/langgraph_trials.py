"""Kill -9 trials of a LangGraph run whose messages are mirrored in the background.

A writer process (``tests/langgraph/lg_outbox_steps.py run``) chats over three users'
threads through ``UCMACheckpointer`` and prints ``ack n`` after each ``invoke``
returned. It is killed with SIGKILL at a random moment (after a random number of
acknowledged turns, plus a random fraction of a turn). Then the folder is reopened
in this process: ``UCMACheckpointer(mem)`` replays its outbox and ``mem.close()``
drains it. Every message of every checkpoint (what LangGraph acknowledged) must then
be in the memory exactly once, and nothing else.

The outcome uses the core fault report's columns (:class:`tests.faults.scenarios.Outcome`):
``acked`` counts checkpointed messages, ``lost`` those missing from the memory,
``partial`` those stored twice or stored without being checkpointed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.faults.scenarios import Outcome
from tests.langgraph.lg_outbox_steps import count
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer

STEPS = Path(__file__).parents[1] / "langgraph" / "lg_outbox_steps.py"
TURNS = 24


def kill_run_trial(workdir: Path, rng: random.Random, turns: int = TURNS) -> Outcome:
    """One trial: run, SIGKILL at a random point, reopen (replaying the outbox), count."""
    folder = workdir / "mem"
    workdir.mkdir(parents=True, exist_ok=True)
    out = Outcome("LangGraph run + mirror", "kill -9")
    target = rng.randrange(turns)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(STEPS), "run", str(folder), str(turns)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    acks = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ack "):
            acks += 1
            if acks > target:
                time.sleep(rng.uniform(0.0, 0.3))  # somewhere in the next turn or its mirroring
                break
    proc.send_signal(signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out.hangs += 1
        return out
    if proc.returncode not in (-signal.SIGKILL, 0):
        out.other_errors += 1
        out.detail.append(f"writer exited {proc.returncode}: {err[-400:]}")
        return out
    before = count(folder) if folder.exists() else {"checkpointed": [], "stored": []}
    mem = Memory(folder, embedder=HashingEmbedder())
    UCMACheckpointer(mem)  # replays the outbox
    mem.close()  # drains it
    after = count(folder)
    checkpointed = after["checkpointed"]
    stored = Counter(after["stored"])
    out.acked = len(checkpointed)
    out.lost = sum(1 for m in checkpointed if stored[m] == 0)
    out.partial = sum(n - 1 for n in stored.values() if n > 1) + len(set(stored) - set(checkpointed))
    out.detail.append(
        f"{acks} invokes acknowledged, {out.acked} messages checkpointed, "
        f"{len(before['stored'])} in memory at the kill, {sum(stored.values())} after reopening"
    )
    if acks * 2 > out.acked:  # an acknowledged invoke's two messages are in its checkpoint
        out.lost += acks * 2 - out.acked
        out.detail.append("an acknowledged invoke is missing from the checkpoints")
    return out


def behind(outcomes: list[Outcome]) -> int:
    """Messages that were in checkpoints but not yet in memory when the writer was killed
    (what the outbox replay recovered), summed from the trials' details."""
    total = 0
    for o in outcomes:
        for d in o.detail:
            parts = d.split(", ")
            if len(parts) == 4 and parts[2].endswith("in memory at the kill"):
                total += int(parts[1].split()[0]) - int(parts[2].split()[0])
    return total
