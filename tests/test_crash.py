"""Crash safety: a writer process is killed with SIGKILL at random points, and every write
it acknowledged must be there when the folder is reopened.

The writer prints one JSON line per acknowledged operation, flushed, right after the
call returns; whatever it printed before the kill is what the memory promised. Rounds
accumulate in one folder (each reopen also exercises the previous round's recovery);
some rounds also assert facts and forget episodes, and some compact often so that kills
land during snapshot writes too.

:func:`crash_rounds` takes the memory's target: a folder here, a ``postgresql://`` URL
with a Chroma server in tests/postgres/test_shared_crash.py (the same rounds, the same
checks).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests._persist_util import PRELUDE, REPO, RESULT, child_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL"),
]

#: The memory's config in a child: ``UCMA_TEST_CHROMA_PORT`` names a Chroma server.
CONFIG = """
from ucma_core import ChromaConfig
def crash_config(**fields):
    port = os.environ.get("UCMA_TEST_CHROMA_PORT")
    chroma = ChromaConfig(host="127.0.0.1", port=int(port)) if port else ChromaConfig()
    return MemoryConfig(chroma=chroma, **fields)
"""

WRITER = """
import random
target, mode, state = sys.argv[1], sys.argv[3], Path(sys.argv[6])
round_no, every, seed = int(sys.argv[2]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
config = crash_config(importance_threshold=0.0, snapshot_every=every)
mem = Memory(target, embedder=HashingEmbedder(), config=config)
known = json.loads(Path(state, "known.json").read_text()) if Path(state, "known.json").exists() else []
print(json.dumps({"k": "ready"}), flush=True)

def say(**line):
    print(json.dumps(line), flush=True)

i = 0
while True:
    content = f"round {round_no} item {i}: crash payload {rng.random():.12f}"
    if mode == "many":
        contents = [f"{content} part {n}" for n in range(3)]
        ids = mem.observe_many(contents, user_id="crash", session_id=f"round-{round_no}", importance=1.0)
        for memory_id, text in zip(ids, contents):
            say(k="obs", id=memory_id, content=text)
            known.append(memory_id)
        i += 1
        continue
    memory_id = mem.observe(content, user_id="crash", session_id=f"round-{round_no}", importance=1.0)
    say(k="obs", id=memory_id, content=content)
    known.append(memory_id)
    if mode in ("facts", "mixed") and i % 3 == 2:
        fact = mem.assert_fact(f"subject{round_no}x{i}", "relates to", f"object{round_no}x{i}",
                               user_id="crash")
        say(k="fact", id=fact.id, content=fact.content)
    if mode in ("forget", "mixed") and i % 4 == 3 and known:
        victim = known.pop(rng.randrange(len(known)))
        say(k="forgetting", id=victim)
        mem.forget(victim)
        say(k="forgot", id=victim)
    if mode == "mixed" and i % 5 == 4:
        mem.remember("crash payload", user_id="crash", k=3)
    i += 1
"""

VERIFY = """
target, state = sys.argv[1], Path(sys.argv[5])
expected = json.loads(Path(sys.argv[2]).read_text())
close = sys.argv[3] == "close"
mem = Memory(target, embedder=HashingEmbedder(), config=crash_config())
out = {"missing": [], "wrong": [], "resurrected": [], "recall_misses": []}
for memory_id, content in expected["present"].items():
    record = mem.get(memory_id)
    if record is None:
        out["missing"].append(memory_id)
    elif record.content != content:
        out["wrong"].append([memory_id, record.content, content])
for memory_id in expected["gone"]:
    if mem.get(memory_id) is not None:
        out["resurrected"].append(memory_id)
for memory_id in expected["probe"]:
    content = expected["present"][memory_id]
    hits = [r.id for r in mem.remember(content, user_id="crash", k=5)]
    if memory_id not in hits:
        out["recall_misses"].append(memory_id)
report = mem.verify()
out["graph_count"] = report.graph_memories
out["stats_count"] = mem.stats()["memories"]
out["chroma_count"] = report.chroma_records
out["same_ids"] = not report.only_in_graph and not report.only_in_chroma
out["bare_nodes"] = list(report.bare_nodes)
# Still writable after recovery.
out["after_write"] = mem.observe(sys.argv[4], user_id="crash", session_id="verifier", importance=1.0)
live = sorted(i for i in expected["present"] if mem.get(i) is not None)
Path(state, "known.json").write_text(json.dumps([i for i in live if i in expected["episodes"]]))
emit(out)
if close:
    mem.close()
else:
    os._exit(0)
"""


@dataclass
class Ledger:
    """What the writers acknowledged, across rounds."""

    present: dict[str, str] = field(default_factory=dict)
    episodes: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    uncertain: set[str] = field(default_factory=set)

    def apply(self, line: dict[str, Any]) -> None:
        kind, memory_id = line["k"], line.get("id")
        if kind == "obs":
            assert memory_id, "observe with importance=1.0 and threshold 0 must keep the episode"
            self.present[memory_id] = line["content"]
            self.episodes.add(memory_id)
        elif kind == "fact":
            self.present[memory_id] = line["content"]
        elif kind == "forgetting":  # may or may not have happened
            self.present.pop(memory_id, None)
            self.uncertain.add(memory_id)
        elif kind == "forgot":
            self.uncertain.discard(memory_id)
            self.gone.add(memory_id)


def _env(chroma_port: int | None) -> dict[str, str]:
    env = child_env()
    env.pop("UCMA_TEST_CHROMA_PORT", None)
    if chroma_port is not None:
        env["UCMA_TEST_CHROMA_PORT"] = str(chroma_port)
    return env


def _run_writer(
    target: str,
    state: Path,
    round_no: int,
    mode: str,
    every: int,
    seed: int,
    delay: float,
    chroma_port: int | None,
) -> list[dict[str, Any]]:
    """Start a writer, let it write for ``delay`` seconds after it is ready, SIGKILL it and
    return the complete lines it printed."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            PRELUDE + CONFIG + WRITER,
            target,
            str(round_no),
            mode,
            str(every),
            str(seed),
            str(state),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=_env(chroma_port),
    )
    assert proc.stdout is not None and proc.stderr is not None
    raw = b""
    try:
        deadline = time.monotonic() + 60
        while b'"ready"' not in raw:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError(f"writer never got ready: {raw!r} {proc.stderr.read()[-3000:]!r}")
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                raw += os.read(proc.stdout.fileno(), 65536)
        kill_at = time.monotonic() + delay
        while time.monotonic() < kill_at:  # keep draining so the writer never blocks on a full pipe
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, kill_at - time.monotonic()))
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                raw += chunk
        assert proc.poll() is None, f"writer died on its own: {proc.stderr.read()[-3000:]!r}"
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        raw += rest
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    text = raw.decode("utf-8", errors="replace")
    complete = text.split("\n")[:-1]  # a line without its newline was torn by the kill
    lines = [json.loads(line) for line in complete]
    assert lines[0] == {"k": "ready"}
    return lines[1:]


