"""The ``ucma`` command line: every command, its --json output, exit codes and one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._cli_run import ucma
from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

#: 2001: long enough ago that, by the real clock the command line uses, these memories have faded.
START = 1_000_000_000.0
DAY = 86_400.0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed memory folder (hashing embedder) with two users' memories, a fact and a lesson,
    made once per module."""
    now = [START]
    path = tmp_path_factory.mktemp("built") / "memory"
    with Memory(
        path, embedder=HashingEmbedder(), clock=lambda: now[0], config=MemoryConfig(importance_threshold=0)
    ) as m:
        for day in range(4):
            m.observe_many(
                [
                    f"Day {day}: I went hiking in the Alps with my sister.",
                    f"Day {day}: the build failed until I cleared the cache.",
                ],
                user_id="ana",
                session_id=f"s{day}",
            )
            m.observe(f"Day {day}: Ben bought a bike.", user_id="ben", session_id=f"b{day}")
            now[0] += DAY
        m.assert_fact("Ana", "lives in", "Lisbon", user_id="ana", importance=0.95)
        m.learn("Clear the cache when the build fails", applicability=["build"], user_id="ana")
    return path


@pytest.fixture
def folder(built: Path, tmp_path: Path) -> Path:
    """A copy of the built folder for one test."""
    path = tmp_path / "memory"
    shutil.copytree(built, path, ignore=shutil.ignore_patterns("LOCK"))
    return path


def ids_of(path: Path, user: Any = ANY) -> list[str]:
    with Memory(path) as m:
        return [r.id for r in m.list_memories(user_id=user, limit=1000)]


def fact_id(path: Path) -> str:
    with Memory(path) as m:
        return m.facts_about("Ana", user_id="ana")[0].id


