"""What each extra installs: the frameworks it uses and no other, the token table in the
core, and the SQLite checkpoint library bounded to the releases its tables were tested with."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, object]:
    data: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return data


def _names(requirements: object) -> set[str]:
    assert isinstance(requirements, list)
    return {re.split(r"[\[<>=;~! ]", r, maxsplit=1)[0] for r in requirements}


def test_extras_pull_only_what_they_use() -> None:
    project = _project()
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    assert "tiktoken" in _names(project["dependencies"])  # the core counts tokens itself
    assert "llama-index-core" not in _names(extras["local"])
    assert "langchain-classic" in _names(extras["langchain"])  # UCMAMemory
    assert not {"langchain-classic", "ucma"} & _names(extras["langgraph"])
    (sqlite,) = (r for r in extras["langgraph"] if r.startswith("langgraph-checkpoint-sqlite"))
    assert "<" in sqlite, "the checkpointer's SQL needs an upper bound on langgraph-checkpoint-sqlite"


def test_the_token_table_is_package_data() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "data/*.tiktoken" in data["ucma_core"]
    assert (ROOT / "ucma_core" / "data" / "cl100k_base.tiktoken").is_file()


def test_installed_sqlite_checkpointer_is_within_the_pin() -> None:
    from importlib.metadata import version

    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    (pin,) = (r for r in extras["langgraph"] if r.startswith("langgraph-checkpoint-sqlite"))
    installed = tuple(int(p) for p in version("langgraph-checkpoint-sqlite").split(".")[:3])
    low, high = pin.split(">=")[1].split(",<")
    assert tuple(int(p) for p in low.split(".")) <= installed < tuple(int(p) for p in high.split("."))


def test_the_langgraph_agent_runs_without_langchain_classic_or_llama_index(tmp_path: Path) -> None:
    """The headline LangGraph example in a process where neither is importable."""
    script = textwrap.dedent(
        """
        import sys
        sys.modules["langchain_classic"] = None
        sys.modules["llama_index"] = None
        from ucma_core import Memory
        from ucma_core.embedders import HashingEmbedder
        from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore, create_memory_agent

        ana = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        with Memory(sys.argv[1], embedder=HashingEmbedder()) as mem:
            with UCMACheckpointer(mem) as saver:
                agent = create_memory_agent(mem, checkpointer=saver, store=UCMAStore(mem))
                agent.invoke({"messages": [("user", "Remember that my cat is called Miso")]}, ana)
                out = agent.invoke({"messages": [("user", "What is my cat called?")]}, ana)
                print(out["messages"][-1].content)
        """
    )
    pytest.importorskip("langgraph")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "memory")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Miso" in done.stdout
