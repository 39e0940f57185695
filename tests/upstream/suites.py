"""The frameworks' own unit tests, run against UCMA's adapters.

Each :class:`Suite` names test files inside a framework's source distribution on PyPI.
:func:`fetch` downloads the sdist of the exact version installed in this environment
(``pip download --no-binary :all: --no-deps``) into ``.cache/upstream/`` (never
committed) and unpacks only its ``tests/`` folder and ``pyproject.toml``;
:func:`run` runs those files unmodified in a fresh pytest process, with one swap
plugin of ours (``tests/upstream/swaps/``) that makes the class under test resolve
to the UCMA adapter on a temporary memory folder, marks the documented differences
``xfail(strict=True)`` and the tests that are about something else not applicable.

``python -m tests.upstream.suites`` fetches every suite (``scripts/test.sh`` does,
before the offline test run); ``python -m tests.upstream.suites --run`` also runs them
and prints the counts. ``tests/upstream/test_upstream_suites.py`` runs them under pytest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "upstream"
SWAPS = Path(__file__).resolve().parent / "swaps"


@dataclass(frozen=True)
class Suite:
    """Test files of one distribution, run with one swap plugin.

    Attributes:
        name: the suite's name in the log and the docs.
        dist: the PyPI distribution whose sdist holds the tests.
        files: test files inside the sdist, relative to its root.
        swap: the plugin module in ``tests/upstream/swaps/`` that swaps the class in.
        replaces: what is swapped for what (for the report).
    """

    name: str
    dist: str
    files: tuple[str, ...]
    swap: str
    replaces: str


SUITES: tuple[Suite, ...] = (
    Suite(
        "langgraph-store",
        "langgraph-checkpoint",
        ("tests/test_store.py",),
        "ucma_swap_store",
        "InMemoryStore -> UCMAStore",
    ),
    Suite(
        "sqlite-store",
        "langgraph-checkpoint-sqlite",
        ("tests/test_store.py", "tests/test_async_store.py", "tests/test_ttl.py"),
        "ucma_swap_store",
        "SqliteStore / AsyncSqliteStore -> UCMAStore",
    ),
    Suite(
        "sqlite-saver",
        "langgraph-checkpoint-sqlite",
        (
            "tests/test_sqlite.py",
            "tests/test_aiosqlite.py",
            "tests/test_conformance_delta.py",
            "tests/test_delta_channel_migration.py",
            "tests/test_delta_parent_walk.py",
            "tests/test_get_delta_channel_history.py",
            "tests/test_writes_task_path_migration.py",
        ),
        "ucma_swap_saver",
        "SqliteSaver / AsyncSqliteSaver -> UCMACheckpointer",
    ),
    Suite(
        "message-history",
        "langchain-core",
        ("tests/unit_tests/runnables/test_history.py",),
        "ucma_swap_history",
        "InMemoryChatMessageHistory -> UCMAChatMessageHistory",
    ),
    Suite(
        "classic-memory",
        "langchain-classic",
        (
            "tests/unit_tests/memory/test_combined_memory.py",
            "tests/unit_tests/chains/test_memory.py",
            "tests/unit_tests/chains/test_conversation.py",
            "tests/unit_tests/chains/test_conversation_retrieval.py",
            "tests/unit_tests/chains/test_sequential.py",
        ),
        "ucma_swap_classic",
        "ConversationBuffer(Window)Memory -> UCMAMemory",
    ),
)

#: Distributions whose sdist was checked and ships no tests (see docs/parity.md).
NO_TESTS_SHIPPED: dict[str, str] = {
    "llama-index-core": "its sdist has only the llama_index/ package, no tests/ (checked with tar tzf)",
}


def sdist_dir(dist: str) -> Path:
    """The cache folder of the installed version's sdist (``<cache>/<dist>-<version>``)."""
    return CACHE / f"{dist}-{version(dist)}"


def fetch(dist: str) -> Path:
    """Download and unpack the tests of the installed version of ``dist`` (once; cached)."""
    target = sdist_dir(dist)
    if (target / "pyproject.toml").exists():
        return target
    pinned = f"{dist}=={version(dist)}"
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
             pinned, "-d", tmp],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        archives = list(Path(tmp).glob("*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise RuntimeError(
                f"could not download the sdist of {pinned} from the package index "
                f"(run `python -m tests.upstream.suites` with network access):\n{done.stderr[-2000:]}"
            )
        partial = target.with_name(target.name + ".part")
        with tarfile.open(archives[0]) as tar:
            wanted = []
            for member in tar.getmembers():
                inner = member.name.partition("/")[2]
                if inner == "pyproject.toml" or inner == "tests" or inner.startswith("tests/"):
                    member.name = inner
                    wanted.append(member)
            tar.extractall(partial, members=wanted, filter="data")
        partial.rename(target)
    return target


@dataclass
class Counts:
    """What one suite run gave, test by test."""

    suite: str
    version: str
    passed: list[str] = field(default_factory=list)
    xfailed: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""

    def line(self) -> str:
        return (
            f"{self.suite:<16} {self.version:<34} passed {len(self.passed):>3}  "
            f"xfailed {len(self.xfailed):>3}  not applicable {len(self.not_applicable):>3}  "
            f"failed {len(self.failed):>3}  {self.seconds:5.1f} s"
        )


def _outcomes(report: Path, counts: Counts) -> None:
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('file') or case.get('classname')}::{case.get('name')}"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            counts.failed.append(name)
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            counts.xfailed.append(name)
        elif skipped is not None or props.get("ucma_adapter") != "reached":
            counts.not_applicable.append(name)  # skipped, or passed without reaching the adapter
        else:
            counts.passed.append(name)


def run(suite: Suite, *extra: str) -> Counts:
    """Run one suite's files unmodified with its swap plugin; the counts per outcome."""
    where = fetch(suite.dist)
    counts = Counts(f"{suite.name}", f"{suite.dist}=={version(suite.dist)}")
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SWAPS), str(ROOT)])}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *suite.files, "-p", "ucma_swap_common", "-p", suite.swap,
             "-p", "no:cacheprovider", "-q", "-rfEX", "--no-header", "-o", "addopts=--strict-markers",
             "-o", "junit_family=xunit1", "-o", "asyncio_default_fixture_loop_scope=function",
             f"--junitxml={report}", "--basetemp", str(Path(tmp) / "t"), "--timeout=120", *extra],
            cwd=where, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        counts.seconds = time.monotonic() - started
        counts.output = done.stdout[-6000:] + done.stderr[-3000:]
        if not report.exists():
            counts.failed.append(f"pytest exited {done.returncode} without a report")
            return counts
        _outcomes(report, counts)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="also run the suites and print the counts")
    parser.add_argument("--list", action="store_true", help="with --run: name every test by outcome")
    parser.add_argument("names", nargs="*", help="suite names (default: all)")
    args = parser.parse_args()
    chosen = [s for s in SUITES if not args.names or s.name in args.names]
    for dist in dict.fromkeys(s.dist for s in chosen):
        print(f"upstream tests of {dist}=={version(dist)}: {fetch(dist)}")
    if args.run:
        for suite in chosen:
            counts = run(suite)
            print(counts.line())
            for name in counts.failed:
                print(f"  FAILED {name}")
            if args.list:
                for outcome in ("xfailed", "not_applicable", "passed"):
                    for name in getattr(counts, outcome):
                        print(f"  {outcome} {name}")
            if counts.failed:
                print(counts.output)


if __name__ == "__main__":
    main()
