"""The sleep cycle: its phases, in order, and the loop that runs them.

Phases (each can be run alone): ``compress``, ``group``, ``extract``, ``patterns``,
``merge``, ``transitions``, ``reinforce``, ``prune`` — one module each in this
package. Progress is recorded on the episodes themselves, so a cycle that is
interrupted (between phases or batches) or whose provider fails resumes where it
stopped on the next run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from ucma_core.consolidation import (
    compress,
    extract,
    group,
    merge,
    patterns,
    prune,
    reinforce,
    transitions,
)
from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.errors import ProviderError

__all__ = ["PHASES", "run_cycle"]

Phase = Callable[[CycleContext, float, ConsolidationReport, "threading.Event | None"], None]

_RUNNERS: dict[str, Phase] = {
    "compress": compress.run,
    "group": group.run,
    "extract": extract.run,
    "patterns": patterns.run,
    "merge": merge.run,
    "transitions": transitions.run,
    "reinforce": reinforce.run,
    "prune": prune.run,
}
#: Every phase, in the order a full cycle runs them.
PHASES = tuple(_RUNNERS)


def run_cycle(
    cx: CycleContext, *, now: float, stop: threading.Event | None = None, phases: Sequence[str] = PHASES
) -> ConsolidationReport:
    """Run ``phases`` in order at ``now``; a provider failure is recorded in the report's
    ``errors`` and the next phase runs."""
    report = ConsolidationReport()
    started = time.perf_counter()
    for phase in phases:
        if stop is not None and stop.is_set():
            report.interrupted = True
            break
        report.phases.setdefault(phase, {})
        try:
            _RUNNERS[phase](cx, now, report, stop)
        except ProviderError as e:
            report.errors.append(f"{phase}: {e}")
    report.seconds = round(time.perf_counter() - started, 4)
    return report
