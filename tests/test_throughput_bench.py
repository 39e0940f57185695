"""benchmarks/throughput.py: a tiny run creates its ``--tmp`` folder and writes its sizes' rows
into the README's marked table, leaving the rows of other sizes (a 100k run) in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import throughput


@pytest.mark.slow
def test_tiny_run_writes_the_readme_block(tmp_path: Path) -> None:
    begin, end = throughput._block_marks("hashing")
    old_row, old_note = "| 100,000 | x | 1 | 2 | 2.00× | |", "- 100,000: an earlier run"
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{begin}\n{old_row}\n\n{old_note}\n{end}\nAfter.\n", encoding="utf-8")
    tmp = tmp_path / "not" / "yet"  # --tmp DIR is created when missing
    argv = ["--embedder", "hashing", "--phases", "full", "--queries", "3", "--sizes", "40"]
    assert throughput.main([*argv, "--tmp", str(tmp), "--readme", str(readme)]) == 0
    assert tmp.is_dir()

    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# Title\n\n{begin}\n") and text.endswith(f"{end}\nAfter.\n")
    block = text[text.index(begin) : text.index(end)]
    rows = [line for line in block.splitlines() if line.startswith("| 40 |")]
    metrics = " / ".join(line.split("|")[2] for line in rows)
    for wanted in ("one by one", "p50", "p95", "bulk", "peak RSS, + queries"):
        assert wanted in metrics
    assert all(line.count("×") == 1 or line.count("×") == 2 for line in rows)  # a ratio, maybe a goal
    assert "- 40: one run" in block and "--sizes 40" in block  # how to reproduce it
    assert block.index("| 40 |") < block.index(old_row) < block.index("- 40:") < block.index(old_note)
