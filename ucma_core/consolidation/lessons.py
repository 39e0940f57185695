"""One lesson per problem: what the sleep cycle learns from stories is merged, not repeated.

A story that ends in failure ("upgraded pip; still failing") and a later one about the same
problem that ends in success ("pinned numpy; works now") would give two lessons that seem to
contradict each other. :func:`add_lesson` finds the lesson the cycle already learned about
the same problem in the same user and agent scope (the same problem line in its title, or
the same words) and merges the new one into it: one lesson carrying both outcomes ("When the
build fails on CI, pin numpy to 1.26. Upgrading pip did not work."), typed a success pattern
once anything worked, with the evidence of both stories and the count of each outcome
(``successes`` / ``failures``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from ucma_core.consolidation.context import CycleContext
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.providers.protocols import DistilledLearning
from ucma_core.providers.text import content_words
from ucma_core.records import Learning, LearningType, MemoryType, Source
from ucma_core.scope import ANY, Scope

__all__ = ["add_lesson", "same_problem"]

_PREFIX = re.compile(r"^[^:]{0,40}:\s*")
_WHEN = re.compile(r"^(when\s+[^,]+,\s*)", re.I)


def _problem(title: str) -> str:
    return " ".join(_PREFIX.sub("", title).lower().split()).rstrip(" .…")


def same_problem(a: str, b: str) -> bool:
    """Whether two lesson titles name the same problem (the text after their "What fixed:" /
    "What did not fix:" label, or most of its words).

    Examples:
        >>> same_problem("What fixed: Build fails on CI", "What did not fix: build fails on CI")
        True
        >>> same_problem("What fixed: Build fails on CI", "What fixed: the VPN drops at night")
        False
    """
    x, y = _problem(a), _problem(b)
    if not x or not y:
        return False
    if x == y:
        return True
    wx, wy = set(content_words(x)), set(content_words(y))
    return bool(wx and wy) and len(wx & wy) >= 0.8 * min(len(wx), len(wy)) and min(len(wx), len(wy)) >= 3


def _merged_insight(old: str, new: str) -> str:
    if new.strip() in old:
        return old
    when = _WHEN.match(old)
    if when and new.lower().startswith(when[1].lower()):
        rest = new[len(when[1]) :].strip()
        new = rest[:1].upper() + rest[1:]
    return f"{old.rstrip()} {new.strip()}"


def add_lesson(
    cx: CycleContext,
    lesson: DistilledLearning,
    scope: dict[str, Any],
    evidence: list[str],
    succeeded: bool,
    report: ConsolidationReport,
) -> str:
    """Store ``lesson`` or merge it into the lesson already learned about the same problem
    (under the lock); returns the lesson's id."""
    learned = Scope(scope.get("user_id"), ANY, ANY)
    ids = [
        memory_id
        for memory_id, attrs in cx.stores.scan(learned, [MemoryType.LEARNING])
        if attrs.get("agent_id") == scope.get("agent_id")
        and attrs.get("source") == Source.CONSOLIDATION.value
    ]
    for old in cx.stores.fetch_ordered(sorted(ids), Learning):
        if not same_problem(old.title, lesson.title):
            continue
        memory_id = old.id
        attrs: Mapping[str, Any] = cx.ctx.backend.graph.node(memory_id) or {}
        worked_now = lesson.learning_type == LearningType.SUCCESS_PATTERN.value
        if worked_now and old.learning_type is not LearningType.SUCCESS_PATTERN:
            insight = _merged_insight(lesson.insight, old.insight)  # what worked first
        else:
            insight = _merged_insight(old.insight, lesson.insight)
        kinds = {old.learning_type.value, lesson.learning_type}
        mixed = LearningType.SUCCESS_PATTERN.value in kinds and len(kinds) > 1
        subject = _PREFIX.sub("", old.title)
        title = f"What fixed and what did not: {subject}" if mixed else old.title
        kind = (
            LearningType.SUCCESS_PATTERN if LearningType.SUCCESS_PATTERN.value in kinds else old.learning_type
        )
        successes = int(attrs.get("story_successes", 0)) + int(succeeded)
        failures = int(attrs.get("story_failures", 0)) + int(not succeeded)
        if not attrs.get("story_successes") and not attrs.get("story_failures"):
            successes += int(old.learning_type is LearningType.SUCCESS_PATTERN)
            failures += int(old.learning_type is not LearningType.SUCCESS_PATTERN)
        merged = dataclasses.replace(
            old,
            title=title,
            insight=insight,
            content=f"{title}: {insight}",
            learning_type=kind,
            applicability=tuple(dict.fromkeys([*old.applicability, *lesson.applicability]))[:10],
            tags=tuple(dict.fromkeys([*old.tags, *lesson.applicability]))[:10],
            source_ids=tuple(dict.fromkeys([*old.source_ids, *cx.ctx.known(evidence)])),
            confidence=max(old.confidence, lesson.confidence),
        )
        cx.ctx.backend.replace([merged], cx.ctx.embedder.embed([merged.content]))
        cx.ctx.backend.set_state(memory_id, story_successes=successes, story_failures=failures)
        cx.stores.learning.link(memory_id)
        report.count("patterns", "learnings_merged")
        return memory_id
    added = cx.stores.learning.add(
        insight=lesson.insight,
        title=lesson.title,
        learning_type=LearningType(lesson.learning_type),
        applicability=lesson.applicability,
        confidence=lesson.confidence,
        importance=0.6,
        evidence=evidence,
        source=Source.CONSOLIDATION.value,
        metadata={},
        **scope,
    )
    cx.ctx.backend.set_state(added.id, story_successes=int(succeeded), story_failures=int(not succeeded))
    report.count("patterns", "learnings")
    return added.id
