"""Fault-injection scenarios: kill -9 at random points, crashes injected between the stores,
a full disk, damaged and missing files, hostile input. Each trial returns an
:class:`Outcome`; :func:`table` prints them as the fault table.

Shared by the tests in ``tests/faults`` (small counts by default, larger under
``-m slow``) and ``python -m benchmarks.faults_report``. Imported by the child
processes too (``from tests.faults import scenarios``), so keep it free of pytest.

The fault-injection hooks patch UCMA's storage classes in the child process only
(a crash is ``os._exit`` at the chosen point), so the code under test is the real one.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import random
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ucma_core import Memory, MemoryConfig
from ucma_core.config import ConsolidationConfig, GroupCommitConfig, LimitsConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DiskFullError, RepairNeededError, StorageError, UCMAError

REPO = Path(__file__).resolve().parents[2]
CRASH_RC = 77
DAY = 86_400.0
T0 = 1_700_000_000.0


# ---------------------------------------------------------------------------------------------
# Outcomes and the table
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One trial: what was acknowledged, and everything that went wrong."""

    operation: str
    fault: str
    acked: int = 0
    lost: int = 0
    partial: int = 0
    clear_errors: int = 0
    other_errors: int = 0
    hangs: int = 0
    silent_wipes: int = 0
    residue: int = 0
    detail: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.lost or self.partial or self.other_errors or self.hangs or self.silent_wipes or self.residue
        )


COLUMNS = (
    "trials",
    "acked writes",
    "records at risk",
    "lost",
    "partial",
    "clear errors",
    "other errors",
    "hangs",
    "wipes",
    "residue",
)


def table(outcomes: list[Outcome]) -> str:
    """The fault table: one row per operation and fault, plus a total."""
    rows: dict[tuple[str, str], list[int]] = {}
    for o in outcomes:
        row = rows.setdefault((o.operation, o.fault), [0] * len(COLUMNS))
        damaged_file = o.operation == "open"  # a damaged-file row counts the records it puts at risk
        values = (
            1,
            0 if damaged_file else o.acked,
            o.acked if damaged_file else 0,
            o.lost,
            o.partial,
            o.clear_errors,
            o.other_errors,
            o.hangs,
            o.silent_wipes,
            o.residue,
        )
        for i, v in enumerate(values):
            row[i] += v
    total = [sum(r[i] for r in rows.values()) for i in range(len(COLUMNS))]
    head = ["operation", "fault", *COLUMNS]
    body = [[op, fault, *map(str, r)] for (op, fault), r in sorted(rows.items())]
    body.append(["total", "", *map(str, total)])
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += [
        "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |" for line in body
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Scenarios: multi-record operations with their invariants
# ---------------------------------------------------------------------------------------------


class Clock:
    def __init__(self, start: float = T0 + 30 * DAY) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def open_memory(folder: Path, config: MemoryConfig | None = None) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), config=config or base_config(), clock=Clock())


def base_config(**changes: Any) -> MemoryConfig:
    changes.setdefault("limits", LimitsConfig(min_free_bytes=0, chroma_timeout_seconds=60.0))
    return MemoryConfig(importance_threshold=0.0, **changes)


class Scenario:
    """A multi-record operation: ``setup`` (in the test process), ``act`` (in the writer, once
    or in a loop, each call acknowledged), ``check`` (after the crash)."""

    name = ""
    repeat = True

    def config(self) -> MemoryConfig:
        return base_config()

    def setup(self, mem: Memory) -> dict[str, Any]:
        return {}

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        raise NotImplementedError

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        raise NotImplementedError

    def residue_words(self, state: dict[str, Any]) -> list[str]:
        return []

    def reference(self, folder: Path) -> tuple[Any, float]:
        """A clean run of a one-shot operation in another folder: what it produced, and how
        long it took (kills are timed within that)."""
        mem = open_memory(folder, self.config())
        try:
            state = self.setup(mem)
            started = time.monotonic()
            self.act(mem, state, 0)
            return self.summary(mem), time.monotonic() - started
        finally:
            mem.close()

    def summary(self, mem: Memory) -> Any:
        return None


class Observe(Scenario):
    """One ``observe`` a step: with group commit each is acknowledged before Chroma has it."""

    name = "observe"

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        content = f"turn {step}: a note about topic {step % 5} and shelf {step * 7 % 11}"
        return {"id": mem.observe(content, user_id="u", tags=[f"o{step}"]), "content": content}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        for ack in acks:
            record = mem.get(ack["id"])
            if record is None:
                out.lost += 1
            elif record.content != ack["content"]:
                out.partial += 1
                out.detail.append(f"{ack['id']}: {record.content!r} != {ack['content']!r}")
            elif ack["id"] not in [h.id for h in mem.remember(ack["content"], user_id="u", k=3)]:
                out.partial += 1
                out.detail.append(f"{ack['id']} is stored but remember() does not find it")


class ObserveMany(Scenario):
    name = "observe_many"

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        items = [
            {"content": f"batch {step} item {i}: note about topic {i % 5}", "tags": [f"b{step}"]}
            for i in range(10)
        ]
        ids = mem.observe_many(items, user_id="u", session_id=f"s{step % 3}")
        return {"batch": step, "ids": ids}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        for ack in acks:
            present = sum(mem.get(i) is not None for i in ack["ids"])
            out.lost += 10 - present
        if inflight is not None:
            n = len(mem.list_memories(user_id="u", tags=[f"b{inflight}"], limit=100))
            if n not in (0, 10):
                out.partial += 1
                out.detail.append(f"batch {inflight}: {n} of 10 stored")


class AssertExclusive(Scenario):
    name = "assert_fact(exclusive)"

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        fact = mem.assert_fact("Ana", "lives in", f"City{step}", user_id="u", exclusive=True)
        return {"object": fact.object}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        current = [f.object for f in mem.facts_about("Ana", user_id="u", role="subject")]
        history = {
            f.object for f in mem.facts_about("Ana", user_id="u", role="subject", include_superseded=True)
        }
        out.lost += sum(a["object"] not in history for a in acks)
        if acks or inflight is not None:
            allowed = {acks[-1]["object"]} if acks else set()
            if inflight is not None:
                allowed.add(f"City{inflight}")
            if current == [] and not acks:
                return  # the first assertion never happened
            if len(current) != 1 or current[0] not in allowed:
                out.partial += 1
                out.detail.append(f"current facts {current}, allowed {sorted(allowed)}")


