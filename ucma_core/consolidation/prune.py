"""Phase 8, ``prune``: the forgetting engine lets faded memories go."""

from __future__ import annotations

import threading

from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.errors import UCMAError
from ucma_core.scope import ANY, Scope

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    try:
        with cx.lock:
            faded = cx.stores.forget_faded(Scope(ANY), now, dry_run=False)
        report.count("prune", "forgotten", len(faded.forgotten))
    except UCMAError as e:  # storage trouble ends the phase; the next cycle retries
        report.errors.append(f"prune: {e}")