def test_the_entry_point_runs_as_a_module(folder: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ucma_core.cli", "show", str(folder), "no-such-id", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("ucma: error: no memory with id 'no-such-id'")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_info(folder: Path) -> None:
    text = ucma("info", folder)
    assert text.code == 0 and "hashing-256" in text.out and "ana" in text.out
    data = ucma("--json", "info", folder).json()
    assert data["by_type"] == {
        "episodic": 12,
        "semantic": 1,
        "procedural": 0,
        "learning": 1,
        "prospective": 0,
    }
    users = {row["user_id"]: row for row in data["scopes"]}
    assert users["ana"]["memories"] == 10 and users["ana"]["sessions"] == 5  # s0..s3 and the default one
    assert users["ben"]["by_type"]["episodic"] == 4
    assert data["disk"]["total"] > 0 and "chroma/" in data["disk"]["files"]
    assert data["entities"] == 2 and data["graph"]["edges"] > 0


def test_search_explains_each_result(folder: Path) -> None:
    text = ucma("search", folder, "where does Ana live?", "--user", "ana", "-k", "3")
    assert text.code == 0
    assert "score = " in text.out and "signals:" in text.out and "route:" in text.out
    data = ucma("search", folder, "hiking in the Alps", "--json", "-k", "4").json()
    assert data["query"] == "hiking in the Alps" and len(data["results"]) == 4
    for result in data["results"]:
        assert set(result["contributions"]) == {"relevance", "importance", "recency", "retention"}
        assert sum(result["contributions"].values()) == pytest.approx(result["score"], abs=1e-5)
        assert result["signals"] and result["route"]["kind"]
    bens = ucma("search", folder, "bike", "--user", "ben", "--json").json()["results"]
    assert bens and {r["user_id"] for r in bens} == {"ben"}
    assert ucma("search", folder, "bike", "--no-user", "--json").json()["results"] == []


def test_show_a_memory_with_edges_neighbours_and_retention(folder: Path) -> None:
    fact = fact_id(folder)
    text = ucma("show", folder, fact)
    assert text.code == 0 and "Ana lives in Lisbon" in text.out and "retention" in text.out
    assert "Edges (2)" in text.out and "entity “Lisbon”" in text.out
    data = ucma("show", folder, fact, "--json").json()
    assert data["record"]["subject"] == "Ana" and 0 < data["retention"]["now"] <= 1
    assert {e["type"] for e in data["edges"]} == {"subject", "object"}
    entity = next(e["to"] for e in data["edges"] if e["type"] == "object")
    shown = ucma("show", folder, entity)
    assert shown.code == 0 and "entity “Lisbon”" in shown.out
    episode = ids_of(folder, "ana")[-1]
    hood = ucma("show", folder, episode, "--json").json()
    assert any(e["type"] == "followed_by" for e in hood["edges"]) and hood["neighbours"]


def test_consolidate_is_a_dry_run_unless_applied(folder: Path) -> None:
    before = ids_of(folder)
    dry = ucma("consolidate", folder, "--json")
    assert dry.code == 0 and dry.json()["dry_run"] is True
    assert set(dry.json()["phases"]) == {
        "compress",
        "group",
        "extract",
        "patterns",
        "merge",
        "transitions",
        "reinforce",
        "prune",
    }
    assert ids_of(folder) == before
    one = ucma("consolidate", folder, "--phase", "compress", "--apply", "--json").json()
    assert one["dry_run"] is False and list(one["phases"]) == ["compress"]
    assert one["phases"]["compress"]["moved_to_medium_term"] == 12
    assert ucma("consolidate", folder, "--apply", "--dry-run").code == 2
    text = ucma("consolidate", folder)
    assert "dry run" in text.out and "--apply" in text.out


def test_prune_lists_then_forgets(folder: Path) -> None:
    before = ids_of(folder)
    dry = ucma("prune", folder, "--json")
    plan = dry.json()
    assert dry.code == 0 and plan["dry_run"] is True and plan["forgotten"]
    assert ids_of(folder) == before
    assert "important" in plan["protected"]  # the fact, stored with importance 0.95
    applied = ucma("prune", folder, "--apply", "--json").json()
    assert applied["dry_run"] is False and applied["forgotten"] == plan["forgotten"]
    assert set(ids_of(folder)) == set(before) - set(plan["forgotten"])


def test_verify_and_repair(folder: Path) -> None:
    ok = ucma("verify", folder, "--deep")
    assert ok.code == 0 and ok.out.startswith("consistent:")
    data = ucma("verify", folder, "--json").json()
    assert data["ok"] is True and data["checks"]["chroma_records"] == 14 and data["repair"] is None
    before = ids_of(folder)
    shutil.rmtree(folder / "chroma")
    refused = ucma("info", folder)
    assert refused.code == 1 and "ucma verify PATH --repair" in refused.err and refused.err.count("\n") == 1
    plan = ucma("verify", folder, "--json")
    assert plan.code == 1 and plan.json()["needs_repair"] is True and plan.json()["plan"]
    assert not (folder / "chroma").exists()  # verify alone changes nothing
    repaired = ucma("verify", folder, "--repair")
    assert repaired.code == 0 and "consistent: 14 records" in repaired.out
    assert sorted(ids_of(folder)) == sorted(before)


def test_export_and_import_round_trip(folder: Path, tmp_path: Path) -> None:
    file = tmp_path / "export.jsonl"
    exported = ucma("export", folder, file, "--json")
    assert exported.code == 0 and exported.json()["memories"] == 14 and file.exists()
    copy = tmp_path / "copy"
    imported = ucma("import", file, copy, "--json").json()
    assert imported["created"] is True and imported["memories"] == 14 and imported["embedded"] == 0
    assert ids_of(copy) == ids_of(folder)
    again = ucma("import", file, copy, "--json").json()
    assert (again["memories"], again["skipped"]) == (0, 14)
    small = ucma("import", file, tmp_path / "small", "--embedder", "hashing:64", "--json").json()
    assert small["embedder"] == "hashing-64" and small["embedded"] == 14
    stdout = ucma("export", folder, "-", "--no-vectors")
    first = json.loads(stdout.out.splitlines()[0])
    assert first["format"] == "ucma-export" and first["vectors"] is None and "exported 14" in stdout.err


def test_import_refuses_what_it_should(folder: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header", "format": "ucma-export", "version": 1}\n{"kind": "memory"}\n')
    target = tmp_path / "target"
    result = ucma("import", bad, target)
    assert result.code == 2 and result.err.startswith("ucma: error:") and not target.exists()
    file = tmp_path / "export.jsonl"
    ucma("export", folder, file)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(file.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    result = ucma("import", cut, target)
    assert result.code == 2 and "cut short" in result.err and not target.exists()
    unrelated = tmp_path / "photos"
    unrelated.mkdir()
    (unrelated / "cat.jpg").write_bytes(b"meow")
    result = ucma("import", file, unrelated)
    assert result.code == 1 and "not a UCMA memory folder" in result.err
    assert sorted(p.name for p in unrelated.iterdir()) == ["cat.jpg"]


def test_forget_user(folder: Path) -> None:
    dry = ucma("forget-user", folder, "ben", "--dry-run", "--json").json()
    assert dry == {"user_id": "ben", "dry_run": True, "memories": 4}
    assert len(ids_of(folder, "ben")) == 4
    done = ucma("forget-user", folder, "ben")
    assert done.code == 0 and "forgot 4 memories" in done.out
    assert ids_of(folder, "ben") == [] and len(ids_of(folder, "ana")) == 10


def test_usage_errors_exit_2(folder: Path) -> None:
    assert ucma().code == 2
    assert ucma("bogus").code == 2
    assert ucma("search", folder).code == 2  # no query
    bad_k = ucma("search", folder, "x", "-k", "0")
    assert bad_k.code == 2 and bad_k.err == "ucma: error: k must be an int in 1..1000, got 0\n"
    assert ucma("info", folder, "--embedder", "word2vec").code == 2
    assert ucma("--help").code == 0


def test_failures_exit_1_with_one_line(folder: Path, tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    result = ucma("info", nowhere)
    assert result.code == 1 and result.err == f"ucma: error: no memory folder at {nowhere}\n"
    assert not nowhere.exists()  # a command never creates the folder it was asked to read
    with Memory(folder):  # ucma() runs the command in this process: the error says so
        locked = ucma("info", folder)
    assert locked.code == 1 and "already open in this process" in locked.err and locked.err.count("\n") == 1
    wrong = ucma("info", folder, "--embedder", "hashing:64")
    assert wrong.code == 1 and "--embedder" in wrong.err


def test_plot_commands_write_images(folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    fact = fact_id(folder)
    runs: list[list[str | Path]] = [
        ["plot", "forgetting", folder, fact, *ids_of(folder, "ana")[:2], "-o", tmp_path / "f.png"],
        ["plot", "graph", folder, "--entity", "Ana", "--user", "ana", "-o", tmp_path / "g.png"],
        ["plot", "signals", folder, "hiking", "-o", tmp_path / "s.png", "--json"],
    ]
    for argv in runs:
        result = ucma(*argv)
        assert result.code == 0, result.err
    for name in ("f.png", "g.png", "s.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ucma("plot", "graph", folder, "no-such-id", "-o", tmp_path / "x.png").code == 1
    endless = ucma("plot", "forgetting", folder, fact, "--days", "inf", "-o", tmp_path / "inf.png")
    assert endless.code == 2 and "days_after" in endless.err and not (tmp_path / "inf.png").exists()