class Upsert(Scenario):
    name = "upsert"

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        content = f"profile version {step}: likes colour{step} and city{step}"
        mem.upsert("profile", content, user_id="u", metadata={"v": step}, tags=[f"t{step}"])
        return {"content": content}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        record = mem.get_by_key("profile", user_id="u")
        allowed = {a["content"] for a in acks[-1:]}
        if inflight is not None:
            allowed.add(f"profile version {inflight}: likes colour{inflight} and city{inflight}")
        if record is None:
            out.lost += bool(acks)
            return
        if record.content not in allowed:
            out.lost += 1
            out.detail.append(f"profile is {record.content!r}")
        # deep verify compares the text Chroma holds (and embeds) with the keyword index's copy
        if any("one text in Chroma" in p for p in mem.verify(deep=True).problems):
            out.partial += 1
            out.detail.append("Chroma and the keyword index hold different versions")
        top = mem.remember(record.content, user_id="u", k=1)
        if not top or top[0].id != record.id:
            out.partial += 1
            out.detail.append("the vector does not match the text")


class Forget(Scenario):
    name = "forget"

    def setup(self, mem: Memory) -> dict[str, Any]:
        ids = mem.observe_many(
            [{"content": f"forgettable note {i} in a chain", "timestamp": T0 + i} for i in range(120)],
            user_id="u",
            session_id="chain",
        )
        return {"ids": ids}

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        victim = state["ids"][step]
        mem.forget(victim)
        return {"id": victim}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        gone = {a["id"] for a in acks}
        out.lost += sum(mem.get(i) is not None for i in gone)  # an acknowledged forget undone
        keep = [i for n, i in enumerate(state["ids"]) if i not in gone and n != inflight]
        missing = sum(mem.get(i) is None for i in keep)
        out.silent_wipes += missing
        # the session chain is whole: every remaining turn follows the previous one
        turns = [e.id for e in mem.history(session_id="chain", user_id="u")]
        for a, b in itertools.pairwise(turns):
            if [v for _, v, _, _ in mem.edges(a, edge_type="followed_by", direction="out")] != [b]:
                out.partial += 1
                out.detail.append("a broken session chain")
                break


class ForgetUser(Scenario):
    name = "forget_user"
    repeat = False

    def setup(self, mem: Memory) -> dict[str, Any]:
        victim = mem.observe_many(
            [
                {
                    "content": f"zqvictimword{i} private note number {i}",
                    "tags": [f"zqvictimtag{i % 3}"],
                    "participants": ["Zqvictimperson"],
                    "metadata": {"secret": f"zqvictimmeta{i}"},
                }
                for i in range(150)
            ],
            user_id="victim",
        )
        facts = [
            mem.assert_fact(f"Zqvictimsubject{i}", "likes", f"zqvictimobject{i}", user_id="victim").id
            for i in range(10)
        ]
        keeper = mem.observe_many([f"keeper note {i} stays" for i in range(40)], user_id="keeper")
        return {"victim": victim + facts, "keeper": keeper}

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        return {"forgotten": mem.forget_user("victim")}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        left = sum(mem.get(i) is not None for i in state["victim"])
        if acks and left:
            out.lost += 1
            out.detail.append(f"{left} of the user's memories survived an acknowledged forget_user")
        elif left not in (0, len(state["victim"])):
            out.partial += 1
            out.detail.append(f"{left} of {len(state['victim'])} of the user's memories left")
        out.silent_wipes += sum(mem.get(i) is None for i in state["keeper"])
        state["forgotten"] = left == 0

    def residue_words(self, state: dict[str, Any]) -> list[str]:
        return ["zqvictim", "Zqvictim"] if state.get("forgotten") else []


def _sessions(mem: Memory, n_sessions: int, lines: list[str]) -> list[str]:
    ids: list[str] = []
    for s in range(n_sessions):
        items = [
            {"content": text.format(n=s), "timestamp": T0 + s * 3600 + i * 30, "session_id": f"s{s}"}
            for i, text in enumerate(lines)
        ]
        ids += [i for i in mem.observe_many(items, user_id="u") if i]
    return ids


GROUP_LINES = [f"session {{n}} turn {i}: we talked about plan step {i}" for i in range(10)]
EXTRACT_LINES = [
    "I'm Person{n} and I live in Town{n}.",
    "I work at Company{n} as a baker.",
    "I moved to Village{n} last month.",
    "My favourite colour is shade{n}.",
]
PATTERN_LINES = [
    "The deploy of service{n} failed with a timeout.",
    "I raised the timeout of service{n} to 60 seconds.",
    "Fixed, it works now!",
    "The backup of disk{n} failed again.",
]


class Consolidate(Scenario):
    """One consolidation phase, checked against a clean run of the same phase."""

    repeat = False

    def __init__(self, phase: str, lines: list[str], sessions: int) -> None:
        self.phase = phase
        self.lines = lines
        self.sessions = sessions
        self.name = f"consolidate({phase})"

    def config(self) -> MemoryConfig:
        return base_config(consolidation=ConsolidationConfig(batch_size=4, group_after_hours=1.0))

    def setup(self, mem: Memory) -> dict[str, Any]:
        return {"ids": _sessions(mem, self.sessions, self.lines)}

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        report = mem.consolidate(phases=[self.phase])
        return {"errors": report.errors}

    def summary(self, mem: Memory) -> dict[str, Any]:
        """What the phase produced, independent of ids."""
        records = mem.list_memories(user_id="u", limit=100_000)
        facts = sorted(
            (f.subject, f.predicate, f.object, f.valid_to is None)
            for f in records
            if f.memory_type.value == "semantic"
        )
        consolidated = [
            r for r in records if r.source == "consolidation" and r.memory_type.value == "episodic"
        ]
        return {
            "facts": facts,
            "consolidated": len(consolidated),
            "grouped": sorted(len(r.source_ids) for r in consolidated),
            "learnings": sorted(r.content for r in records if r.memory_type.value == "learning"),
            "procedures": sorted(r.content for r in records if r.memory_type.value == "procedural"),
        }

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        mem.consolidate(phases=[self.phase])  # the next cycle finishes what the crash cut short
        got, want = self.summary(mem), state["reference"]
        for key in want:
            if got[key] != want[key]:
                out.partial += 1
                out.detail.append(f"{key}: {str(got[key])[:200]} instead of {str(want[key])[:200]}")
        if self.phase == "group":
            for memory_id in state["ids"]:
                episode = mem.get(memory_id)
                into = getattr(episode, "consolidated_into", None)
                if into and mem.get(into) is None:
                    out.partial += 1
                    out.detail.append("an episode marked as grouped into a missing summary")
                    break


