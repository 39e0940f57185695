"""Phase 6, ``transitions``: working-memory items that were read often, stayed long, are
important or sit in a nearly full zone move into long-term memory, keeping their user,
agent and session (so ``forget_user`` reaches them there too)."""

from __future__ import annotations

import threading

from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.records import Source
from ucma_core.stores.episodic import EpisodeDraft

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    working = cx.working
    if working is None:
        return
    cfg = cx.config.consolidation
    moving = working.due_for_long_term(
        now,
        access_count=cfg.transition_access_count,
        age_hours=cfg.transition_age_hours,
        importance=cfg.transition_importance,
        capacity=cfg.transition_capacity,
    )
    if not moving:
        return
    drafts = [
        EpisodeDraft(
            content=item.content,
            source=Source.ASSISTANT.value,
            timestamp=item.inserted_at,
            importance=item.importance,
            user_id=item.user_id,
            agent_id=item.agent_id,
            session_id=item.session_id,
            tags=("working_memory",) + ((item.slot,) if item.slot else ()),
        )
        for item in moving
    ]
    vectors = cx.ctx.embedder.embed([d.content for d in drafts])
    with cx.lock, cx.ctx.backend.graph.batch():
        created = cx.stores.add_episodes(drafts, vectors)
    for item, episode in zip(moving, created, strict=True):
        working.mark_stored(item.id, episode.id)
        report.count("transitions", "moved_to_long_term")
