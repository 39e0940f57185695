"""Learnings: distilled lessons, tagged with where they apply.

Confidence moves asymmetrically: a success adds 0.10 and marks the learning
validated, a failure takes 0.15 away. It takes several confirmations to trust a
lesson and only a few failures to stop trusting it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ucma_core.records import Learning, LearningType, MemoryType
from ucma_core.storage.graph import EdgeType
from ucma_core.storage.nodes import LearningNode
from ucma_core.stores.context import StoreContext, new_id

__all__ = ["FAILURE_PENALTY", "SUCCESS_REWARD", "LearningStore", "validated_confidence"]

SUCCESS_REWARD = 0.10
FAILURE_PENALTY = 0.15


def validated_confidence(confidence: float, success: bool) -> float:
    if success:
        return min(1.0, confidence + SUCCESS_REWARD)
    return max(0.0, confidence - FAILURE_PENALTY)


class LearningStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def add(
        self,
        *,
        insight: str,
        title: str,
        learning_type: LearningType,
        applicability: tuple[str, ...],
        confidence: float,
        importance: float,
        evidence: Sequence[str],
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        source: str,
        metadata: dict[str, Any],
    ) -> Learning:
        ctx = self._ctx
        now = ctx.now()
        learning = Learning(
            id=new_id(),
            memory_type=MemoryType.LEARNING,
            content=f"{title}: {insight}" if title else insight,
            timestamp=now,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            importance=importance,
            source=source,
            tags=applicability,
            metadata=metadata,
            source_ids=ctx.known(evidence),
            **ctx.fresh_state(importance, now),
            learning_type=learning_type,
            title=title,
            insight=insight,
            applicability=applicability,
            confidence=confidence,
        )
        ctx.backend.insert([learning], ctx.embedder.embed([learning.content]))
        self.link(learning.id)
        return learning

    def link(self, memory_id: str) -> None:
        self._ctx.link_sources(memory_id, EdgeType.SUPPORTS)

    def validate(self, memory_id: str, success: bool) -> None:
        node = self._ctx.backend.graph.node_as(memory_id, LearningNode)
        assert node is not None
        self._ctx.reinforce(
            memory_id,
            self._ctx.now(),
            confidence=round(validated_confidence(float(node.confidence), success), 6),
            validated=bool(node.validated) or success,
            successes=int(node.successes) + (1 if success else 0),
            failures=int(node.failures) + (0 if success else 1),
        )
