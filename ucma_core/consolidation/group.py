"""Phase 2, ``group``: a session's episodes are grouped into consolidated episodes (a
summary linked by ``consolidates`` edges to the originals, which are kept)."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

from ucma_core.consolidation.context import CycleContext, batches, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.records import Source, Tier
from ucma_core.stores.episodic import EpisodeDraft

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    cfg = cx.config.consolidation
    pending = cx.episodes(lambda a: not a.get("consolidated_into") and not a.get("source_ids"))
    sessions: dict[tuple[Any, Any, Any], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for memory_id, attrs in pending:
        sessions[(attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id"))].append(
            (memory_id, attrs)
        )
    quiet = now - cfg.group_after_hours * 3600.0
    chunks: list[list[tuple[str, dict[str, Any]]]] = []
    for episodes in sessions.values():
        for start in range(0, len(episodes), cfg.group_size):
            chunk = episodes[start : start + cfg.group_size]
            full = len(chunk) == cfg.group_size
            if full or (len(chunk) >= cfg.min_group and float(chunk[-1][1]["timestamp"]) < quiet):
                chunks.append(chunk)
    for batch in cx.steps(list(batches(chunks, cfg.batch_size))):
        if stopped(stop, report):
            return
        texts = cx.texts([i for chunk in batch for i, _ in chunk])
        groups = [[texts[i] for i, _ in chunk if i in texts] for chunk in batch]
        summaries = cx.provider.summarize(groups, max_words=cfg.summary_words)
        drafts, members = [], []
        for chunk, summary in zip(batch, summaries, strict=True):
            first = chunk[0][1]
            people = tuple(dict.fromkeys(p for _, a in chunk for p in a.get("participants", [])))
            drafts.append(
                EpisodeDraft(
                    content=summary,
                    source=Source.CONSOLIDATION.value,
                    timestamp=float(first["timestamp"]),
                    importance=max(float(a["importance"]) for _, a in chunk),
                    user_id=first.get("user_id"),
                    agent_id=first.get("agent_id"),
                    session_id=first.get("session_id"),
                    tags=("consolidated",),
                    participants=people,
                    source_ids=tuple(i for i, _ in chunk),
                    tier=Tier.MEDIUM_TERM,
                )
            )
            members.append([i for i, _ in chunk])
        vectors = cx.ctx.embedder.embed([d.content for d in drafts])
        with cx.lock, cx.ctx.backend.graph.batch():
            alive = [all(cx.ctx.backend.graph.node(i) is not None for i in ids) for ids in members]
            keep = [k for k, ok in enumerate(alive) if ok]
            created = cx.stores.episodic.add([drafts[k] for k in keep], [vectors[k] for k in keep])
            for episode, k in zip(created, keep, strict=True):
                for original in members[k]:
                    cx.ctx.backend.set_state(original, consolidated_into=episode.id)
                report.count("group", "consolidated_episodes")
                report.count("group", "episodes_grouped", len(members[k]))