class ObserveManyLarge(ObserveMany):
    """``observe_many`` of 250 items a call into a folder past the size at which Chroma
    persists its HNSW index (every 1,000 records), so kills land during index writes."""

    name = "observe_many(15k folder)"
    size = 250

    def act(self, mem: Memory, state: dict[str, Any], step: int) -> dict[str, Any]:
        items = [{"content": f"large batch {step} item {i}: topic {i % 17}"} for i in range(self.size)]
        return {"batch": step, "ids": mem.observe_many(items, user_id="u")}

    def check(
        self,
        mem: Memory,
        state: dict[str, Any],
        acks: list[dict[str, Any]],
        inflight: int | None,
        out: Outcome,
    ) -> None:
        for ack in acks:
            out.lost += sum(mem.get(i) is None for i in ack["ids"])
        for ack in acks[-3:]:  # the vector index finds the newest acknowledged records
            memory_id = ack["ids"][7]
            text = f"large batch {ack['batch']} item 7: topic 7"
            if memory_id not in [h.id for h in mem.remember(text, user_id="u", k=3)]:
                out.partial += 1
                out.detail.append(f"{text!r} not found by remember")


LARGE = ObserveManyLarge()

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Observe(),
        ObserveMany(),
        AssertExclusive(),
        Upsert(),
        Forget(),
        ForgetUser(),
        Consolidate("group", GROUP_LINES, 8),
        Consolidate("extract", EXTRACT_LINES, 10),
        Consolidate("patterns", PATTERN_LINES, 6),
    )
}


# ---------------------------------------------------------------------------------------------
# The writer child and crash injection
# ---------------------------------------------------------------------------------------------

#: Where a crash can be injected: (class, method, when). ``when`` is ``before`` / ``after`` the
#: call, or ``before-commit`` / ``after-intent`` for the journal.
CRASH_POINTS = {
    "before Chroma write": ("VectorStore", "add", "before"),
    "after Chroma write": ("VectorStore", "add", "after"),
    "after Chroma replace": ("VectorStore", "upsert", "after"),
    "after keyword write": ("KeywordIndex", "add", "after"),
    "after write intent": ("Journal", "append", "after-intent"),
    "before commit": ("Journal", "append", "before-commit"),
    "after Chroma delete": ("VectorStore", "delete", "after"),
    "after keyword delete": ("KeywordIndex", "delete", "after"),
    "during snapshot": ("Journal", "write_snapshot", "before"),
    "after collection copy": ("VectorStore", "copy_to", "after"),
    "after manifest switch": ("Manifest", "save", "after"),
    "after old collection drop": ("VectorStore", "drop", "after"),
}

#: The crash points each scenario passes through.
POINTS_FOR = {
    "observe": ["before Chroma write", "after Chroma write", "after keyword write", "before commit"],
    "observe_many": [
        "before Chroma write",
        "after Chroma write",
        "after keyword write",
        "after write intent",
        "before commit",
    ],
    "assert_fact(exclusive)": ["after Chroma write", "after keyword write", "before commit"],
    "upsert": ["after Chroma replace", "after keyword write", "before commit"],
    "forget": ["after write intent", "after Chroma delete", "after keyword delete", "before commit"],
    "forget_user": [
        "after write intent",
        "after Chroma delete",
        "before commit",
        "after collection copy",
        "after manifest switch",
        "after old collection drop",
        "during snapshot",
    ],
    "consolidate(group)": ["after Chroma write", "before commit"],
    "consolidate(extract)": ["after Chroma write", "before commit"],
    "consolidate(patterns)": ["after Chroma write", "before commit"],
}


def install_crash(point: str, skip: int = 0) -> None:
    """Make the process exit with :data:`CRASH_RC` at ``point`` (after ``skip`` matching calls)."""
    from ucma_core.storage.journal import Journal
    from ucma_core.storage.keywords import KeywordIndex
    from ucma_core.storage.manifest import Manifest
    from ucma_core.storage.vectors import VectorStore

    owner, method, when = CRASH_POINTS[point]
    cls = {
        "VectorStore": VectorStore,
        "KeywordIndex": KeywordIndex,
        "Journal": Journal,
        "Manifest": Manifest,
    }[owner]
    original = getattr(cls, method)
    seen = [0]

    def matches(args: tuple[Any, ...]) -> bool:
        if when == "before-commit":
            return any(op.get("op") == "c" for op in args[1])
        if when == "after-intent":
            return any(op.get("op") in ("b", "i") for op in args[1])
        return True

    def crashing(*args: Any, **kwargs: Any) -> Any:
        if when in ("after-intent", "before-commit"):
            args = (args[0], list(args[1]), *args[2:])
        hit = matches(args)
        if hit:
            seen[0] += 1
        fire = hit and seen[0] > skip
        if fire and when in ("before", "before-commit"):
            os._exit(CRASH_RC)
        result = original(*args, **kwargs)
        if fire:
            os._exit(CRASH_RC)
        return result

    setattr(cls, method, crashing)


