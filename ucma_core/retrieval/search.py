"""One retrieval call: route, gather candidates from every signal, fuse, rank, diversify, reinforce.

Sources of candidates (all within the caller's scope and filters):

* dense — Chroma nearest neighbours of the query vector;
* keyword — BM25 over the FTS5 keyword index;
* time — when the router resolved a time range (or anchored one on an event the
  query names), dense and keyword search again inside that range;
* speaker — "what did Caroline say …": dense search among episodes Caroline took part in;
* entity — facts whose subject or object is named in the query, and the episodes they came from;
* kind — procedures for "how do I …" questions;
* graph — bounded spreading activation from the best candidates.

:func:`~ucma_core.retrieval.fusion.fuse` turns the signals into a relevance, the
multi-factor rank weighs it with importance, recency and retention, MMR removes
near-duplicates, and every memory returned is reinforced.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from ucma_core.records import MemoryRecord, MemoryType, RetrievalResult, RouteDecision
from ucma_core.retrieval.diversify import mmr
from ucma_core.retrieval.filters import Filters
from ucma_core.retrieval.fusion import fuse
from ucma_core.retrieval.ranking import Factors, factors, is_current
from ucma_core.retrieval.router import Route, RouteKind, route
from ucma_core.storage import codec
from ucma_core.stores.folder import FolderStores

__all__ = ["Retriever", "first_person"]

_WORD = re.compile(r"[\w'-]+")
_T = TypeVar("_T")


def first_person(query: str, user_id: str | None) -> str:
    """Refer to the scoped user in the first person, as their own turns do.

    Within one user's memories, "Where does Ana's sister live?" is asked about turns
    in which Ana wrote "my sister lives in Porto"; the name matches nothing there but
    greetings that mention it. A word equal to the ``user_id`` (or to its first part
    before ``-``, ``_``, ``.``, ``@`` or a space), case-insensitively, becomes "my"
    (possessive) or "I".

    Example:
        >>> first_person("Where does Ana's sister live?", "ana")
        'Where does my sister live?'
    """
    if not user_id:
        return query
    names = {user_id.lower(), re.split(r"[-_.@\s]", user_id.lower())[0]}
    names = {n for n in names if len(n) >= 2}
    if not names:
        return query
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    text = re.sub(rf"\b(?:{alternatives})(?:'s|’s|s')(?!\w)", "my", query, flags=re.I)
    return re.sub(rf"\b(?:{alternatives})\b", "I", text, flags=re.I)


class Retriever:
    """Runs :meth:`search` for one memory; :meth:`close` stops its helper thread."""

    def __init__(self, stores: FolderStores) -> None:
        self._stores = stores
        self._ctx = stores.ctx
        self._pool: ThreadPoolExecutor | None = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _in_background(self, fn: Callable[[], _T]) -> Future[_T]:
        """Run ``fn`` on the helper thread. The keyword search waits on SQLite while the
        query is embedded and Chroma searched, both of which release the GIL."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ucma-keyword")
        return self._pool.submit(fn)

    def plan(self, query: str, now: float, kind: RouteKind | None) -> Route:
        """The router's decision, with the caller's override of the kind applied."""
        decided = route(query, now, timezone=self._ctx.config.timezone)
        if kind is not None and kind is not decided.kind:
            keep_time = kind is RouteKind.TEMPORAL
            decided = dataclasses.replace(
                decided,
                kind=kind,
                time_range=decided.time_range if keep_time else None,
                anchor=decided.anchor if keep_time else None,
                reason=f"set by caller ({decided.kind.value} by the router)",
                topic=decided.topic if keep_time else query,
            )
        return decided

    def search(
        self,
        query: str,
        *,
        k: int,
        filters: Filters,
        now: float,
        kind: RouteKind | None = None,
        diversify: bool = True,
    ) -> list[RetrievalResult]:
        """Top ``k`` memories for ``query`` within ``filters``; each one returned is reinforced.
        ``diversify=False`` keeps the plain rank order (no MMR, no near-duplicate drop)."""
        ctx = self._ctx
        fusion = ctx.config.fusion
        plan = self.plan(query, now, kind)
        n = max(fusion.min_candidates, k * fusion.candidates_per_result)
        topic = first_person(plan.topic or query, None if filters.any_user else filters.user_id)  # type: ignore[arg-type]
        keyword = self._in_background(lambda: self._keyword(topic, n, filters, None))
        qvec = ctx.embedder.embed([topic])[0]
        signals: dict[str, dict[str, float]] = defaultdict(dict)
        vectors: dict[str, np.ndarray] = {}
        active = {"dense", "graph"}

        def add_dense(found: list[tuple[str, float, np.ndarray]]) -> None:
            for memory_id, distance, vector in found:
                vectors.setdefault(memory_id, vector)
                signals[memory_id]["dense"] = max(signals[memory_id].get("dense", 0.0), 1.0 - distance)

        def add_keyword(found: Sequence[tuple[str, float]]) -> None:
            for memory_id, score in found:
                signals[memory_id]["keyword"] = max(signals[memory_id].get("keyword", 0.0), score)

        add_dense(ctx.backend.vectors.nearest(qvec, n, filters.where()))
        add_keyword(keyword.result())
        if any("keyword" in s for s in signals.values()):
            active.add("keyword")

        time_range = plan.time_range or self._anchor_range(plan, qvec, filters, now)
        if time_range is not None and filters.time_range is None:
            active.add("time")
            ranged = dataclasses.replace(filters, time_range=time_range)
            add_dense(ctx.backend.vectors.nearest(qvec, n, ranged.where()))
            add_keyword(self._keyword(topic, n, ranged, None))
        if plan.speaker:
            active.add("speaker")
            where = _and(filters.where(), {codec.participant_key(plan.speaker): True})
            add_dense(ctx.backend.vectors.nearest(qvec, n, where))
        if plan.kind is RouteKind.PROCEDURAL and _admits_type(filters, MemoryType.PROCEDURAL):
            active.add("kind")
            typed = dataclasses.replace(filters, memory_types=(MemoryType.PROCEDURAL,))
            add_dense(ctx.backend.vectors.nearest(qvec, max(5, k), typed.where()))
        entity_hits = self._entity_candidates(query, plan, filters)
        if entity_hits:
            active.add("entity")
            for memory_id, strength in entity_hits.items():
                signals[memory_id]["entity"] = max(signals[memory_id].get("entity", 0.0), strength)

        self._mark_structured(signals, plan, time_range)
        reached = self._expand(signals, filters, active)
        self._mark_structured({i: signals[i] for i in reached}, plan, time_range)
        nodes = self._complete(signals, vectors, filters, qvec)

        relevance = fuse(signals, fusion, active)
        weights = ctx.config.ranking
        scored: dict[str, tuple[float, Factors]] = {}
        for memory_id, node in nodes.items():
            if is_current(node, now):
                f = factors(node, relevance[memory_id], now, weights)
                scored[memory_id] = (f.score(weights), f)
        ranked = sorted(scored, key=lambda i: (-scored[i][0], i))
        order = (
            mmr(
                ranked,
                {i: scored[i][0] for i in ranked},
                vectors,
                k,
                lambda_=fusion.mmr_lambda,
                duplicate_similarity=fusion.duplicate_similarity,
            )
            if diversify
            else ranked[:k]
        )
        route_note = RouteDecision(plan.kind.value, plan.reason)
        records = ctx.backend.fetch(order)
        top = [self._result(records[i], *scored[i], signals[i], route_note) for i in order if i in records]
        with ctx.backend.graph.batch():
            for result in top:
                ctx.reinforce(result.id, now)
        return top

    # ------------------------------------------------------------------ sources
    def _keyword(
        self, query: str, n: int, filters: Filters, ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        index = self._ctx.backend.keywords
        if index is None:
            return []
        user: str | bool | None = False if filters.any_user else filters.user_id  # type: ignore[assignment]
        found = index.search(
            query,
            n,
            user_id=user,
            agent_id=filters.exact("agent_id"),
            session_id=filters.exact("session_id"),
            memory_types=[t.value for t in filters.memory_types],
            time_range=filters.time_range,
            ids=ids,
        )
        return [(h.id, h.score) for h in found]

    def _anchor_range(
        self, plan: Route, qvec: list[float], filters: Filters, now: float
    ) -> tuple[float, float] | None:
        """For "before / after <event>": the time of the memory that best matches the event."""
        if not plan.anchor:
            return None
        vector = self._ctx.embedder.embed([plan.anchor])[0]
        found = self._ctx.backend.vectors.nearest(vector, 1, filters.where())
        keyword = self._keyword(plan.anchor, 1, filters, None)
        anchor_id = keyword[0][0] if keyword else (found[0][0] if found else None)
        node = self._ctx.backend.graph.node(anchor_id) if anchor_id else None
        if node is None:
            return None
        at = float(node["timestamp"])
        # the anchor event itself is neither before nor after itself
        return (0.0, at - 1e-3) if plan.anchor_side == "before" else (at + 1e-3, max(now, at + 1e-3))

    def _entity_candidates(self, query: str, plan: Route, filters: Filters) -> dict[str, float]:
        """Facts about entities named in the query (1.0) and the episodes they came from (0.7)."""
        graph = self._ctx.backend.graph
        words = _WORD.findall(query)
        names = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        if plan.entity:
            names.add(plan.entity)
        found: dict[str, float] = {}
        for name in names:
            for fact in self._stores.semantic.facts_of(
                self._stores.semantic.entity_ids(name, filters.scope), filters.scope, include_superseded=True
            ):
                found[fact] = 1.0
                attrs = graph.node(fact) or {}
                for source in attrs.get("source_ids", []):
                    found.setdefault(source, 0.7)
        return found

    # ------------------------------------------------------------------ assembly
    def _mark_structured(
        self, signals: dict[str, dict[str, float]], plan: Route, time_range: tuple[float, float] | None
    ) -> None:
        """Time, speaker and kind signals, read from the candidates' graph nodes."""
        graph = self._ctx.backend.graph
        speaker = plan.speaker.lower() if plan.speaker else None
        procedural = plan.kind is RouteKind.PROCEDURAL
        for memory_id, sig in signals.items():
            node = graph.node(memory_id)
            if node is None:
                continue
            if time_range is not None and time_range[0] <= float(node["timestamp"]) <= time_range[1]:
                sig["time"] = 1.0
            if speaker and speaker in {p.lower() for p in node.get("participants", ())}:
                sig["speaker"] = 1.0
            if procedural and node.get("memory_type") == MemoryType.PROCEDURAL.value:
                sig["kind"] = 1.0

    def _expand(self, signals: dict[str, dict[str, float]], filters: Filters, active: set[str]) -> list[str]:
        """Pull in graph neighbours of the best candidates with discounted activation;
        returns the ids that were not candidates before."""
        cfg = self._ctx.config
        if cfg.fusion.graph_seeds == 0 or cfg.graph.max_hops == 0 or not signals:
            return []
        pre = fuse(signals, cfg.fusion, active - {"graph"})
        seeds = dict(sorted(pre.items(), key=lambda kv: (-kv[1], kv[0]))[: cfg.fusion.graph_seeds])
        graph = self._ctx.backend.graph
        reached = graph.expand(
            seeds,
            max_hops=cfg.graph.max_hops,
            max_nodes=cfg.graph.max_nodes,
            max_fanout=cfg.graph.max_fanout,
            min_weight=cfg.graph.min_edge_weight,
        )
        top = max(seeds.values(), default=0.0) or 1.0
        new = []
        for node_id, (_, activation) in reached.items():
            attrs = graph.node(node_id)
            if attrs is None or attrs.get("kind") != "memory" or not filters.admits(attrs):
                continue
            if node_id not in signals:
                new.append(node_id)
            signals[node_id]["graph"] = max(signals[node_id].get("graph", 0.0), activation / top)
        return new

    def _complete(
        self,
        signals: dict[str, dict[str, float]],
        vectors: dict[str, np.ndarray],
        filters: Filters,
        qvec: Sequence[float],
    ) -> dict[str, dict[str, Any]]:
        """The graph node of every admissible candidate; drops the others from ``signals``.

        The vectors of candidates no dense search returned (keyword, entity and graph
        ones) are read from Chroma in one lookup; their dense signal is the cosine
        similarity to the query. Tags and metadata filters are checked here for them.
        """
        graph = self._ctx.backend.graph
        missing = [i for i in signals if i not in vectors and graph.node(i) is not None]
        vectors.update(self._ctx.backend.vectors.vectors_of(missing))
        if filters.needs_row and missing:
            rows = self._ctx.backend.rows(missing)
            untagged = {i for i in missing if i not in rows or not filters.admits_row(rows[i][1])}
        else:
            untagged = set()
        nodes: dict[str, dict[str, Any]] = {}
        for memory_id in list(signals):
            node = graph.node(memory_id)
            if (
                memory_id not in vectors
                or memory_id in untagged
                or node is None
                or node.get("kind") != "memory"
                or not filters.admits(node)
            ):
                del signals[memory_id]
                continue
            nodes[memory_id] = node
        unscored = [i for i in nodes if "dense" not in signals[i]]
        if unscored:
            matrix = np.stack([vectors[i] for i in unscored])
            for memory_id, similarity in zip(unscored, _cosines(qvec, matrix), strict=True):
                signals[memory_id]["dense"] = float(similarity)
        return nodes

    def _result(
        self,
        record: MemoryRecord,
        score: float,
        f: Factors,
        signals: dict[str, float],
        route_note: RouteDecision,
    ) -> RetrievalResult:
        return RetrievalResult(
            id=record.id,
            memory_type=record.memory_type,
            content=record.content,
            score=round(score, 6),
            timestamp=record.timestamp,
            metadata=record.metadata,
            source_ids=record.source_ids,
            relevance=round(f.relevance, 6),
            importance=f.importance,
            recency=f.recency,
            retention=f.retention,
            record=record,
            signals={s: round(v, 6) for s, v in signals.items()},
            route=route_note,
        )


def _cosines(query: Sequence[float], matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of ``query`` to each row of ``matrix`` (0 for zero vectors)."""
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(q))
    dots = (matrix * q).sum(axis=1)  # not ``@``: waking BLAS threads costs more than this product
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def _and(where: dict[str, object] | None, clause: dict[str, object]) -> dict[str, object]:
    if not where:
        return clause
    if "$and" in where:
        return {"$and": [*where["$and"], clause]}  # type: ignore[misc]
    return {"$and": [where, clause]}


def _admits_type(filters: Filters, memory_type: MemoryType) -> bool:
    return not filters.memory_types or memory_type in filters.memory_types
