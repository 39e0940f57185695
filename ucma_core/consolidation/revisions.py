"""The sleep cycle's second look at corrections linked when they were observed.

:mod:`ucma_core.corrections` links a correction to the turn it corrects at ``observe``
time, from the offline rules alone. Once the ``extract`` phase has learned the facts of
both turns (with the provider the memory was given) and judged their conflicts, each link
still marked ``revision="observed"`` is:

* **confirmed** (``revision="confirmed"``, the corrected turn's importance drops like any
  revised turn's) when a fact learned from the correction superseded one learned from the
  corrected turn, or when either turn gave no fact (the cycle has nothing to judge by, so
  the rules' link stands);
* **undone** (``revised_by`` cleared, the ``supersedes`` edge removed,
  ``revision="undone"``) when both turns gave facts and none of the corrected turn's was
  superseded by the correction's: the provider saw no conflict between them.

Then every revised turn that the ``group`` phase folded into a consolidated episode passes
its mark on to that episode (unless the correction is in the same group), so a summary that
holds the stale statement never outranks the correction either.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ucma_core.consolidation.context import CycleContext, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.records import MemoryType
from ucma_core.storage.graph import EdgeType

__all__ = ["REVISED_IMPORTANCE", "run"]

#: The importance of an episode whose fact was revised is multiplied by this.
REVISED_IMPORTANCE = 0.6


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    """Confirm or undo the links made at observe time, then mark the groups of revised turns."""
    del now
    pending = cx.episodes(lambda a: a.get("revision") == "observed" and bool(a.get("corrects")))
    for correction, attrs in pending:
        if stopped(stop, report):
            return
        with cx.lock, cx.ctx.backend.graph.batch():
            kept = [old for old in attrs.get("corrects", ()) if _settle(cx, correction, str(old), report)]
            cx.ctx.backend.set_state(correction, corrects=kept, revision="confirmed" if kept else "undone")
    revised = cx.episodes(lambda a: bool(a.get("revised_by")) and bool(a.get("consolidated_into")))
    with cx.lock, cx.ctx.backend.graph.batch():
        for _, attrs in revised:
            if _mark_group(cx, str(attrs["consolidated_into"]), str(attrs["revised_by"])):
                report.count("extract", "revised_groups")


def _derived(cx: CycleContext, episode: str) -> list[str]:
    """The facts learned from ``episode``."""
    graph = cx.ctx.backend.graph
    out = []
    for u, _, _, _ in graph.edges_of(episode, EdgeType.DERIVED_FROM, direction="in"):
        node = graph.node(u)
        if node is not None and node.get("memory_type") == MemoryType.SEMANTIC.value:
            out.append(u)
    return sorted(out)


def _settle(cx: CycleContext, correction: str, old: str, report: ConsolidationReport) -> bool:
    """Confirm (True) or undo (False) one link (under the lock)."""
    graph = cx.ctx.backend.graph
    node: Mapping[str, Any] | None = graph.node(old)
    if node is None or node.get("revised_by") != correction:
        return False
    new_facts, old_facts = _derived(cx, correction), _derived(cx, old)
    superseded = any(_superseded_by(graph.node(f)) in new_facts for f in old_facts)
    if superseded or not new_facts or not old_facts:
        cx.ctx.backend.set_state(
            old,
            revision="confirmed",
            importance=round(float(node["importance"]) * REVISED_IMPORTANCE, 4),
        )
        report.count("extract", "corrections_confirmed")
        return True
    cx.ctx.backend.set_state(old, revised_by=None, revision="undone")
    graph.remove_edge(correction, old, EdgeType.SUPERSEDES)
    report.count("extract", "corrections_undone")
    return False


def _superseded_by(node: Mapping[str, Any] | None) -> Any:
    return None if node is None else node.get("superseded_by")


def _mark_group(cx: CycleContext, group: str, correction: str) -> bool:
    """Pass a revised turn's mark on to the consolidated episode holding it (under the lock)."""
    graph = cx.ctx.backend.graph
    node = graph.node(group)
    if node is None or node.get("revised_by") or correction in (node.get("source_ids") or ()):
        return False
    if graph.node(correction) is None:
        return False
    cx.ctx.backend.set_state(group, revised_by=correction)
    graph.add_edge(correction, group, EdgeType.SUPERSEDES, 1.0)
    return True