def child_main(argv: list[str]) -> None:
    """The writer: open the folder, arm the crash point, run the scenario and acknowledge each step."""
    folder, name, point, skip = Path(argv[0]), argv[1], argv[2], int(argv[3])
    scenario = LARGE if name == LARGE.name else SCENARIOS[name]
    state = json.loads((folder.parent / "state.json").read_text())
    mem = open_memory(folder, scenario.config())
    if point != "none":
        install_crash(point, skip)
    print(json.dumps({"k": "ready"}), flush=True)
    step = 0
    while True:
        print(json.dumps({"k": "start", "step": step}), flush=True)
        ack = scenario.act(mem, state, step)
        print(json.dumps({"k": "ack", "step": step, "ack": ack}), flush=True)
        if point != "none":
            mem.flush()  # the Chroma writes group commit makes in the background reach the crash point
        step += 1
        if not scenario.repeat or step >= 100:
            break
    os._exit(0)  # no close(): the folder is left as a crash would leave it


CHILD = "import sys\nfrom tests.faults import scenarios\nscenarios.child_main(sys.argv[1:])\n"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _prepare(scenario: Scenario, workdir: Path) -> tuple[Path, dict[str, Any]]:
    folder = workdir / "memory"
    mem = open_memory(folder, scenario.config())
    try:
        state = scenario.setup(mem)
    finally:
        mem.close()
    if not scenario.repeat:
        state["reference"], state["seconds"] = scenario.reference(workdir / "reference")
    (workdir / "state.json").write_text(json.dumps(state))
    return folder, state


def _run_writer(
    folder: Path, name: str, point: str, skip: int, kill_after: float | None, timeout: float = 120.0
) -> tuple[list[dict[str, Any]], int | None, int, str]:
    """Run the writer; with ``kill_after`` SIGKILL it that many seconds after it is ready.
    Returns the acknowledgements, the step in flight, the exit status and stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), name, point, str(skip)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    raw = b""
    deadline = time.monotonic() + timeout
    kill_at: float | None = None
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                break
            if kill_at is None and kill_after is not None and b'"ready"' in raw:
                kill_at = time.monotonic() + kill_after
            if kill_at is not None and time.monotonic() >= kill_at:
                proc.send_signal(signal.SIGKILL)
                break
            ready, _, _ = select.select([proc.stdout], [], [], 0.01)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if chunk:
                    raw += chunk
        rest, err = proc.communicate(timeout=60)
        raw += rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    lines = [json.loads(line) for line in raw.decode("utf-8", "replace").split("\n")[:-1]]
    acks = [line["ack"] for line in lines if line["k"] == "ack"]
    started = [line["step"] for line in lines if line["k"] == "start"]
    inflight = started[-1] if started and len(started) > len(acks) else None
    return acks, inflight, proc.returncode, err.decode("utf-8", "replace")[-3000:]


def reopen(folder: Path, config: MemoryConfig, out: Outcome) -> Memory | None:
    """Open ``folder`` after a fault; ``None``, counted in ``out``, when that fails: a refusal
    with UCMA's own error is a clear error and a partial outcome, anything else another error."""
    try:
        return open_memory(folder, config)
    except UCMAError as e:
        out.partial += 1
        out.clear_errors += 1
        out.detail.append(f"reopening refused: {e}")
    except Exception as e:
        out.other_errors += 1
        out.detail.append(f"reopening raised {type(e).__name__}: {e}")
    return None


def failed_check(out: Outcome, e: Exception) -> None:
    """Count an exception raised while checking a reopened folder: UCMA's own error is a
    partial outcome, anything else another error."""
    if isinstance(e, UCMAError):
        out.partial += 1
    else:
        out.other_errors += 1
    out.detail.append(f"check raised {type(e).__name__}: {e}")


def folder_residue(folder: Path, words: list[str]) -> list[str]:
    """``file: word`` for every file of ``folder`` holding one of ``words``."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.relative_to(folder)}: {w}" for w in words if w.encode() in data]
    return found


def _verify(
    scenario: Scenario,
    folder: Path,
    state: dict[str, Any],
    acks: list[dict[str, Any]],
    inflight: int | None,
    out: Outcome,
) -> None:
    out.acked = len(acks)
    mem = reopen(folder, scenario.config(), out)
    if mem is None:
        return
    try:
        scenario.check(mem, state, acks, inflight, out)
        report = mem.verify()
        if not report.ok:
            out.partial += 1
            out.detail.append(f"verify: {report}")
    except Exception as e:
        failed_check(out, e)
    finally:
        mem.close()
    words = scenario.residue_words(state)
    if words:
        found = folder_residue(folder, words)
        out.residue += len(found)
        out.detail += found[:5]


def large_template(workdir: Path, records: int = 15_000) -> Path:
    """A folder of ``records`` memories (built once; each large kill trial copies it)."""
    folder = workdir / "large-template" / "memory"
    mem = open_memory(folder)
    try:
        for start in range(0, records, 1000):
            n = min(1000, records - start)
            mem.observe_many(
                [f"background note {start + i} on subject {i % 29}" for i in range(n)], user_id="u"
            )
    finally:
        mem.close()
    return folder


def large_kill_trial(template: Path, workdir: Path, rng: random.Random) -> Outcome:
    """Kill ``observe_many`` into a copy of the large folder at a random moment, then reopen it
    while a :class:`~ucma_core.storage.heal.SizeGuard` watches Chroma's files: it must open
    (directly or after rebuilding its vector index) with every acknowledged record, and no
    index file may grow past the bound the folder's size allows."""
    from ucma_core.storage.heal import SizeGuard, byte_bound, folder_records

    out = Outcome(LARGE.name, "kill -9")
    folder = workdir / "memory"
    shutil.copytree(template, folder)
    (workdir / "state.json").write_text("{}")
    acks, inflight, rc, err = _run_writer(folder, LARGE.name, "none", 0, rng.uniform(0.3, 5.0), timeout=300)
    if rc not in (-signal.SIGKILL, 0):
        out.other_errors += 1
        out.detail.append(f"writer exited {rc}: {err}")
    limit = byte_bound(folder_records(folder), 256)
    with SizeGuard(folder / "chroma", limit) as guard:
        _verify(LARGE, folder, {}, acks, inflight, out)
    out.acked = sum(len(a["ids"]) for a in acks)
    if guard.tripped is not None:
        out.partial += 1
        out.detail.append(f"{guard.tripped[0].name} grew to {guard.tripped[1]:,} bytes (bound {limit:,})")
    out.detail.append(f"largest index file during the reopen: {guard.largest:,} bytes (bound {limit:,})")
    healed = list(folder.glob("chroma.damaged-index-*"))
    if healed:
        out.detail.append(f"vector index rebuilt ({len(healed)} set aside)")
    return out


