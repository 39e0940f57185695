"""The public API type-checks through every call: a misspelt keyword through an async
partner or a bound view fails mypy, as it does through the sync method; every package
ships ``py.typed`` so installed copies are checked too."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WRONG = """
from ucma_core import Memory


async def wrong(mem: Memory) -> None:
    view = mem.scope(user_id="ana")
    await mem.aremember("q", kk=3)  # line 7
    view.remember("q", kk=3)  # line 8
    await view.aremember("q", kk=3)  # line 9
    await mem.aobserve("hello", user="ana")  # line 10
    view.observe("hello", user_id="ben")  # line 11
    n: str = await mem.aforget("m1")  # line 12: returns a bool
    mem.observe_many(["x"], user_idd="ana")  # line 13
    await view.aobserve_many(["x"], user_id="ben")  # line 14
"""

RIGHT = """
from ucma_core import Memory, RetrievalResult


async def right(mem: Memory) -> list[RetrievalResult]:
    view = mem.scope(user_id="ana", session_id="s1")
    memory_id = await mem.aobserve("hello", user_id="ana", keep=True)
    assert memory_id is not None
    view.observe("again", importance=0.4, tags=["t"])
    await view.aobserve_many(["one", {"content": "two"}], progress=None, keep=True, tags=["t"])
    mem.observe_many(["three"], user_id="ana", session_id="s2")
    assert (await view.aget(memory_id)) is not None
    found: bool = await mem.aforget(memory_id, user_id="ana")
    assert found or not found
    return await mem.aremember("q", k=3, user_id="ana") + await view.aremember("q", k=2)
"""


def _mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **sources: str) -> dict[str, list[str]]:
    """mypy --strict over ``sources`` (name -> code), following the imports of this tree
    silently; the error lines per file."""
    api = pytest.importorskip("mypy.api")
    for name, code in sources.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(code))
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nignore_missing_imports = True\n")
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    monkeypatch.chdir(tmp_path)
    stdout, stderr, _ = api.run(
        [
            "--config-file",
            str(config),
            "--follow-imports=silent",
            "--cache-dir",  # the tree's own cache (git-ignored): warm after the first run
            str(ROOT / ".mypy_cache" / "snippets"),
            *(f"{name}.py" for name in sources),
        ]
    )
    assert not stderr, stderr
    errors: dict[str, list[str]] = {name: [] for name in sources}
    for line in stdout.splitlines():
        if ": error: " in line:
            errors[line.split(".py:", 1)[0]].append(line)
    return errors


@pytest.mark.slow  # mypy analyses ucma_core (~20 s with a cold cache)
def test_a_misspelt_keyword_through_a_partner_or_a_view_fails_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors = _mypy(tmp_path, monkeypatch, wrong=WRONG, right=RIGHT)
    assert errors["right"] == []
    lines = sorted(int(e.split(":")[1]) for e in errors["wrong"])
    assert lines == [7, 8, 9, 10, 11, 12, 13, 14], "\n".join(errors["wrong"])
    assert all('"kk"' in e for e in errors["wrong"][:3])


@pytest.mark.parametrize("package", ["ucma_core", "ucma_langchain", "ucma_llamaindex"])
def test_every_package_ships_py_typed(package: str) -> None:
    assert (ROOT / package / "py.typed").is_file()
