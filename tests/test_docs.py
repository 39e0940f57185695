"""Every Python example in README.md and docs/ runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)

EXAMPLES = [
    pytest.param(code, id=f"{path.name}:{n}")
    for path in FILES
    for n, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), 1)
]


@pytest.mark.parametrize("code", EXAMPLES)
def test_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if 'Memory("./agent_memory")' in code or "Memory('./agent_memory')" in code:
        pytest.importorskip("onnxruntime")
    exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})