def kill_trial(name: str, workdir: Path, rng: random.Random) -> Outcome:
    """Start the writer, SIGKILL it at a random moment, reopen and check the invariants."""
    scenario = SCENARIOS[name]
    folder, state = _prepare(scenario, workdir)
    delay = rng.uniform(0.0, 0.6 if scenario.repeat else 1.2 * state["seconds"])
    out = Outcome(name, "kill -9")
    acks, inflight, rc, err = _run_writer(folder, name, "none", 0, delay)
    if rc not in (-signal.SIGKILL, 0):
        out.other_errors += 1
        out.detail.append(f"writer exited {rc}: {err}")
    _verify(scenario, folder, state, acks, inflight, out)
    return out


def crash_trial(name: str, point: str, workdir: Path, skip: int = 0) -> Outcome:
    """Run the writer with a crash injected at ``point``, reopen and check the invariants."""
    scenario = SCENARIOS[name]
    folder, state = _prepare(scenario, workdir)
    out = Outcome(name, f"crash {point}")
    acks, inflight, rc, err = _run_writer(folder, name, point, skip, None)
    if rc not in (CRASH_RC, 0):
        out.other_errors += 1
        out.detail.append(f"writer exited {rc}: {err}")
    if rc == 0:
        out.fault += " (not reached: ran to the end)"
        out.detail.append("the crash point was not reached")
    _verify(scenario, folder, state, acks, inflight, out)
    return out


# ---------------------------------------------------------------------------------------------
# A full disk
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def patched(owner: Any, name: str, replacement: Any) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, replacement)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _enospc(*_: Any, **__: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


def _count(mem: Memory) -> tuple[int, int, int]:
    report = mem.verify()
    return report.chroma_records, report.graph_memories, report.keyword_rows


def disk_full_trial(where: str, workdir: Path) -> Outcome:
    """One store fails with "no space left" in the middle of ``observe``, ``assert_fact`` and
    ``upsert``: each call must raise a clear ``StorageError`` saying "disk full", store
    nothing, release the lock, and work again once the failure stops."""
    from ucma_core.storage.keywords import KeywordIndex
    from ucma_core.storage.vectors import VectorStore

    out = Outcome("observe/assert/upsert", f"disk full in {where}")
    folder = workdir / "memory"
    # with group commit a small write does not wait for Chroma: it is acknowledged from the
    # journal and written when Chroma accepts it (tests/test_group_commit.py); here every
    # write waits for Chroma, so a full disk there must refuse it
    mem = open_memory(folder, base_config(group_commit=GroupCommitConfig(enabled=False)))
    try:
        kept = [mem.observe(f"stored before the disk filled {i}", user_id="u") for i in range(3)]
        out.acked = len(kept)
        before = _count(mem)
        journal = os.path.realpath(folder / "graph.journal.jsonl")
        real_write = os.write

        def journal_full(fd: int, data: Any) -> int:
            target = ""
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
            if target == journal:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, data)

        def sqlite_full(*_: Any, **__: Any) -> None:
            raise StorageError("disk full: writing the keyword index failed (database or disk is full)")

        def chroma_full(self: Any, *args: Any, **kwargs: Any) -> None:
            self._call("writing", lambda: _enospc())

        patch = {
            "journal": (os, "write", journal_full),
            "keyword index": (KeywordIndex, "add", sqlite_full),
            "Chroma": (VectorStore, "add", chroma_full),
            "Chroma replace": (VectorStore, "upsert", chroma_full),
        }[where]
        calls: list[Callable[[], Any]] = [
            lambda: mem.observe("written while the disk is full", user_id="u"),
            lambda: mem.assert_fact("Ana", "lives in", "Full City", user_id="u", exclusive=True),
            lambda: mem.upsert("k", "an upsert while the disk is full", user_id="u"),
        ]
        if where == "Chroma replace":  # only replacing an existing record goes through upsert
            mem.upsert("k", "the first version", user_id="u")
            before = _count(mem)
            calls = calls[2:]
        with patched(*patch):
            for call in calls:
                try:
                    call()
                except DiskFullError as e:
                    out.clear_errors += "disk full" in str(e)
                except UCMAError as e:
                    out.detail.append(f"{type(e).__name__}: {e}")
                    out.clear_errors += 1
                except Exception as e:
                    out.other_errors += 1
                    out.detail.append(f"{type(e).__name__}: {e}")
                else:
                    out.detail.append("a call succeeded while the disk was full")
        if _count(mem) != before:
            out.partial += 1
            out.detail.append(f"counts {before} -> {_count(mem)}: a failed call stored something")
        top = mem.remember("written while the disk is full", user_id="u", k=1)
        record = mem.get_by_key("k", user_id="u")
        if (
            mem.facts_about("Ana", user_id="u")
            or (top and top[0].content == "written while the disk is full")
            or (record is not None and record.content != "the first version")
        ):
            out.partial += 1
            out.detail.append("a failed write is visible")
        # the lock is free (a call from another thread gets through) and the memory works again
        # without a restart
        other = threading.Thread(target=mem.verify)
        other.start()
        other.join(10)
        out.hangs += other.is_alive()
        after = mem.observe("written after space came back", user_id="u")
        if mem.get(after) is None:
            out.other_errors += 1
            out.detail.append("the memory did not recover")
        kept.append(after)
    finally:
        mem.close()
    mem = open_memory(folder)
    try:
        out.lost += sum(mem.get(i) is None for i in kept)
        if not mem.verify().ok:
            out.partial += 1
            out.detail.append(f"after reopening: {mem.verify()}")
        if mem.facts_about("Ana", user_id="u"):
            out.partial += 1
    finally:
        mem.close()
    return out


