"""Phase 7, ``reinforce``: memories central in the graph (PageRank) gain stability."""

from __future__ import annotations

import threading

from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.report import ConsolidationReport

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    with cx.lock, cx.ctx.backend.graph.batch():
        graph = cx.ctx.backend.graph
        ranks = graph.pagerank(damping=cx.config.graph.pagerank_damping)
        boost = cx.config.retention.stability_boost
        for memory_id, rank in ranks.items():
            attrs = graph.node(memory_id)
            if (
                attrs is None
                or attrs.get("kind") != "memory"
                or rank < cx.config.forgetting.pagerank_protection
            ):
                continue
            stability = float(attrs["stability"]) + boost * min(rank, 10.0)
            cx.ctx.backend.set_state(memory_id, stability=stability)
            report.count("reinforce", "reinforced")
