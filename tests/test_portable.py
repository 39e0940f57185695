"""Export to a JSON-lines file and import again: nothing lost, nothing invented, bad files refused."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_core.portable import FORMAT, export_memory, import_memory, observe_all, read_header
from ucma_core.records import MemoryRecord

START = 1_750_000_000.0
DAY = 86_400.0
QUERIES: list[tuple[str, Any]] = [
    ("where does Ana live?", "ana"),
    ("what did Ben say about the Alps?", "ben"),
    ("how do I deploy?", "ana"),
    ("hiking in the mountains", ANY),
    ("moving to Lisbon", None),
    ("passport", "ana"),
    ("what happened last week?", "ana"),
]


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def build(memory: Memory, clock: Clock) -> dict[str, str]:
    """A memory with every kind of record, supersession, links, keys, reinforcement and one
    sleep cycle (so the graph carries consolidation's edges and marks)."""
    for day in range(6):
        for user in ("ana", "ben", None):
            name = user or "someone"
            memory.observe_many(
                [
                    {
                        "content": f"Day {day}: {name} loves hiking in the Alps and fixed the build by "
                        "clearing the cache.",
                        "participants": [name],
                    },
                    {
                        "content": f"{name} moved to Lisbon in May {2020 + day}",
                        "key": f"move-{day}",
                        "tags": ["move"],
                        "metadata": {"turn": day, "topic": "move"},
                    },
                ],
                user_id=user,
                session_id=f"s{day // 2}",
            )
        clock.now += DAY
    memory.assert_fact("Ana", "lives in", "Porto", user_id="ana")
    lisbon = memory.assert_fact("Ana", "lives in", "Lisbon", user_id="ana", exclusive=True)
    deploy = memory.add_procedure("deploy", ["build", "test", "ship"], trigger_tags=["deploy"], user_id="ana")
    for ok in (True, True, True, False):
        memory.record_outcome(deploy.id, ok)
    lesson = memory.learn("Clear the cache when builds fail", applicability=["build"], user_id="ana")
    memory.validate_learning(lesson.id, True)
    passport = memory.intend("Remind Ana about her passport", ["passport"], user_id="ana")
    memory.link(lisbon.id, lesson.id, "related_to", 0.42)
    memory.consolidate()
    clock.now += DAY
    memory.remember("where does Ana live?", user_id="ana")
    return {"fact": lisbon.id, "intention": passport.id, "procedure": deploy.id}


def snapshot(memory: Memory) -> tuple[list[MemoryRecord], set[tuple[str, str, str, float]]]:
    records = memory.list_memories(user_id=ANY, limit=100_000, newest_first=False)
    edges: set[tuple[str, str, str, float]] = set()
    for record in records:
        edges.update(memory.edges(record.id))
    return records, edges


def answers(memory: Memory) -> list[list[tuple[str, float]]]:
    return [[(r.id, r.score) for r in memory.remember(q, user_id=u, k=5)] for q, u in QUERIES]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], float]:
    """:func:`build`'s memories in a closed folder, made once: ``(folder, ids, clock after)``."""
    clock = Clock()
    folder = tmp_path_factory.mktemp("built") / "source"
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(importance_threshold=0)
    ) as m:
        ids = build(m, clock)
    return folder, ids, clock.now


@pytest.fixture
def source(
    built: tuple[Path, dict[str, str], float], tmp_path: Path, clock: Clock
) -> tuple[Path, dict[str, str]]:
    """A copy of the built folder for one test, with the clock where the build left it."""
    folder, ids, now = built
    copy = tmp_path / "source"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("LOCK"))
    clock.now = now
    return copy, ids


def open_at(folder: Path, clock: Clock, embedder: HashingEmbedder | None = None) -> Memory:
    return Memory(
        folder,
        embedder=embedder or HashingEmbedder(),
        clock=clock,
        config=MemoryConfig(importance_threshold=0),
    )