def hang_trial(workdir: Path, timeout: float = 1.0) -> Outcome:
    """Chroma stops answering (as on a full disk): the call gives up after the timeout with a
    ``StorageError``, other threads are not blocked, and the next call works."""
    from ucma_core.storage.vectors import VectorStore

    out = Outcome("observe", "Chroma hangs")
    folder = workdir / "memory"
    limits = LimitsConfig(min_free_bytes=0, chroma_timeout_seconds=timeout)
    # every write waits for Chroma here (group commit off), so the hung call is the caller's
    mem = open_memory(folder, base_config(limits=limits, group_commit=GroupCommitConfig(enabled=False)))
    release = threading.Event()
    try:
        kept = mem.observe("stored before Chroma hung", user_id="u")
        out.acked = 1

        def stuck(self: Any, *args: Any, **kwargs: Any) -> None:
            self._run("writing", lambda col: release.wait(30))

        with patched(VectorStore, "add", stuck):
            started = time.monotonic()
            try:
                mem.observe("this write never finishes", user_id="u")
                out.detail.append("the write did not time out")
            except StorageError as e:
                out.clear_errors += 1
                if time.monotonic() - started > timeout + 5:
                    out.hangs += 1
                out.detail.append(str(e)[:160])
            except Exception as e:
                out.other_errors += 1
                out.detail.append(f"{type(e).__name__}: {e}")
            reader = threading.Thread(target=lambda: mem.remember("stored before", user_id="u"))
            reader.start()
            reader.join(10)
            out.hangs += reader.is_alive()
        release.set()
        after = mem.observe("written once Chroma answers again", user_id="u")
        out.lost += mem.get(kept) is None
        if mem.get(after) is None:
            out.other_errors += 1
        if not mem.verify().ok:
            out.partial += 1
            out.detail.append(str(mem.verify()))
    finally:
        release.set()
        mem.close()
    return out


def tmpfs_available() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "geteuid") and os.geteuid() == 0


def tmpfs_trial(workdir: Path, size: str = "4m", guard: int = 0) -> Outcome:
    """A real full disk: a memory on a small tmpfs is written until it is full, then space is
    freed. Needs root (``mount -t tmpfs``)."""
    mount = workdir / "tmpfs"
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True)
    out = Outcome("observe", f"real full disk (tmpfs, guard {guard // 1024} KiB)")
    try:
        filler = mount / "filler"
        filler.write_bytes(b"\0" * 256 * 1024)
        folder = mount / "memory"
        # every write waits for Chroma (group commit off): each observe meets the full disk itself
        config = base_config(
            limits=LimitsConfig(min_free_bytes=guard, chroma_timeout_seconds=20.0),
            group_commit=GroupCommitConfig(enabled=False),
        )
        mem = open_memory(folder, config)
        kept: list[str] = []
        failures = 0
        try:
            before = _count(mem)
            for i in range(5000):
                text = f"note {i} " + "lorem ipsum dolor sit amet " * 20
                started = time.monotonic()
                try:
                    kept.append(str(mem.observe(text, user_id="u")))
                    before = (before[0] + 1, before[1] + 1, before[2] + 1)
                except DiskFullError as e:
                    failures += 1
                    out.clear_errors += 1
                    if failures == 1:
                        out.detail.append(str(e)[:200])
                except UCMAError as e:
                    failures += 1
                    out.clear_errors += "disk full" in str(e).lower()
                    out.other_errors += "disk full" not in str(e).lower()
                    out.detail.append(f"{type(e).__name__}: {str(e)[:200]}")
                except Exception as e:
                    failures += 1
                    out.other_errors += 1
                    out.detail.append(f"{type(e).__name__}: {e}")
                if time.monotonic() - started > 25:
                    out.hangs += 1
                if failures >= 3:
                    break
            if failures and filler.exists():
                filler.unlink()  # space comes back
                if _count(mem) != before:
                    out.partial += 1
                    out.detail.append(f"failed observes stored something: {before} -> {_count(mem)}")
                for i in range(3):
                    kept.append(str(mem.observe(f"written after space came back {i}", user_id="u")))
            out.acked = len(kept)
        finally:
            with contextlib.suppress(UCMAError):
                mem.close()
        mem = open_memory(folder, config)
        try:
            out.lost += sum(mem.get(i) is None for i in kept)
            if not mem.verify().ok:
                out.partial += 1
                out.detail.append(str(mem.verify()))
        finally:
            mem.close()
        if not failures:
            out.detail.append("the disk never filled")
    except Exception as e:
        out.other_errors += 1
        out.detail.append(f"{type(e).__name__}: {e}")
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    return out


# ---------------------------------------------------------------------------------------------
# Damaged and missing files
# ---------------------------------------------------------------------------------------------


def _segments(folder: Path) -> list[Path]:
    con = sqlite3.connect(folder / "chroma" / "chroma.sqlite3")
    try:
        ids = [row[0] for row in con.execute("SELECT id FROM segments WHERE scope = 'VECTOR'")]
    finally:
        con.close()
    return [folder / "chroma" / i for i in ids]


def _cut(path: Path, keep: float) -> None:
    """Truncate ``path`` to a ``keep`` fraction of its size, as a kill during its write can."""
    os.truncate(path, int(path.stat().st_size * keep))


def _garble(path: Path) -> None:
    """Replace ``path`` with random bytes of the same size."""
    path.write_bytes(random.Random(7).randbytes(path.stat().st_size))


def _drop_journal_middle(folder: Path) -> None:
    path = folder / "graph.journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2] + lines[len(lines) // 2 + 3 :]))


def _other_collection(folder: Path) -> None:
    manifest = json.loads((folder / "ucma.json").read_text())
    manifest["collection"] = "ucma-someone-elses"
    (folder / "ucma.json").write_text(json.dumps(manifest))


