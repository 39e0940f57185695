"""The upstream suites' counts, printed at the end of the test log."""

from __future__ import annotations

import pytest

from tests.upstream.suites import Counts

# the swap plugins are loaded only into the pytest process that runs a framework's tests
collect_ignore = ["swaps"]

RESULTS: list[Counts] = []


@pytest.fixture
def upstream_results() -> list[Counts]:
    return RESULTS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS:
        return
    terminalreporter.section("frameworks' own tests against the UCMA adapters (tests/upstream)")
    for counts in RESULTS:
        terminalreporter.write_line(counts.line())
    total = sum(c.seconds for c in RESULTS)
    terminalreporter.write_line(f"{'':<51}total {total:.0f} s; docs/parity.md lists every difference")
