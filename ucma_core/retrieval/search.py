"""Dense search with filters, then the multi-factor rank, then reinforcement."""

from __future__ import annotations

from ucma_core.records import RetrievalResult
from ucma_core.retrieval.filters import Filters
from ucma_core.retrieval.ranking import factors, is_current, relevance_from_distance
from ucma_core.stores.context import StoreContext

__all__ = ["Retriever"]


class Retriever:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def search(self, query: str, *, k: int, filters: Filters, now: float) -> list[RetrievalResult]:
        """Top ``k`` memories for ``query`` within ``filters``; each one returned is reinforced."""
        ctx = self._ctx
        vector = ctx.embedder.embed([query])[0]
        hits = ctx.backend.vectors.query(vector, k * ctx.config.ranking.candidate_multiplier, filters.where())
        ranked: list[RetrievalResult] = []
        for hit in hits:
            record = ctx.backend.decode_hit(hit)
            if record is None or not is_current(record, now):
                continue
            f = factors(record, relevance_from_distance(hit.distance), now, ctx.config.ranking)
            ranked.append(
                RetrievalResult(
                    id=record.id,
                    memory_type=record.memory_type,
                    content=record.content,
                    score=round(f.score(ctx.config.ranking), 6),
                    timestamp=record.timestamp,
                    metadata=record.metadata,
                    source_ids=record.source_ids,
                    relevance=f.relevance,
                    importance=f.importance,
                    recency=f.recency,
                    retention=f.retention,
                    record=record,
                )
            )
        ranked.sort(key=lambda r: (-r.score, r.id))
        top = ranked[:k]
        with ctx.backend.graph.batch():
            for result in top:
                ctx.reinforce(result.id, now)
        return top