#: name -> (damage, what the files still hold: "all" is recoverable without loss)
DAMAGE: dict[str, Callable[[Path], None]] = {
    "ucma.json missing": lambda f: (f / "ucma.json").unlink(),
    "chroma/ missing": lambda f: shutil.rmtree(f / "chroma"),
    "chroma.sqlite3 garbage": lambda f: (f / "chroma" / "chroma.sqlite3").write_bytes(os.urandom(64 * 1024)),
    "manifest names another collection": _other_collection,
    "graph.snapshot.json missing": lambda f: (f / "graph.snapshot.json").unlink(),
    "graph.snapshot.json cut in half": lambda f: (f / "graph.snapshot.json").write_bytes(
        (f / "graph.snapshot.json").read_bytes()[: (f / "graph.snapshot.json").stat().st_size // 2]
    ),
    "graph.journal.jsonl missing": lambda f: (f / "graph.journal.jsonl").unlink(),
    "journal lines missing": _drop_journal_middle,
    "keywords.sqlite3 missing": lambda f: (f / "keywords.sqlite3").unlink(),
    "keywords.sqlite3 garbage": lambda f: (f / "keywords.sqlite3").write_bytes(os.urandom(32 * 1024)),
    "HNSW index deleted": lambda f: [shutil.rmtree(p, ignore_errors=True) for p in _segments(f)] and None,
    "HNSW data_level0.bin cut short": lambda f: _cut(_segments(f)[0] / "data_level0.bin", 0.4),
    "HNSW link_lists.bin garbage": lambda f: _garble(_segments(f)[0] / "link_lists.bin"),
    "HNSW header.bin garbage": lambda f: _garble(_segments(f)[0] / "header.bin"),
    "HNSW index_metadata.pickle cut short": lambda f: _cut(_segments(f)[0] / "index_metadata.pickle", 0.5),
    "HNSW index_metadata.pickle of another shape": lambda f: (
        _segments(f)[0] / "index_metadata.pickle"
    ).write_bytes(b"\x80\x04N."),  # a whole pickle (of None) that Chroma cannot use: found by Chroma
}

#: Damage a folder opens from without a repair: derived data rebuilt, a snapshot replaced.
RECOVERABLE = frozenset(
    {
        "graph.snapshot.json missing",
        "graph.snapshot.json cut in half",
        "keywords.sqlite3 missing",
        "keywords.sqlite3 garbage",
        "HNSW index deleted",
        *(case for case in DAMAGE if case.startswith("HNSW ")),
    }
)


def _damaged_folder(folder: Path) -> dict[str, Any]:
    """A folder with a snapshot, a previous generation and a journal, and more than 1,000
    records (so Chroma writes its vector index to disk)."""
    config = base_config(snapshot_every=1)
    mem = open_memory(folder, config)
    try:
        ids = mem.observe_many([f"bulk note {i} about topic {i % 13}" for i in range(1100)], user_id="u")
        mem.assert_fact("Ana", "lives in", "Lisbon", user_id="u", exclusive=True)
        contents = {i: r.content for i in ids if (r := mem.get(i)) is not None}
    finally:
        mem.close()
    # the last writes end in a crash (a child that exits without close()): the journal holds them
    done = subprocess.run(
        [sys.executable, "-c", LATE_WRITER, str(folder)],
        capture_output=True,
        cwd=REPO,
        env=_env(),
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the late writer failed: {done.stderr.decode('utf-8', 'replace')[-2000:]}")
    late = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return {"ids": ids + late["ids"], "fact": late["fact"], "contents": {**contents, **late["contents"]}}


def late_writes(folder: Path) -> dict[str, Any]:
    """The last writes to the folder :func:`damage_template` builds (run in a child that then
    exits without closing the memory). Group commit is off: with it on, a record not yet flushed
    to Chroma has the journal as its only full copy, and these trials delete the journal."""
    mem = open_memory(folder, base_config(group_commit=GroupCommitConfig(enabled=False)))
    ids = [mem.observe(f"late note {i}", user_id="u") for i in range(5)]
    fact = mem.assert_fact("Ana", "lives in", "Porto", user_id="u", exclusive=True).id
    mem.remember("late note", user_id="u", k=3)
    contents = {i: r.content for i in ids if (r := mem.get(i)) is not None}
    return {"ids": ids, "fact": fact, "contents": contents}


LATE_WRITER = (
    "import json, os, sys\n"
    "from pathlib import Path\n"
    "from tests.faults import scenarios\n"
    "print(json.dumps(scenarios.late_writes(Path(sys.argv[1]))), flush=True)\n"
    "os._exit(0)  # no close(): the folder is left as a crash would leave it\n"
)


def damage_template(workdir: Path) -> Path:
    """Build the folder :func:`damage_trial` damages copies of (once per run)."""
    template = workdir / "template"
    state = _damaged_folder(template / "memory")
    (template / "state.json").write_text(json.dumps(state))
    return template


def damage_trial(case: str, workdir: Path, template: Path | None = None) -> Outcome:
    """Damage one file; opening must either lose nothing or refuse with a clear error, and the
    repair must then bring back every memory whose text still exists somewhere."""
    out = Outcome("open", f"{case}")
    template = template or damage_template(workdir)
    folder = workdir / "memory"
    shutil.copytree(template / "memory", folder)
    state = json.loads((template / "state.json").read_text())
    out.acked = len(state["ids"]) + 1
    DAMAGE[case](folder)
    repaired = False
    try:
        mem = open_memory(folder)
    except RepairNeededError as e:
        out.clear_errors += 1
        out.detail.append(str(e)[:200])
        try:
            report = Memory.repair(folder, embedder=HashingEmbedder(), config=base_config())
            repaired = True
            out.detail.append(f"repair: {report.actions}, dropped {len(report.dropped)}")
            mem = open_memory(folder)
        except Exception as e:
            out.other_errors += 1
            out.detail.append(f"repair failed: {type(e).__name__}: {e}")
            return out
    except UCMAError as e:
        out.clear_errors += 1
        out.detail.append(f"{type(e).__name__}: {e}")
        return out
    except Exception as e:
        out.other_errors += 1
        out.detail.append(f"{type(e).__name__}: {e}")
        return out
    try:
        missing = [
            i for i, text in state["contents"].items() if (r := mem.get(i)) is None or r.content != text
        ]
        if missing:
            if repaired:
                out.lost += len(missing)
            else:
                out.silent_wipes += len(missing)
            out.detail.append(f"{len(missing)} memories missing")
        current = [f.object for f in mem.facts_about("Ana", user_id="u", role="subject")]
        if current != ["Porto"] and not repaired:
            out.partial += 1
            out.detail.append(f"current facts {current}")
        hits = mem.remember("bulk note 7 about topic 7", user_id="u", k=3)
        if not hits or hits[0].content != "bulk note 7 about topic 7":
            out.partial += 1
            out.detail.append("search does not work")
        if not mem.verify().ok:
            out.partial += 1
            out.detail.append(str(mem.verify())[:300])
    except Exception as e:
        failed_check(out, e)
    finally:
        mem.close()
    return out


# ---------------------------------------------------------------------------------------------
# Hostile input
# ---------------------------------------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def _circular() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


HOSTILE: dict[str, Callable[[Memory], Any]] = {
    "metadata nested 100,000 deep": lambda m: m.observe("x", metadata=_nested(100_000)),
    "circular metadata": lambda m: m.observe("x", metadata=_circular()),
    "20 MB metadata": lambda m: m.observe("x", metadata={"blob": "a" * 20_000_000}),
    "100,000 metadata keys": lambda m: m.observe("x", metadata={f"k{i}": i for i in range(100_000)}),
    "5,000 tags": lambda m: m.observe("x", tags=[f"tag{i}" for i in range(5000)]),
    "lone surrogate in content": lambda m: m.observe("bad \ud800 text"),
    "lone surrogate in a tag": lambda m: m.observe("x", tags=["\udfff"]),
    "lone surrogate in a participant": lambda m: m.observe("x", participants=["\ud800bob"]),
    "lone surrogate in metadata": lambda m: m.observe("x", metadata={"k": "\ud800"}),
    "lone surrogate in a fact": lambda m: m.assert_fact("A\ud800", "is", "b"),
    "lone surrogate in user_id": lambda m: m.observe("x", user_id="\ud800"),
    "NUL in user_id": lambda m: m.observe("x", user_id="a\x00b"),
    "NUL in a tag": lambda m: m.observe("x", tags=["a\x00"]),
    "NUL in a key": lambda m: m.observe("x", key="k\x00"),
    "NUL in memory id": lambda m: m.get("abc\x00"),
    "remember(now=1e300)": lambda m: m.remember("x", now=1e300),
    "remember(now=-1e300)": lambda m: m.remember("x", now=-1e300),
    "timestamp in milliseconds": lambda m: m.observe("x", timestamp=1_750_000_000_000),
    "timestamp huge int": lambda m: m.observe("x", timestamp=10**400),
    "importance huge int": lambda m: m.observe("x", importance=10**400),
    "time_range in milliseconds": lambda m: m.remember("x", time_range=(0, 1_750_000_000_000)),
    "observe_many of a str": lambda m: m.observe_many("hello"),
    "observe_many of a dict": lambda m: m.observe_many({"content": "x"}),
    "memory_types as bytes": lambda m: m.remember("x", memory_types=b"episodic"),
    "memory_types as one str": lambda m: m.remember("x", memory_types="episodic"),
    "phases as a str": lambda m: m.consolidate(phases="group"),
    "phases unknown": lambda m: m.consolidate(phases=["sleep"]),
    "forget_user(None)": lambda m: m.forget_user(None),  # type: ignore[arg-type]
    "forget(None)": lambda m: m.forget(None),  # type: ignore[arg-type]
    "k=10**9": lambda m: m.remember("x", k=10**9),
    "10,000 trigger phrases": lambda m: m.intend("do it", [f"phrase {i}" for i in range(10_000)]),
    "content 10 MB": lambda m: m.observe("a" * 10_000_000),
    "edge to itself": lambda m: m.link("a", "a"),
    "weight NaN": lambda m: m.link("a", "b", weight=float("nan")),
    "Memory('')": lambda m: Memory("", embedder=HashingEmbedder()),
    "Memory(None)": lambda m: Memory(None, embedder=HashingEmbedder()),  # type: ignore[arg-type]
    "custom embedder missing": lambda m: Memory(m.path),
}


def hostile_trial(workdir: Path) -> list[Outcome]:
    """Every hostile call either works or raises a UCMAError, and what was stored is intact."""
    outcomes = []
    folder = workdir / "memory"

    class Custom:
        name = "custom-embedder"
        dimension = 8

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[float(len(t) % 7 + 1)] * 8 for t in texts]

    Memory(folder, embedder=Custom(), config=base_config()).close()
    custom_folder = folder
    folder = workdir / "plain"
    mem = open_memory(folder)
    try:
        kept = mem.observe("the one memory that must survive hostile input", user_id="u")
        for name, call in HOSTILE.items():
            out = Outcome("hostile input", name)
            target = mem if name != "custom embedder missing" else _PathOnly(custom_folder)
            try:
                result = call(target)  # type: ignore[arg-type]
                if isinstance(result, Memory):
                    result.close()
            except UCMAError:
                out.clear_errors += 1
            except Exception as e:
                out.other_errors += 1
                out.detail.append(f"{type(e).__name__}: {str(e)[:200]}")
            out.lost += mem.get(kept) is None
            outcomes.append(out)
        race = Outcome("close()", "racing consolidate()")
        outcomes.append(race)
    finally:
        mem.close()
    race_trial(workdir / "race", race)
    return outcomes


class _PathOnly:
    def __init__(self, path: Path) -> None:
        self.path = path


def race_trial(folder: Path, out: Outcome) -> None:
    """``close()`` while another thread runs ``consolidate()``: only UCMA errors."""
    mem = open_memory(folder)
    _sessions(mem, 6, GROUP_LINES + EXTRACT_LINES)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(3):
                mem.consolidate()
        except BaseException as e:
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.05)
    mem.close()
    thread.join(30)
    out.hangs += thread.is_alive()
    for e in errors:
        if isinstance(e, UCMAError):
            out.clear_errors += 1
        else:
            out.other_errors += 1
            out.detail.append(f"{type(e).__name__}: {e}")
