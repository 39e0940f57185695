"""The forgetting engine: which memories have faded enough to let go.

The decision is a pure function of a memory's graph attributes, its PageRank and
the clock (:func:`verdict`); :func:`plan` applies it to every memory in scope. The
caller (``Memory.prune``) deletes what the plan says from Chroma, the graph, the
keyword index and every in-memory index, or only reports it on a dry run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ucma_core.config import ForgettingConfig
from ucma_core.dynamics.retention import retention
from ucma_core.records import IntentionStatus, MemoryType, ProcedureStatus

__all__ = ["PROFILE", "ForgettingReport", "plan", "verdict"]


@dataclass(frozen=True)
class ForgettingReport:
    """What a forgetting pass did (or, on a dry run, would do)."""

    dry_run: bool
    examined: int
    forgotten: tuple[str, ...]
    by_type: dict[str, int] = field(default_factory=dict)
    protected: dict[str, int] = field(default_factory=dict)


#: Memories learned by the sleep cycle or stated as knowledge: they fade slower than episodes.
_KNOWLEDGE = frozenset({MemoryType.SEMANTIC.value, MemoryType.PROCEDURAL.value, MemoryType.LEARNING.value})
#: Whose facts make up the user's profile (the ``about`` attribute the sleep cycle sets).
PROFILE = frozenset({"user", "relation"})


def verdict(attrs: dict[str, Any], *, pagerank: float, now: float, config: ForgettingConfig) -> str | None:
    """``"forget"``, the name of the protection that saves a faded memory, or ``None`` if it
    has not faded."""
    kind = attrs.get("memory_type")
    # retrievals count here (never in the rank): what was recalled stays longer
    stability = float(attrs["stability"]) + float(attrs.get("retrieval_stability", 0.0))
    if kind in _KNOWLEDGE:
        stability *= config.knowledge_decay_factor
    review = max(float(attrs["last_access"]), float(attrs.get("retrieved_at", 0.0)))
    r = retention(stability, review, now)
    threshold = config.retention_threshold
    if kind == MemoryType.SEMANTIC.value:
        threshold *= 1.5 - float(attrs.get("confidence", 0.5))
    if r >= threshold:
        return None
    if attrs.get("pinned"):
        return "pinned"
    if (
        kind == MemoryType.SEMANTIC.value
        and attrs.get("about") in PROFILE
        and float(attrs.get("confidence", 0.0)) >= config.profile_confidence
    ):
        return "profile"
    if kind == MemoryType.PROSPECTIVE.value and attrs.get("status") != IntentionStatus.RESOLVED.value:
        return "open intention"
    if (
        kind == MemoryType.PROCEDURAL.value
        and attrs.get("status") == ProcedureStatus.ACTIVE.value
        and float(attrs.get("success_rate", 0.0)) > config.procedure_success_protection
    ):
        return "working procedure"
    if kind == MemoryType.LEARNING.value and attrs.get("validated"):
        return "validated learning"
    if attrs.get("revised_by"):
        return "forget"  # a turn a later one corrected: its links do not make it worth keeping
    if float(attrs.get("importance", 0.0)) >= config.importance_protection:
        return "important"
    if pagerank >= config.pagerank_protection:
        return "central in the graph"
    return "forget"


def plan(
    memories: Iterable[tuple[str, dict[str, Any]]],
    *,
    pageranks: dict[str, float],
    now: float,
    config: ForgettingConfig,
) -> tuple[list[str], Counter[str], Counter[str], int]:
    """``(ids to forget, forgotten per type, protections used, memories examined)``."""
    doomed: list[str] = []
    by_type: Counter[str] = Counter()
    protected: Counter[str] = Counter()
    examined = 0
    for memory_id, attrs in memories:
        examined += 1
        decision = verdict(attrs, pagerank=pageranks.get(memory_id, 0.0), now=now, config=config)
        if decision == "forget":
            doomed.append(memory_id)
            by_type[str(attrs.get("memory_type"))] += 1
        elif decision is not None:
            protected[decision] += 1
    return doomed, by_type, protected, examined