def test_round_trip_keeps_records_edges_and_answers(
    source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock
) -> None:
    folder, ids = source
    file = tmp_path / "export.jsonl"
    with open_at(folder, clock) as original:
        report = export_memory(original, file)
        records, edges = snapshot(original)
        stats = original.stats()
        expected = answers(original)
        cycle = original.consolidate(now=clock.now + DAY)
    assert report.memories == len(records) == stats["memories"]
    assert report.entities == stats["entities"] > 0
    assert report.edges == len(edges) > len(records)
    assert {t for _, _, t, _ in edges} >= {
        "followed_by",
        "consolidates",
        "supersedes",
        "similar_to",
        "subject",
    }

    with open_at(tmp_path / "copy", clock) as copy:
        imported = import_memory(copy, file)
        copy.flush()  # scores compare to 6 decimals: a record waiting for Chroma can differ in the 6th
        assert (imported.memories, imported.skipped, imported.embedded) == (len(records), 0, 0)
        assert imported.edges == len(edges) and imported.edges_skipped == 0
        assert snapshot(copy) == (records, edges)
        assert copy.verify().ok
        copied = copy.stats()
        assert (copied["entities"], copied["graph_edges"]) == (stats["entities"], stats["graph_edges"])
        assert answers(copy) == expected
        # consolidation's marks came along: the next cycle does what it does on the original
        assert copy.consolidate(now=clock.now + DAY).phases == cycle.phases
        # the indexes behind keys, sessions and intentions work in the importing process
        ana = copy.get_by_key("move-2", user_id="ana")
        assert ana is not None and copy.observe("again", user_id="ana", key="move-2") == ana.id
        assert len(copy.history(session_id="s1", user_id="ben")) == 4
        copy.observe("I renewed my passport today", user_id="ana", keep=True)
        assert [i.id for i in copy.intentions(status="triggered", user_id="ana")] == [ids["intention"]]


def test_reopened_import_is_the_same(
    source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock
) -> None:
    folder, _ = source
    file = tmp_path / "export.jsonl"
    with open_at(folder, clock) as original:
        export_memory(original, file)
        before = snapshot(original)
    with open_at(tmp_path / "copy", clock) as copy:
        import_memory(copy, file)
    with Memory(tmp_path / "copy", clock=clock) as reopened:  # the folder names its embedder
        assert snapshot(reopened) == before


def test_import_with_another_embedder_reembeds(
    source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock
) -> None:
    folder, ids = source
    file = tmp_path / "export.jsonl"
    with open_at(folder, clock) as original:
        export_memory(original, file)
        records, edges = snapshot(original)
    with open_at(tmp_path / "small", clock, HashingEmbedder(64)) as small:
        report = import_memory(small, file)
        assert report.embedded == report.memories == len(records)
        assert snapshot(small) == (records, edges)
        top = small.remember("where does Ana live?", user_id="ana", k=3)
        assert ids["fact"] in [r.id for r in top]


def test_export_without_vectors(source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock) -> None:
    folder, _ = source
    file = tmp_path / "plain.jsonl"
    with open_at(folder, clock) as original:
        export_memory(original, file, vectors=False)
        expected = answers(original)
    lines = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["format"] == FORMAT and lines[0]["vectors"] is None
    assert not any("vector" in line for line in lines)
    with open_at(tmp_path / "copy", clock) as copy:
        report = import_memory(copy, file)
        copy.flush()  # (as above: the answers are compared once Chroma holds every record)
        assert report.embedded == report.memories
        assert answers(copy) == expected  # the same deterministic embedder gives the same vectors


def test_import_twice_changes_nothing(
    source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock
) -> None:
    folder, _ = source
    file = tmp_path / "export.jsonl"
    with open_at(folder, clock) as original:
        export_memory(original, file)
    with open_at(tmp_path / "copy", clock) as copy:
        first = import_memory(copy, file)
        after_first = snapshot(copy)
        second = import_memory(copy, file)
        assert (second.memories, second.skipped) == (0, first.memories)
        assert snapshot(copy) == after_first


