"""Phase 4, ``patterns``: what a conversation's turns teach beyond facts.

* An episode that reports success or failure, with the turns before it, yields a
  procedure (or an outcome for a known one) and a lesson; a lesson about a problem a lesson
  was already learned about is merged into it, both outcomes kept
  (:mod:`~ucma_core.consolidation.lessons`).
* A user turn that asks something is marked ``question``; when the next turn of the
  session answers it (an assistant or tool turn), the question gets ``answered_by`` (the
  answer's id), the answer ``answers`` (the question's id), and the question's importance
  drops, so a memory that only repeats a question ranks and lasts below its answer.
* A user turn that asks to be reminded ("Remind me to call the dentist tomorrow") becomes a
  pending intention (:mod:`~ucma_core.providers.reminders`).
* A how-to question with an answer that gives steps ("how do I deploy?" → "build…, push…,
  then apply…") becomes a draft procedure learned from those two turns.

A question that is the last turn of its session stays pending for a day, in case its
answer arrives later.
"""

from __future__ import annotations

import threading
from typing import Any

from ucma_core.consolidation.context import CycleContext, stopped
from ucma_core.consolidation.lessons import add_lesson
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.outcomes import outcome
from ucma_core.providers.howto import how_to_task, is_question
from ucma_core.providers.protocols import ExtractedProcedure
from ucma_core.providers.reminders import Reminder, reminder
from ucma_core.records import ProcedureStatus, Source
from ucma_core.storage.graph import EdgeType

__all__ = ["ANSWERED_IMPORTANCE", "run"]

#: How many turns up to the outcome make the story a procedure or lesson is drawn from.
_WINDOW = 8
#: The importance of a question that was answered is multiplied by this.
ANSWERED_IMPORTANCE = 0.6
_DAY = 86_400.0


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    observed = {s.value for s in Source if s.observed}
    pending = cx.episodes(lambda a: not a.get("mined") and not a.get("source_ids"))
    texts = cx.texts([i for i, _ in pending])
    for memory_id, attrs in cx.steps(pending):
        if stopped(stop, report):
            return
        text = texts.get(memory_id, "")
        asked = reminder(text) if attrs.get("source") == Source.USER.value else None
        if asked is not None:
            _intend(cx, memory_id, attrs, asked, report)
            continue
        if attrs.get("source") == Source.USER.value and is_question(text):
            if _question(cx, memory_id, attrs, text, now, report):
                _mined(cx, memory_id)
            continue
        reported = outcome(text) if attrs.get("source") in observed else None
        if reported is None:
            _mined(cx, memory_id)
            continue
        _story(cx, memory_id, attrs, reported == "success", report)


def _intend(
    cx: CycleContext, memory_id: str, attrs: dict[str, Any], asked: Reminder, report: ConsolidationReport
) -> None:
    """A "remind me to …" turn becomes a pending intention, linked to the turn (``derived_from``)."""
    with cx.lock, cx.ctx.backend.graph.batch():
        if cx.ctx.backend.graph.node(memory_id) is None:
            return
        intention = cx.stores.prospective.add(
            description=asked.description,
            trigger=asked.trigger,
            action=None,
            priority=max(0.7, float(attrs.get("importance", 0.0))),
            source=Source.CONSOLIDATION.value,
            metadata={},
            **_scope(attrs),
        )
        cx.ctx.backend.graph.add_edge(intention.id, memory_id, EdgeType.DERIVED_FROM, 1.0)
        cx.ctx.backend.set_state(memory_id, mined=True, intention=intention.id)
        report.count("patterns", "intentions")


def _mined(cx: CycleContext, memory_id: str) -> None:
    with cx.lock:
        if cx.ctx.backend.graph.node(memory_id) is not None:
            cx.ctx.backend.set_state(memory_id, mined=True)


def _scope(attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_id": attrs.get("user_id"),
        "agent_id": attrs.get("agent_id"),
        "session_id": attrs.get("session_id"),
    }


def _question(
    cx: CycleContext,
    memory_id: str,
    attrs: dict[str, Any],
    text: str,
    now: float,
    report: ConsolidationReport,
) -> bool:
    """Mark a question and link it to its answer; learn a procedure from a how-to answer.
    Returns whether the question is done with (False: wait for an answer)."""
    graph = cx.ctx.backend.graph
    with cx.lock:
        session = cx.stores.episodic.session(
            attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id")
        )
        at = session.index(memory_id) if memory_id in session else -1
        answer_id = session[at + 1] if 0 <= at < len(session) - 1 else None
        answer = graph.node(answer_id) if answer_id else None
    if answer_id is None or answer is None:
        with cx.lock:
            if graph.node(memory_id) is not None:
                cx.ctx.backend.set_state(memory_id, question=True)
        return float(attrs["timestamp"]) < now - _DAY
    answered = answer.get("source") in (Source.ASSISTANT.value, Source.TOOL.value)
    answer_text = cx.texts([answer_id]).get(answer_id, "") if answered else ""
    task = how_to_task(text) if answered else None
    procedure = cx.provider.extract_procedure([text, answer_text]) if task else None
    with cx.lock, graph.batch():
        node = graph.node(memory_id)
        if node is None:
            return True
        if not answered:
            cx.ctx.backend.set_state(memory_id, question=True)
            return True
        cx.ctx.backend.set_state(
            memory_id,
            question=True,
            answered_by=answer_id,
            importance=round(float(node["importance"]) * ANSWERED_IMPORTANCE, 4),
        )
        if graph.node(answer_id) is not None:
            cx.ctx.backend.set_state(answer_id, answers=memory_id)
        report.count("patterns", "answered_questions")
        if procedure is not None and procedure.steps:
            _add_procedure(cx, procedure, attrs, [memory_id, answer_id], report)
    return True


def _add_procedure(
    cx: CycleContext,
    procedure: ExtractedProcedure,
    attrs: dict[str, Any],
    source_ids: list[str],
    report: ConsolidationReport,
) -> None:
    """A draft procedure learned from ``source_ids`` (under the lock), or an outcome for a known one."""
    existing = cx.stores.procedural.find_by_name(procedure.name, attrs.get("user_id"), attrs.get("agent_id"))
    if existing is not None:
        cx.stores.procedural.record_outcome(existing, True)
        report.count("patterns", "procedure_outcomes")
        return
    cx.stores.procedural.add(
        name=procedure.name,
        steps=procedure.steps,
        description=procedure.description,
        trigger_tags=procedure.trigger_tags,
        status=ProcedureStatus.DRAFT,
        importance=0.6,
        source=Source.CONSOLIDATION.value,
        metadata={},
        source_ids=source_ids,
        **_scope(attrs),
    )
    report.count("patterns", "procedures")


def _story(
    cx: CycleContext, memory_id: str, attrs: dict[str, Any], succeeded: bool, report: ConsolidationReport
) -> None:
    """A story that ended (in success or failure) teaches a procedure and a lesson."""
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
            return
        if procedure is not None and procedure.steps:
            _add_procedure(cx, procedure, attrs, window_ids, report)
        if lesson is not None:
            add_lesson(cx, lesson, _scope(attrs), window_ids, succeeded, report)
        cx.ctx.backend.set_state(memory_id, mined=True)