ROUNDS = [  # (mode, snapshot_every)
    ("plain", 5000),
    ("facts", 7),
    ("forget", 5000),
    ("mixed", 3),
    ("many", 5000),
    ("plain", 1),
]


def crash_rounds(
    target: str,
    state: Path,
    *,
    seed: int,
    chroma_port: int | None = None,
    rounds: list[tuple[str, int]] = ROUNDS,
) -> None:
    """Run ``rounds`` (default :data:`ROUNDS`) against the memory ``target`` (the test's
    files in ``state``): each round kills a writer at a random moment, then a verifier
    reopens the memory and checks every acknowledged write."""
    rng = random.Random(seed)
    ledger = Ledger()
    for round_no, (mode, every) in enumerate(rounds):
        delay = rng.uniform(0.05, 1.2)
        lines = _run_writer(target, state, round_no, mode, every, rng.randrange(1 << 30), delay, chroma_port)
        for line in lines:
            ledger.apply(line)
        acked = [line for line in lines if line["k"] in ("obs", "fact")]

        live = sorted(ledger.present)
        expected = {
            "present": ledger.present,
            "gone": sorted(ledger.gone),
            "episodes": sorted(ledger.episodes),
            "probe": rng.sample(live, min(5, len(live))),
        }
        expected_path = state / f"expected-{round_no}.json"
        expected_path.write_text(json.dumps(expected))
        verifier_note = f"written by the verifier after round {round_no}"
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                PRELUDE + CONFIG + VERIFY,
                target,
                str(expected_path),
                "close" if round_no % 2 else "kill",
                verifier_note,
                str(state),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env=_env(chroma_port),
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-6000:]
        (out,) = [
            json.loads(line[len(RESULT) :]) for line in proc.stdout.splitlines() if line.startswith(RESULT)
        ]

        where = (
            f"seed {seed} round {round_no} ({mode}, snapshot_every={every}, kill after {delay:.2f}s, "
            f"{len(acked)} acked)"
        )
        print(where)
        assert out["missing"] == [], f"{where}: acknowledged memories lost"
        assert out["wrong"] == [], f"{where}: content changed"
        assert out["resurrected"] == [], f"{where}: forgotten memories came back"
        assert out["recall_misses"] == [], f"{where}: remember() did not find exact-content queries"
        assert out["same_ids"], f"{where}: graph and Chroma hold different memories"
        assert out["stats_count"] == out["graph_count"], where
        if chroma_port is None:  # a server may hold a killed worker's vectors in flight (see verify)
            assert out["chroma_count"] == out["graph_count"], where
        assert out["bare_nodes"] == [], f"{where}: graph nodes without attributes"
        assert out["after_write"], where
        ledger.present[out["after_write"]] = verifier_note
    assert len(ledger.present) > len(rounds) * 2, "the writers barely wrote anything; the test is too weak"


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    seed = int(os.environ.get("UCMA_CRASH_SEED", "20240611"))  # override to explore other kill points
    crash_rounds(str(tmp_path / "memory"), tmp_path, seed=seed)
