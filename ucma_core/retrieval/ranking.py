"""The multi-factor rank: relevance, importance, recency and retention, as pure functions."""

from __future__ import annotations

from dataclasses import dataclass

from ucma_core.config import RankingConfig
from ucma_core.dynamics.retention import recency, retention
from ucma_core.records import (
    Fact,
    Intention,
    IntentionStatus,
    Learning,
    MemoryRecord,
    Procedure,
    ProcedureStatus,
    Source,
)
from ucma_core.stores.procedural import evidence_weighted_score

__all__ = ["Factors", "effective_importance", "factors", "is_current", "relevance_from_distance"]


@dataclass(frozen=True)
class Factors:
    relevance: float
    importance: float
    recency: float
    retention: float

    generated: bool = False

    def score(self, weights: RankingConfig) -> float:
        total = weights.relevance + weights.importance + weights.recency + weights.retention
        factor = weights.generated_weight if self.generated else 1.0
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


def relevance_from_distance(distance: float) -> float:
    """Cosine distance (0 identical … 2 opposite) to relevance in [0, 1]."""
    return min(1.0, max(0.0, 1.0 - distance))


def effective_importance(record: MemoryRecord) -> float:
    """Importance, tempered by how much the memory has earned trust."""
    if isinstance(record, (Fact, Learning)):
        return record.importance * (0.5 + 0.5 * record.confidence)
    if isinstance(record, Procedure):
        return record.importance * (
            0.5 + 0.5 * evidence_weighted_score(record.success_rate, record.executions)
        )
    return record.importance


def is_current(record: MemoryRecord, now: float) -> bool:
    """False for superseded facts, deprecated procedures and resolved intentions."""
    if isinstance(record, Fact):
        return record.valid_to is None or record.valid_to > now
    if isinstance(record, Procedure):
        return record.status is not ProcedureStatus.DEPRECATED
    if isinstance(record, Intention):
        return record.status is not IntentionStatus.RESOLVED
    return True


def factors(record: MemoryRecord, relevance: float, now: float, weights: RankingConfig) -> Factors:
    return Factors(
        relevance=relevance,
        importance=effective_importance(record),
        recency=recency(record.timestamp, now, weights.recency_half_life_days),
        retention=retention(record.stability, record.last_access, now),
        generated=not Source(record.source).observed,
    )
