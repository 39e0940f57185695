"""The frameworks' own unit tests for the classes UCMA replaces, run unmodified against the
adapters (``tests/upstream/suites.py``): LangGraph's store tests, the SQLite saver's and
store's tests, ``RunnableWithMessageHistory``'s tests and langchain-classic's memory tests.

Each suite must end with no failure: a test passes, is a documented difference (strict
xfail: it fails, or this suite fails), or is not applicable (skipped with its reason, or
it never reached the adapter). The counts are printed at the end of the log.
"""

from __future__ import annotations

import pytest

from tests.upstream.suites import SUITES, Counts, Suite, run

pytestmark = pytest.mark.slow


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("suite", SUITES, ids=[s.name for s in SUITES])
def test_upstream_suite(suite: Suite, upstream_results: list[Counts]) -> None:
    counts = run(suite)
    upstream_results.append(counts)
    assert not counts.failed, f"{counts.line()}\n" + "\n".join(counts.failed) + "\n" + counts.output
    assert counts.passed, f"no test of {suite.name} reached the adapter:\n{counts.output}"
