"""The package: public names, and one clear error per missing extra (docstring examples run
with pytest's --doctest-modules)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ucma_langchain

REPO = Path(__file__).resolve().parents[2]

PUBLIC = [
    "MEMORY_TOOL_NAMES",
    "LangChainChatTransport",
    "LangChainEmbedder",
    "UCMAChatMessageHistory",
    "UCMAMemory",
    "UCMAMiddleware",
    "UCMARetriever",
    "create_memory_tools",
    "from_episode",
    "from_episodes",
    "langchain_provider",
    "to_document",
    "to_langchain_tool",
    "to_turn",
    "to_turns",
]


def test_public_names_are_frozen() -> None:
    assert ucma_langchain.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(ucma_langchain, name) is not None
    with pytest.raises(AttributeError):
        _ = ucma_langchain.NoSuchThing


def run_without(blocked: list[str], code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child where importing any of ``blocked`` fails as if not installed."""
    block = "".join(f"sys.modules[{name!r}] = None\n" for name in blocked)
    return subprocess.run(
        [sys.executable, "-c", f"import sys\n{block}{code}"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("blocked", "code", "feature", "package", "extra"),
    [
        ("langchain_core", "import ucma_langchain", "ucma_langchain", "langchain-core", "langchain"),
        ("langchain_classic", "from ucma_langchain import UCMAMemory", "ucma_langchain.UCMAMemory",
         "langchain-classic", "langchain"),
        ("langchain", "from ucma_langchain import UCMAMiddleware", "ucma_langchain.UCMAMiddleware",
         "langchain", "agents"),
        ("langchain", "import ucma_langchain.middleware", "ucma_langchain.UCMAMiddleware",
         "langchain", "agents"),
    ],
)  # fmt: skip
def test_a_missing_extra_names_what_to_install(
    blocked: str, code: str, feature: str, package: str, extra: str
) -> None:
    done = run_without([blocked], code)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"ucma_core.errors.DependencyMissingError: {feature} needs the {package!r} package, "
        f"which is not installed; install it with: pip install 'ucma[{extra}]'"
    )


def test_the_core_needs_no_framework() -> None:
    blocked = ["langchain_core", "langchain", "langchain_classic", "langgraph", "llama_index"]
    done = run_without(blocked, "import ucma_core, ucma_core.conversation, ucma_core.providers; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.slow
def test_the_rest_works_without_the_agents_extra() -> None:
    code = "from ucma_langchain import UCMARetriever, UCMAMemory, create_memory_tools; print('ok')"
    done = run_without(["langchain"], code)
    assert done.returncode == 0, done.stderr