def test_import_merges_into_a_folder_with_its_own_memories(tmp_path: Path, clock: Clock) -> None:
    with open_at(tmp_path / "a", clock) as a:
        a.observe("Ana likes tea", user_id="ana", key="m1", keep=True)
        a.observe("Ana takes the train", user_id="ana", keep=True)
        export_memory(a, tmp_path / "a.jsonl")
    with open_at(tmp_path / "b", clock) as b:
        own = b.observe("Ana likes coffee", user_id="ana", key="m1", keep=True)
        report = import_memory(b, tmp_path / "a.jsonl")
        assert (report.memories, report.key_conflicts) == (1, 1)
        assert b.get_by_key("m1", user_id="ana").id == own  # type: ignore[union-attr]
        assert len(b.list_memories(user_id="ana")) == 2


def test_export_to_a_stream_matches_the_file(
    source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock
) -> None:
    folder, _ = source
    stream = io.StringIO()
    with open_at(folder, clock) as original:
        export_memory(original, tmp_path / "file.jsonl")
        report = export_memory(original, stream)
    assert report.path is None

    def drop(text: str) -> list[str]:
        return [line for line in text.splitlines() if '"exported_at"' not in line]

    assert drop(stream.getvalue()) == drop((tmp_path / "file.jsonl").read_text(encoding="utf-8"))


def test_progress_is_reported(source: tuple[Path, dict[str, str]], tmp_path: Path, clock: Clock) -> None:
    folder, _ = source
    calls: list[tuple[int, int, str]] = []
    with open_at(folder, clock) as original:
        export_memory(
            original, tmp_path / "e.jsonl", progress=lambda d, t, label: calls.append((d, t, label))
        )
    assert calls[-1][0] == calls[-1][1] > 0 and {c[2] for c in calls} == {"export"}
    calls.clear()
    with open_at(tmp_path / "copy", clock) as copy:
        import_memory(copy, tmp_path / "e.jsonl", progress=lambda d, t, label: calls.append((d, t, label)))
    labels = [c[2] for c in calls]
    assert labels[0] == "check" and labels[-1] == "import"
    assert calls[-1][0] == calls[-1][1] > 0


def test_observe_all_batches_with_progress(tmp_path: Path, clock: Clock) -> None:
    calls: list[tuple[int, int, str]] = []
    with open_at(tmp_path / "m", clock) as memory:
        items = [f"note number {n}" for n in range(25)]
        ids = observe_all(
            memory,
            items,
            batch_size=10,
            progress=lambda d, t, label: calls.append((d, t, label)),
            user_id="ana",
        )
        assert len(ids) == 25 and all(ids)
        assert len(memory.list_memories(user_id="ana")) == 25
    assert calls == [(0, 25, "observe"), (10, 25, "observe"), (20, 25, "observe"), (25, 25, "observe")]
    with pytest.raises(InvalidInputError):
        observe_all(memory, "one string", batch_size=10)


def test_export_of_a_closed_memory_writes_no_file(tmp_path: Path, clock: Clock) -> None:
    memory = open_at(tmp_path / "m", clock)
    memory.close()
    with pytest.raises(ClosedMemoryError):
        export_memory(memory, tmp_path / "out.jsonl")
    assert list(tmp_path.glob("out.jsonl*")) == []


