"""Phase 1, ``compress``: short-term episodes past ``short_term_ttl_hours`` move to the
medium-term tier; long ones get a summary. Those below an adaptive importance threshold
(higher when many expire at once) lose half their stability, so the forgetting engine
takes them sooner."""

from __future__ import annotations

import threading
from typing import Any

from ucma_core.consolidation.context import CycleContext, batches, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.records import Tier

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    cfg = cx.config.consolidation
    cutoff = now - cx.config.short_term_ttl_hours * 3600.0
    expired = cx.episodes(lambda a: a.get("tier") == Tier.SHORT_TERM.value and float(a["timestamp"]) < cutoff)
    if not expired:
        return
    threshold = cfg.compression_importance_base + cfg.compression_volume_penalty * min(
        1.0, len(expired) / cfg.volume_reference
    )
    for batch in cx.steps(list(batches(expired, cfg.batch_size * 8))):
        if stopped(stop, report):
            return
        texts = cx.texts([i for i, _ in batch])
        long_ids = [i for i in texts if len(texts[i].split()) > cfg.summary_words * 1.5]
        summaries = (
            dict(
                zip(
                    long_ids,
                    cx.provider.summarize([[texts[i]] for i in long_ids], max_words=cfg.summary_words),
                    strict=True,
                )
            )
            if long_ids
            else {}
        )
        with cx.lock:
            for memory_id, attrs in batch:
                if cx.ctx.backend.graph.node(memory_id) is None:
                    continue
                update: dict[str, Any] = {"tier": Tier.MEDIUM_TERM.value}
                if memory_id in summaries:
                    update["summary"] = summaries[memory_id]
                    report.count("compress", "summarised")
                if float(attrs["importance"]) < threshold:
                    update["stability"] = float(attrs["stability"]) / 2
                    report.count("compress", "weakened")
                cx.ctx.backend.set_state(memory_id, **update)
                report.count("compress", "moved_to_medium_term")
