"""The multi-factor rank: relevance, importance, recency and retention, as pure functions.

Retention is read as forgetting reads it: learned knowledge (facts, procedures, lessons)
fades ``ForgettingConfig.knowledge_decay_factor`` times slower than episodes. A memory the
sleep cycle demoted (:mod:`ucma_core.retrieval.markers`) scores ``demotion`` of its score.

They read a memory's graph-node attributes (see :func:`ucma_core.storage.codec.node_attrs`),
which hold every field the rank needs, so candidates are ranked without decoding their
stored records; only the memories returned are decoded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ucma_core.config import RankingConfig
from ucma_core.dynamics.retention import recency, retention
from ucma_core.records import IntentionStatus, MemoryType, ProcedureStatus, Source
from ucma_core.stores.procedural import evidence_weighted_score

__all__ = ["KNOWLEDGE", "Factors", "effective_importance", "factors", "is_current"]

Node = Mapping[str, Any]
#: Learned knowledge, whose retention fades slower (as in :mod:`ucma_core.dynamics.forgetting`).
KNOWLEDGE = frozenset({MemoryType.SEMANTIC.value, MemoryType.PROCEDURAL.value, MemoryType.LEARNING.value})


@dataclass(frozen=True)
class Factors:
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
    importance = float(node["importance"])
    kind = node["memory_type"]
    if kind in (MemoryType.SEMANTIC.value, MemoryType.LEARNING.value):
        return importance * (0.5 + 0.5 * float(node.get("confidence", 1.0)))
    if kind == MemoryType.PROCEDURAL.value:
        score = evidence_weighted_score(float(node.get("success_rate", 0.0)), int(node.get("executions", 0)))
        return importance * (0.5 + 0.5 * score)
    return importance


def is_current(node: Node, now: float) -> bool:
    """False for superseded facts, deprecated procedures and resolved intentions."""
    kind = node["memory_type"]
    if kind == MemoryType.SEMANTIC.value:
        valid_to = node.get("valid_to")
        return valid_to is None or float(valid_to) > now
    if kind == MemoryType.PROCEDURAL.value:
        return node.get("status") != ProcedureStatus.DEPRECATED.value
    if kind == MemoryType.PROSPECTIVE.value:
        return node.get("status") != IntentionStatus.RESOLVED.value
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
    stability = float(node["stability"])
    if node["memory_type"] in KNOWLEDGE:
        stability *= knowledge_decay
    return Factors(
        relevance=relevance,
        importance=effective_importance(node),
        recency=recency(float(node["timestamp"]), now, weights.recency_half_life_days),
        retention=retention(stability, float(node["last_access"]), now),
        generated=not Source(node["source"]).observed,
        demotion=demotion,
    )
