"""Maximal marginal relevance: keep near-identical memories from crowding the top k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["mmr"]


def mmr(
    ranked: Sequence[str],
    scores: Mapping[str, float],
    vectors: Mapping[str, Sequence[float] | np.ndarray],
    k: int,
    *,
    lambda_: float,
    duplicate_similarity: float,
) -> list[str]:
    """Pick ``k`` ids from ``ranked`` (best first) trading score against similarity to
    those already picked; a candidate at least ``duplicate_similarity`` (cosine) to a
    picked one is dropped. ``vectors`` must hold a vector for every id in ``ranked``.

    MMR decides *which* ids make the top ``k``; they come back in ``ranked``'s order, so
    the list is in score order (a diverse pick never jumps above a better one).

    >>> vectors = {"a": [1.0, 0.0], "b": [1.0, 0.0], "c": [0.0, 1.0]}
    >>> scores = {"a": 0.9, "b": 0.89, "c": 0.5}
    >>> mmr(["a", "b", "c"], scores, vectors, 2, lambda_=0.5, duplicate_similarity=0.99)
    ['a', 'c']
    >>> vectors["b"] = [1.0, 0.1]  # close to "a", not a duplicate: MMR picks "c" before it
    >>> scores = {"a": 0.9, "b": 0.8, "c": 0.7}
    >>> mmr(["a", "b", "c"], scores, vectors, 3, lambda_=0.5, duplicate_similarity=1.0)
    ['a', 'b', 'c']
    """
    if lambda_ >= 1.0 and duplicate_similarity >= 1.0:
        return list(ranked[:k])
    ids = list(ranked)
    if not ids:
        return []
    matrix = np.asarray(np.stack([vectors[i] for i in ids]), dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    score = np.asarray([scores[i] for i in ids])
    closest = np.zeros(len(ids))  # highest similarity to anything picked so far
    alive = np.ones(len(ids), dtype=bool)
    base = lambda_ * score
    penalty = 1.0 - lambda_
    picked: list[int] = []
    while len(picked) < k:
        value = np.where(alive & (closest < duplicate_similarity), base - penalty * closest, -np.inf)
        best = int(np.argmax(value))
        if value[best] == -np.inf:  # every candidate left is picked or a duplicate
            break
        picked.append(best)
        if len(picked) == k:
            break
        alive[best] = False
        # row by row, without BLAS: thread start-up costs more than these few products
        np.maximum(closest, (matrix * matrix[best]).sum(axis=1), out=closest)
    return [ids[n] for n in sorted(picked)]
