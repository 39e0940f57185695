"""Maximal marginal relevance: keep near-identical memories from crowding the top k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["mmr"]


def mmr(
    ranked: Sequence[str],
    scores: Mapping[str, float],
    vectors: Mapping[str, Sequence[float] | None],
    k: int,
    *,
    lambda_: float,
    duplicate_similarity: float,
) -> list[str]:
    """Pick ``k`` ids from ``ranked`` (best first) trading score against similarity to
    those already picked; a candidate at least ``duplicate_similarity`` (cosine) to a
    picked one is dropped. Candidates without a vector are never penalised."""
    if lambda_ >= 1.0 and duplicate_similarity >= 1.0:
        return list(ranked[:k])
    unit: dict[str, np.ndarray] = {}
    for memory_id in ranked:
        vec = vectors.get(memory_id)
        if vec is not None:
            arr = np.asarray(vec, dtype=np.float64)
            norm = float(np.linalg.norm(arr))
            if norm > 0:
                unit[memory_id] = arr / norm
    picked: list[str] = []
    pool = list(ranked)
    while pool and len(picked) < k:
        best_id, best_value = None, -np.inf
        for memory_id in pool:
            sim = 0.0
            if memory_id in unit and picked:
                sims = [float(unit[memory_id] @ unit[p]) for p in picked if p in unit]
                sim = max(sims, default=0.0)
            if sim >= duplicate_similarity:
                continue
            value = lambda_ * scores[memory_id] - (1.0 - lambda_) * sim
            if value > best_value:
                best_id, best_value = memory_id, value
        if best_id is None:
            break
        picked.append(best_id)
        pool.remove(best_id)
    return picked
