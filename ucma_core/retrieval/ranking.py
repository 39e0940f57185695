"""The multi-factor rank: relevance, importance, recency and retention, as pure functions.

Retention is read as forgetting reads it: learned knowledge (facts, procedures, lessons)
fades ``ForgettingConfig.knowledge_decay_factor`` times slower than episodes. A memory the
sleep cycle demoted (:mod:`ucma_core.retrieval.markers`) scores ``demotion`` of its score.

They read a memory's typed graph record (:class:`~ucma_core.storage.nodes.MemoryNode`),
which holds every field the rank needs, so candidates are ranked without decoding their
stored records; only the memories returned are decoded.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from ucma_core.config import RankingConfig
from ucma_core.dynamics.retention import recency, retention
from ucma_core.records import IntentionStatus, MemoryType, ProcedureStatus, Source
from ucma_core.storage.nodes import MemoryNode
from ucma_core.stores.procedural import evidence_weighted_score

__all__ = ["KNOWLEDGE", "Factors", "effective_importance", "factors", "is_current", "observed_source"]


@cache
def observed_source(source: str) -> bool:
    """:attr:`Source.observed` of a stored source value (read once per value)."""
    return Source(source).observed


Node = MemoryNode
#: Learned knowledge, whose retention fades slower (as in :mod:`ucma_core.dynamics.forgetting`).
KNOWLEDGE = frozenset({MemoryType.SEMANTIC.value, MemoryType.PROCEDURAL.value, MemoryType.LEARNING.value})
# the enum values the rank compares with, read once (an enum member's ``.value`` is a descriptor call)
_SEMANTIC, _PROCEDURAL = MemoryType.SEMANTIC.value, MemoryType.PROCEDURAL.value
_LEARNING, _PROSPECTIVE = MemoryType.LEARNING.value, MemoryType.PROSPECTIVE.value
_DEPRECATED, _RESOLVED = ProcedureStatus.DEPRECATED.value, IntentionStatus.RESOLVED.value


class Factors(NamedTuple):
    """The rank factors of one memory (a tuple: retrieval makes one per candidate)."""

    relevance: float
    importance: float
    recency: float
    retention: float

    generated: bool = False
    #: The score multiplier of a memory the sleep cycle marked (1.0 for the others).
    demotion: float = 1.0

    def score(self, weights: RankingConfig) -> float:
        total = weights.relevance + weights.importance + weights.recency + weights.retention
        factor = (weights.generated_weight if self.generated else 1.0) * self.demotion
        return (
            factor
            * (
                weights.relevance * self.relevance
                + weights.importance * self.importance
                + weights.recency * self.recency
                + weights.retention * self.retention
            )
            / total
        )


def effective_importance(node: Node) -> float:
    """Importance, tempered by how much the memory has earned trust."""
    importance = node.importance
    kind = node.MEMORY_TYPE
    if kind in (_SEMANTIC, _LEARNING):
        return importance * (0.5 + 0.5 * float(node.get("confidence", 1.0)))
    if kind == _PROCEDURAL:
        score = evidence_weighted_score(float(node.get("success_rate", 0.0)), int(node.get("executions", 0)))
        return importance * (0.5 + 0.5 * score)
    return importance


def is_current(node: Node, now: float) -> bool:
    """False for superseded facts, deprecated procedures and resolved intentions."""
    kind = node.MEMORY_TYPE
    if kind == _SEMANTIC:
        valid_to = node.get("valid_to")
        return valid_to is None or float(valid_to) > now
    if kind == _PROCEDURAL:
        return bool(node.get("status") != _DEPRECATED)
    if kind == _PROSPECTIVE:
        return bool(node.get("status") != _RESOLVED)
    return True


def factors(
    node: Node,
    relevance: float,
    now: float,
    weights: RankingConfig,
    *,
    knowledge_decay: float = 1.0,
    demotion: float = 1.0,
) -> Factors:
    """The rank factors of one memory; ``knowledge_decay`` multiplies the stability of facts,
    procedures and lessons (``ForgettingConfig.knowledge_decay_factor``)."""
    stability = node.stability
    if node.MEMORY_TYPE in KNOWLEDGE:
        stability *= knowledge_decay
    return Factors(
        relevance=relevance,
        importance=effective_importance(node),
        recency=recency(node.timestamp, now, weights.recency_half_life_days),
        retention=retention(stability, node.last_access, now),
        generated=not observed_source(node.source),
        demotion=demotion,
    )
