"""Phase 4, ``patterns``: an episode that reports success or failure, with the turns
before it, yields a procedure (or an outcome for a known one) and a lesson."""

from __future__ import annotations

import threading

from ucma_core.consolidation.context import CycleContext, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.outcomes import outcome
from ucma_core.records import LearningType, ProcedureStatus, Source

__all__ = ["run"]

#: How many turns up to the outcome make the story a procedure or lesson is drawn from.
_WINDOW = 8


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    observed = {s.value for s in Source if s.observed}
    pending = cx.episodes(
        lambda a: not a.get("mined") and not a.get("source_ids") and a.get("source") in observed
    )
    texts = cx.texts([i for i, _ in pending])
    for memory_id, attrs in pending:
        if stopped(stop, report):
            return
        text = texts.get(memory_id, "")
        reported = outcome(text)
        succeeded = reported == "success"
        if reported is None:
            with cx.lock:
                if cx.ctx.backend.graph.node(memory_id) is not None:
                    cx.ctx.backend.set_state(memory_id, mined=True)
            continue
        with cx.lock:
            session = cx.stores.episodic.session(
                attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id")
            )
        window_ids = (
            session[max(0, session.index(memory_id) - _WINDOW + 1) : session.index(memory_id) + 1]
            if memory_id in session
            else [memory_id]
        )
        window_texts = cx.texts(window_ids)
        window = [window_texts[i] for i in window_ids if i in window_texts]
        procedure = cx.provider.extract_procedure(window) if succeeded else None
        lesson = cx.provider.distill_learning(window, succeeded=succeeded)
        with cx.lock, cx.ctx.backend.graph.batch():
            if cx.ctx.backend.graph.node(memory_id) is None:
                continue
            scope = {
                "user_id": attrs.get("user_id"),
                "agent_id": attrs.get("agent_id"),
                "session_id": attrs.get("session_id"),
            }
            if procedure is not None and procedure.steps:
                existing = cx.stores.procedural.find_by_name(
                    procedure.name, attrs.get("user_id"), attrs.get("agent_id")
                )
                if existing is None:
                    cx.stores.procedural.add(
                        name=procedure.name,
                        steps=procedure.steps,
                        description=procedure.description,
                        trigger_tags=procedure.trigger_tags,
                        status=ProcedureStatus.DRAFT,
                        importance=0.6,
                        source=Source.CONSOLIDATION.value,
                        metadata={},
                        source_ids=window_ids,
                        **scope,
                    )
                    report.count("patterns", "procedures")
                else:
                    cx.stores.procedural.record_outcome(existing, True)
                    report.count("patterns", "procedure_outcomes")
            if lesson is not None:
                cx.stores.learning.add(
                    insight=lesson.insight,
                    title=lesson.title,
                    learning_type=LearningType(lesson.learning_type),
                    applicability=lesson.applicability,
                    confidence=lesson.confidence,
                    importance=0.6,
                    evidence=window_ids,
                    source=Source.CONSOLIDATION.value,
                    metadata={},
                    **scope,
                )
                report.count("patterns", "learnings")
            cx.ctx.backend.set_state(memory_id, mined=True)
