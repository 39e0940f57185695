"""Plots from a real memory folder: each writes a non-empty PNG; the numbers behind them are right."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.dynamics.retention import DAY, retention
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DependencyMissingError, InvalidInputError, MemoryNotFoundError
from ucma_core.plots import (
    fade_threshold,
    neighbourhood,
    plot_forgetting_curves,
    plot_memory_graph,
    plot_signals,
    retention_curve,
    score_contributions,
)

PNG = b"\x89PNG\r\n\x1a\n"
START = 1_750_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def memory(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    """A memory folder that was written, closed and opened again, with reviews at known times."""
    folder = tmp_path / "memory"
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(importance_threshold=0)
    ) as m:
        hike = m.observe("Ana went hiking in the Alps with her sister", user_id="ana", session_id="s1")
        move = m.observe("Ana moved to Lisbon in May", user_id="ana", session_id="s1")
        m.observe("Ben bought a red bike", user_id="ben", session_id="b1")
        assert hike is not None and move is not None
        m.assert_fact("Ana", "lives in", "Lisbon", user_id="ana", source_ids=[move])
        m.assert_fact("Ana", "likes", "hiking", user_id="ana", source_ids=[hike])
        for days in (2, 5, 9):
            clock.now += days * DAY
            assert m.reinforce([move]) == 1  # reviewed: the app used it
    reopened = Memory(folder, clock=clock, config=MemoryConfig(importance_threshold=0))
    yield reopened
    reopened.close()


def episode(memory: Memory, text: str) -> str:
    return next(r.id for r in memory.list_memories(user_id=ANY) if r.content == text)


def is_png(path: Path) -> bool:
    return path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG


def test_forgetting_curves_png(memory: Memory, tmp_path: Path, clock: Clock) -> None:
    move = episode(memory, "Ana moved to Lisbon in May")
    hike = episode(memory, "Ana went hiking in the Alps with her sister")
    record = memory.get(move)
    assert record is not None and record.access_count == 3
    reviews = {move: [START, START + 2 * DAY, START + 7 * DAY, START + 16 * DAY]}
    figure = plot_forgetting_curves(memory, [move, hike], tmp_path / "forgetting.png", reviews=reviews)
    assert is_png(tmp_path / "forgetting.png")
    assert figure.axes and figure.axes[0].get_xlabel() == "days from now"
    with pytest.raises(MemoryNotFoundError):
        plot_forgetting_curves(memory, ["no-such-id"])
    with pytest.raises(InvalidInputError):
        plot_forgetting_curves(memory, [])


@pytest.mark.parametrize(
    "window",
    [
        {"days_before": float("nan")},
        {"days_after": float("inf")},
        {"days_before": -1.0},
        {"days_after": 1e9},
        {"days_before": 0.0, "days_after": 0.0},
    ],
)
def test_forgetting_curves_refuse_a_window_that_is_not_days(
    memory: Memory, tmp_path: Path, window: dict[str, float]
) -> None:
    move = episode(memory, "Ana moved to Lisbon in May")
    with pytest.raises(InvalidInputError, match="days"):
        plot_forgetting_curves(memory, [move], tmp_path / "never.png", **window)
    assert not (tmp_path / "never.png").exists()


def test_retention_curve_is_exact_after_the_last_review(memory: Memory, clock: Clock) -> None:
    record = memory.get(episode(memory, "Ana moved to Lisbon in May"))
    assert record is not None
    start, end = START, clock.now + 30 * DAY
    reviews = [START, START + 2 * DAY, START + 7 * DAY]
    times, values = retention_curve(record, memory.config, start=start, end=end, reviews=reviews)
    assert times == sorted(times) and times[0] == start and times[-1] == end
    after = [(t, v) for t, v in zip(times, values, strict=True) if t > record.last_access]
    assert after and all(v == retention(record.stability, record.last_access, t) for t, v in after)
    # each review before the last lifts the curve back to 1
    assert values.count(1.0) >= len(reviews)
    assert fade_threshold(record, memory.config) == memory.config.forgetting.retention_threshold


def test_memory_graph_png_around_a_memory_and_an_entity(memory: Memory, tmp_path: Path) -> None:
    move = episode(memory, "Ana moved to Lisbon in May")
    hood = neighbourhood(memory, move, hops=2)
    assert hood.center == move and hood.nodes[move][0] == "episodic"
    assert all(u in hood.nodes and v in hood.nodes for u, v, _, _ in hood.edges)
    assert any(kind == "entity" for kind, _ in hood.nodes.values())
    plot_memory_graph(memory, move, tmp_path / "graph.png", hops=2)
    assert is_png(tmp_path / "graph.png")
    around_ana = neighbourhood(memory, entity="Ana", user_id="ana")
    assert around_ana.nodes[around_ana.center] == ("entity", "Ana")
    assert {label for kind, label in around_ana.nodes.values() if kind == "semantic"} == {
        "Ana lives in Lisbon",
        "Ana likes hiking",
    }
    plot_memory_graph(memory, entity="Ana", user_id="ana", path=tmp_path / "entity.png")
    assert is_png(tmp_path / "entity.png")
    with pytest.raises(MemoryNotFoundError):
        neighbourhood(memory, entity="Carla", user_id="ana")
    with pytest.raises(InvalidInputError):
        neighbourhood(memory)


def test_signals_png_and_contributions(memory: Memory, tmp_path: Path) -> None:
    results = memory.remember("where does Ana live?", user_id="ana", k=5)
    assert results
    for result in results:
        parts = score_contributions(result, memory.config.ranking)
        assert sum(parts.values()) == pytest.approx(result.score, abs=1e-5)
    plot_signals(results, tmp_path / "signals.png", ranking=memory.config.ranking)
    assert is_png(tmp_path / "signals.png")
    plot_signals(results, tmp_path / "signals.svg")
    assert (tmp_path / "signals.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    with pytest.raises(InvalidInputError):
        plot_signals([])


def test_drawing_leaves_pyplot_alone(memory: Memory, tmp_path: Path) -> None:
    had_pyplot = "matplotlib.pyplot" in sys.modules
    plot_memory_graph(memory, entity="Ana", user_id="ana", path=tmp_path / "g.png")
    assert ("matplotlib.pyplot" in sys.modules) == had_pyplot


def test_missing_matplotlib_is_a_clear_error(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(DependencyMissingError, match=r"ucma\[plots\]"):
        plot_signals(memory.remember("Ana", user_id="ana"), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_public_names() -> None:
    import ucma_core.plots

    assert ucma_core.plots.__all__ == [
        "Neighbourhood",
        "fade_threshold",
        "neighbourhood",
        "plot_forgetting_curves",
        "plot_memory_graph",
        "plot_signals",
        "retention_curve",
        "score_contributions",
    ]


def test_docstring_examples_run() -> None:
    import doctest

    import ucma_core.plots.forgetting
    import ucma_core.plots.signals

    for module in (ucma_core.plots.forgetting, ucma_core.plots.signals):
        failed, attempted = doctest.testmod(module)
        assert attempted > 0 and failed == 0