# ------------------------------------------------------------------ files that must be refused
def _exported(tmp_path: Path, clock: Clock) -> list[dict[str, Any]]:
    with open_at(tmp_path / "m", clock) as memory:
        memory.observe("Ana moved to Lisbon", user_id="ana", keep=True)
        memory.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
        export_memory(memory, tmp_path / "good.jsonl")
    return [json.loads(line) for line in (tmp_path / "good.jsonl").read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _first_memory(lines: list[dict[str, Any]]) -> int:
    return next(n for n, line in enumerate(lines) if line["kind"] == "memory")


def _user_hijack(lines: list[dict[str, Any]]) -> None:
    lines[_first_memory(lines)]["state"] = {"user_id": "ben"}


def _unknown_field(lines: list[dict[str, Any]]) -> None:
    lines[_first_memory(lines)]["record"]["colour"] = "blue"


def _bad_number(lines: list[dict[str, Any]]) -> None:
    lines[_first_memory(lines)]["record"]["stability"] = "long"


def _short_vector(lines: list[dict[str, Any]]) -> None:
    lines[_first_memory(lines)]["vector"] = "AAAA"


def _no_end(lines: list[dict[str, Any]]) -> None:
    lines.pop()


def _new_version(lines: list[dict[str, Any]]) -> None:
    lines[0]["version"] = 99


def _bad_edge(lines: list[dict[str, Any]]) -> None:
    next(line for line in lines if line["kind"] == "edge")["weight"] = 7


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_user_hijack, "state may not set"),
        (_unknown_field, "unknown field"),
        (_bad_number, "stability must be a finite number"),
        (_short_vector, "dimensions"),
        (_no_end, "cut short"),
        (_new_version, "version 99"),
        (_bad_edge, "edge weight"),
    ],
)
def test_a_bad_file_is_refused_and_stores_nothing(
    tmp_path: Path, clock: Clock, damage: Any, message: str
) -> None:
    lines = _exported(tmp_path, clock)
    damage(lines)
    file = _write(tmp_path / "bad.jsonl", lines)
    with open_at(tmp_path / "target", clock) as target:
        with pytest.raises(InvalidInputError, match=message):
            import_memory(target, file)
        assert target.stats()["memories"] == 0 and target.stats()["graph_nodes"] == 0


def test_line_numbers_and_non_exports(tmp_path: Path, clock: Clock) -> None:
    lines = _exported(tmp_path, clock)
    file = tmp_path / "broken.jsonl"
    text = "".join(json.dumps(line) + "\n" for line in lines).splitlines(keepends=True)
    text[2] = "{not json\n"
    file.write_text("".join(text), encoding="utf-8")
    other = _write(tmp_path / "other.jsonl", [{"hello": "world"}])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with open_at(tmp_path / "target", clock) as target:
        with pytest.raises(InvalidInputError, match="line 3"):
            import_memory(target, file)
        with pytest.raises(InvalidInputError, match="not a UCMA export"):
            import_memory(target, other)
        with pytest.raises(InvalidInputError, match="empty"):
            read_header(empty)
    header = read_header(tmp_path / "good.jsonl")
    assert (header.embedder_name, header.dimension, header.vectors) == ("hashing-256", 256, True)
    assert header.counts == {"memories": 2, "entities": 2, "edges": 2}


def test_public_names() -> None:
    import ucma_core.portable
    import ucma_core.progress

    assert ucma_core.portable.__all__ == [
        "FORMAT",
        "VERSION",
        "ExportHeader",
        "ExportReport",
        "ImportReport",
        "export_memory",
        "import_memory",
        "observe_all",
        "read_header",
    ]
    assert ucma_core.progress.__all__ == [
        "ProgressCallback",
        "TerminalProgress",
        "TextProgress",
        "auto_progress",
        "notify",
    ]


def test_progress_reporters() -> None:
    from ucma_core.progress import TerminalProgress, TextProgress, auto_progress

    quiet = io.StringIO()
    TerminalProgress(quiet)(1, 2, "import")  # not a terminal: draws nothing
    assert quiet.getvalue() == "" and auto_progress(quiet) is None
    drawn = io.StringIO()
    bar = TerminalProgress(drawn, force=True, min_interval=0.0)
    for done in range(3):
        bar(done, 2, "import")
    bar(0, 0, "check")
    bar.close()
    lines = drawn.getvalue().split("\n")
    assert "import [" in lines[0] and "2/2" in lines[0] and lines[0].count("\r") == 3
    assert lines[1].startswith("\rcheck 0 done")
    text = io.StringIO()
    every = TextProgress(text, step=25)
    for done in range(9):
        every(done, 8, "export")
    assert text.getvalue().splitlines() == [
        "export: 0/8 (0%)",
        "export: 2/8 (25%)",
        "export: 4/8 (50%)",
        "export: 6/8 (75%)",
        "export: 8/8 (100%)",
    ]


def test_docstring_examples_run() -> None:
    import doctest

    import ucma_core.portable
    import ucma_core.progress

    for module in (ucma_core.portable, ucma_core.progress):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0
