"""Phase 5, ``merge``: a user's episodes with the same text (ignoring case and spacing)
and vectors at ``duplicate_similarity`` or more are merged into the oldest, which inherits
their use; similar ones get ``similar_to`` edges (three at most)."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ucma_core.consolidation.context import CycleContext, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.storage.graph import EdgeType

__all__ = ["run"]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    cfg = cx.config.consolidation
    # keyed episodes (a chat message id, a Store key) are the caller's own items: never merged away
    fresh = cx.episodes(lambda a: not a.get("dedup_done") and a.get("key") is None)
    by_user: dict[Any, list[str]] = defaultdict(list)
    for memory_id, attrs in fresh:
        by_user[(attrs.get("user_id"), attrs.get("agent_id"))].append(memory_id)
    for (user_id, agent_id), new_ids in cx.steps(list(by_user.items())):
        if stopped(stop, report):
            return
        older = [i for i, _ in cx.episodes(_deduplicated_of(user_id, agent_id))][-500:]
        pool = older + new_ids
        with cx.lock:
            hits = {h.id: h for h in cx.ctx.backend.vectors.lookup(pool, with_vectors=True)}
        pool = [i for i in pool if i in hits and hits[i].vector is not None]
        if len(pool) < 2:
            _mark_dedup(cx, new_ids)
            continue
        matrix = np.asarray([hits[i].vector for i in pool], dtype=np.float64)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        first_new = len(pool) - len([i for i in new_ids if i in hits])
        sims = matrix[first_new:] @ matrix.T
        doomed: set[str] = set()
        with cx.lock, cx.ctx.backend.graph.batch():
            for row, memory_id in enumerate(pool[first_new:]):
                if memory_id in doomed:
                    continue
                order = np.argsort(-sims[row])
                linked = 0
                for col in order:
                    other = pool[int(col)]
                    sim = float(sims[row, col])
                    if other == memory_id or other in doomed or sim < cfg.similar_similarity:
                        continue
                    if (
                        sim >= cfg.duplicate_similarity
                        and int(col) < first_new + row
                        and hits[other].document.strip().lower() == hits[memory_id].document.strip().lower()
                    ):
                        _absorb(cx, other, memory_id)
                        doomed.add(memory_id)
                        report.count("merge", "merged")
                        break
                    if linked < 3:
                        cx.ctx.backend.graph.add_edge(memory_id, other, EdgeType.SIMILAR_TO, round(sim, 4))
                        linked += 1
                        report.count("merge", "similar_edges")
            # the duplicates go in the transaction that folded their use into the survivors, so
            # a crash never leaves a duplicate whose use was counted twice
            if doomed:
                cx.stores.delete(sorted(doomed), scrub=False)
        _mark_dedup(cx, [i for i in new_ids if i not in doomed])


def _deduplicated_of(user_id: str | None, agent_id: str | None) -> Callable[[dict[str, Any]], bool]:
    """Admits episodes of exactly this user and agent that an earlier cycle deduplicated."""

    def admits(attrs: dict[str, Any]) -> bool:
        return (
            bool(attrs.get("dedup_done"))
            and attrs.get("user_id") == user_id
            and attrs.get("agent_id") == agent_id
        )

    return admits


def _absorb(cx: CycleContext, survivor: str, duplicate: str) -> None:
    """Fold a duplicate's use into the survivor before the duplicate is deleted."""
    graph = cx.ctx.backend.graph
    s, d = graph.node(survivor), graph.node(duplicate)
    assert s is not None and d is not None
    cx.ctx.backend.set_state(
        survivor,
        stability=max(float(s["stability"]), float(d["stability"])),
        access_count=int(s["access_count"]) + int(d["access_count"]) + 1,
        importance=max(float(s["importance"]), float(d["importance"])),
        merged_ids=[*s.get("merged_ids", []), duplicate],
    )
    for u, v, kind, weight in graph.edges_of(duplicate):
        a, b = (survivor, v) if u == duplicate else (u, survivor)
        if a != b and kind != EdgeType.FOLLOWED_BY.value:
            graph.add_edge(a, b, kind, weight)


def _mark_dedup(cx: CycleContext, ids: Sequence[str]) -> None:
    with cx.lock, cx.ctx.backend.graph.batch():
        for memory_id in ids:
            if cx.ctx.backend.graph.node(memory_id) is not None:
                cx.ctx.backend.set_state(memory_id, dedup_done=True)
