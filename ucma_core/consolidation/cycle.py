"""The sleep cycle: its phases, in order, and the loop that runs them.

Phases (each can be run alone): ``compress``, ``group``, ``extract``, ``patterns``,
``merge``, ``transitions``, ``reinforce``, ``prune`` — one module each in this
package. Progress is recorded on the episodes themselves, so a cycle that is
interrupted (between phases or batches) or whose provider fails resumes where it
stopped on the next run.

Progress (when the caller asked for it) goes to the context's reporter with one
label per phase (``"consolidate group"``…), in the phase's own units: batches of
episodes, a user's new episodes, single episodes. A phase with nothing to count
reports ``(1, 1)`` when it is done.
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
from ucma_core.errors import ProviderError, StorageError

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
        cx.phase, cx.reported = phase, False
        try:
            _RUNNERS[phase](cx, now, report, stop)
        except ProviderError as e:
            report.errors.append(f"{phase}: {e}")
            continue
        if not cx.reported and not report.interrupted:
            cx.advance(1, 1)
    try:  # the markers the phases committed get their copy in Chroma (see storage.markers)
        with cx.lock:
            cx.ctx.backend.keep_markers()
    except StorageError as e:
        report.errors.append(f"markers: {e} (their copy in Chroma is written by the next cycle)")
    report.seconds = round(time.perf_counter() - started, 4)
    return report
