"""benchmarks/chat_turns.py: a tiny conversation runs both systems and prints the table the
README quotes (each turn one write and one search for the same user)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import chat_turns


@pytest.mark.slow
def test_tiny_conversation_prints_both_systems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert chat_turns.main(["--n", "60", "--turns", "4", "--tmp", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "×" in line]
    assert [line.split("|")[1].strip().split(" (")[0] for line in rows] == [
        "write",
        "search",
        "search",
        "whole turn, p50 ms",
        "CPU per turn, ms",
    ]
    for line in rows:
        chroma, ucma = (float(cell) for cell in line.split("|")[2:4])
        assert chroma > 0 and ucma > 0
    assert not any(tmp_path.iterdir())  # each system's folder is removed
