"""Helpers for the persistence, crash and Chroma-server tests: run code in a fresh
Python process and compare records across processes as plain JSON.

Imported both by the tests (the pytest process) and by the child processes they
start (``from tests._persist_util import ...``), so keep it free of pytest.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: Lines a child prints with this prefix carry JSON results back to the test.
RESULT = "@@RESULT "

#: Prepended to every child script.
PRELUDE = """\
import json, os, sys, time
from pathlib import Path
from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import UCMAError
from tests._persist_util import META, emit, record_dict, records_of, write_all_types
"""

#: Unicode, nesting, nulls, quotes and newlines: metadata must come back exactly.
META: dict[str, Any] = {
    "nested": {"list": [1, 2.5, None, True, "é"], "empty": {}, "deep": {"deeper": [[], [{}]]}},
    "unicode": "日本語 🎉 Ünïcödé",
    "int": 7,
    "big": 2**53,
    "float": 0.1,
    "neg": -3.75e-9,
    "bool": False,
    "null": None,
    "quote": 'he said "hi"\n\ttab\\backslash',
    "empty_str": "",
}


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def record_dict(record: Any) -> dict[str, Any] | None:
    """Every field of a record as JSON-able values (enums as values, tuples as lists), plus its class."""
    if record is None:
        return None
    out = {f.name: _plain(getattr(record, f.name)) for f in dataclasses.fields(record)}
    out["__class__"] = type(record).__name__
    return out


def emit(value: Any) -> None:
    """Send ``value`` back to the test (one JSON line on stdout)."""
    sys.stdout.write(RESULT + json.dumps(value, ensure_ascii=True, allow_nan=False) + "\n")
    sys.stdout.flush()


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env["ANONYMIZED_TELEMETRY"] = "False"
    return env


def run_child(
    code: str,
    *args: object,
    timeout: float = 90.0,
    expect_rc: int | None = 0,
    stderr: list[str] | None = None,
) -> list[Any]:
    """Run ``PRELUDE + code`` in a fresh interpreter (``sys.argv[1:]`` = ``args``).

    Returns every value the child passed to :func:`emit`, in order. Fails with the
    child's output if its exit status is not ``expect_rc`` (``None``: any status).
    The child's standard error is appended to ``stderr`` when one is given.
    """
    proc = subprocess.run(
        [sys.executable, "-c", PRELUDE + code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=child_env(),
        check=False,
    )
    if stderr is not None:
        stderr.append(proc.stderr)
    if expect_rc is not None and proc.returncode != expect_rc:
        raise AssertionError(
            f"child exited with {proc.returncode}, expected {expect_rc}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-6000:]}"
        )
    return [json.loads(line[len(RESULT) :]) for line in proc.stdout.splitlines() if line.startswith(RESULT)]


def folder_files(folder: Path) -> dict[str, bytes]:
    """The bytes of every regular file under ``folder`` (relative path → bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def journal_lines(folder: Path) -> list[bytes]:
    path = folder / "graph.journal.jsonl"
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def write_all_types(
    mem: Any, *, user: str = "ana", agent: str = "agent-1", session: str = "s-1", marker: str = ""
) -> dict[str, str]:
    """Store one memory of every type (with metadata, provenance and mutated state);
    returns ``{memory_type: id}``."""
    episode = mem.observe(
        f"Ana told us she prefers concise answers about Python packaging {marker}".strip(),
        user_id=user,
        agent_id=agent,
        session_id=session,
        metadata=META,
        tags=["pref", "style"],
        participants=["Ana", "Bob"],
        importance=0.9,
        source="user",
    )
    assert episode is not None
    fact = mem.assert_fact(
        "Ana",
        "lives in",
        f"Lisbon {marker}".strip(),
        user_id=user,
        agent_id=agent,
        session_id=session,
        metadata=META,
        tags=["geo"],
        source_ids=[episode],
        confidence=0.7,
        importance=0.65,
    )
    procedure = mem.add_procedure(
        f"deploy service {marker}".strip(),
        ["build the wheel", "push to the registry", "tag the release"],
        description="how we ship",
        trigger_tags=["ops", "release"],
        user_id=user,
        agent_id=agent,
        session_id=session,
        metadata=META,
        source_ids=[episode],
    )
    for ok in (True, True, True, False):  # four runs: promoted from draft to active
        mem.record_outcome(procedure.id, ok)
    learning = mem.learn(
        f"Always run the test suite before tagging a release {marker}".strip(),
        title="tests first",
        learning_type="success_pattern",
        applicability=["release", "ci"],
        confidence=0.55,
        evidence=[episode],
        user_id=user,
        agent_id=agent,
        session_id=session,
        metadata=META,
    )
    mem.validate_learning(learning.id, True)
    mem.validate_learning(learning.id, False)
    intention = mem.intend(
        f"remind Ana about the tax deadline {marker}".strip(),
        ["tax", "deadline"],
        action="send a reminder",
        priority=0.8,
        user_id=user,
        agent_id=agent,
        session_id=session,
        metadata=META,
    )
    # Reinforce some of them so retention state differs from the initial one.
    mem.remember("Ana concise answers packaging", user_id=user, k=2)
    mem.remember("deploy service release", user_id=user, k=1, memory_types=["procedural"])
    return {
        "episodic": episode,
        "semantic": fact.id,
        "procedural": procedure.id,
        "learning": learning.id,
        "prospective": intention.id,
    }


def records_of(mem: Any, ids: dict[str, str]) -> dict[str, Any]:
    """``{memory_type: record_dict(mem.get(id))}``."""
    return {kind: record_dict(mem.get(memory_id)) for kind, memory_id in ids.items()}
