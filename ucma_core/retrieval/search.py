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
from collections.abc import Sequence

import numpy as np

from ucma_core.records import MemoryRecord, MemoryType, RetrievalResult
from ucma_core.retrieval.diversify import mmr
from ucma_core.retrieval.filters import Filters
from ucma_core.retrieval.fusion import fuse
from ucma_core.retrieval.ranking import factors, is_current
from ucma_core.retrieval.router import Route, RouteKind, route
from ucma_core.storage import codec
from ucma_core.storage.vectors import VectorHit
from ucma_core.stores.context import StoreContext
from ucma_core.stores.semantic import entity_id

__all__ = ["Retriever", "first_person"]

_WORD = re.compile(r"[\w'-]+")


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
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

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
        self, query: str, *, k: int, filters: Filters, now: float, kind: RouteKind | None = None
    ) -> list[RetrievalResult]:
        """Top ``k`` memories for ``query`` within ``filters``; each one returned is reinforced."""
        ctx = self._ctx
        fusion = ctx.config.fusion
        plan = self.plan(query, now, kind)
        n = max(fusion.min_candidates, k * fusion.candidates_per_result)
        topic = first_person(plan.topic or query, None if filters.any_user else filters.user_id)  # type: ignore[arg-type]
        qvec = ctx.embedder.embed([topic])[0]
        signals: dict[str, dict[str, float]] = defaultdict(dict)
        hits: dict[str, VectorHit] = {}
        active = {"dense", "graph"}

        def add_dense(found: list[VectorHit]) -> None:
            for hit in found:
                hits.setdefault(hit.id, hit)
                signals[hit.id]["dense"] = max(signals[hit.id].get("dense", 0.0), 1.0 - hit.distance)

        def add_keyword(found: Sequence[tuple[str, float]]) -> None:
            for memory_id, score in found:
                signals[memory_id]["keyword"] = max(signals[memory_id].get("keyword", 0.0), score)

        add_dense(ctx.backend.vectors.query(qvec, n, filters.where(), with_vectors=True))
        add_keyword(self._keyword(topic, n, filters, None))
        if any("keyword" in s for s in signals.values()):
            active.add("keyword")

        time_range = plan.time_range or self._anchor_range(plan, qvec, filters, now)
        if time_range is not None and filters.time_range is None:
            active.add("time")
            ranged = dataclasses.replace(filters, time_range=time_range)
            add_dense(ctx.backend.vectors.query(qvec, n, ranged.where(), with_vectors=True))
            add_keyword(self._keyword(topic, n, ranged, None))
        if plan.speaker:
            active.add("speaker")
            where = _and(filters.where(), {codec.participant_key(plan.speaker): True})
            add_dense(ctx.backend.vectors.query(qvec, n, where, with_vectors=True))
        if plan.kind is RouteKind.PROCEDURAL and _admits_type(filters, MemoryType.PROCEDURAL):
            active.add("kind")
            typed = dataclasses.replace(filters, memory_types=(MemoryType.PROCEDURAL,))
            add_dense(ctx.backend.vectors.query(qvec, max(5, k), typed.where(), with_vectors=True))
        entity_hits = self._entity_candidates(query, plan, filters)
        if entity_hits:
            active.add("entity")
            for memory_id, strength in entity_hits.items():
                signals[memory_id]["entity"] = max(signals[memory_id].get("entity", 0.0), strength)

        records = self._load(signals, hits, qvec)
        self._mark_structured(signals, records, plan, time_range)
        self._expand(signals, records, hits, filters, active, qvec)

        relevance = fuse(signals, fusion, active)
        ranked: list[RetrievalResult] = []
        graph = ctx.backend.graph
        for memory_id, record in records.items():
            attrs = graph.node(memory_id)
            if attrs is None or not filters.admits(attrs) or not _has_tag(filters, record):
                continue
            if not is_current(record, now):
                continue
            f = factors(record, relevance[memory_id], now, ctx.config.ranking)
            ranked.append(
                RetrievalResult(
                    id=record.id,
                    memory_type=record.memory_type,
                    content=record.content,
                    score=round(f.score(ctx.config.ranking), 6),
                    timestamp=record.timestamp,
                    metadata=record.metadata,
                    source_ids=record.source_ids,
                    relevance=round(f.relevance, 6),
                    importance=f.importance,
                    recency=f.recency,
                    retention=f.retention,
                    record=record,
                    signals={s: round(v, 6) for s, v in signals[memory_id].items()},
                    route=f"{plan.kind.value}: {plan.reason}",
                )
            )
        ranked.sort(key=lambda r: (-r.score, r.id))
        by_id = {r.id: r for r in ranked}
        order = mmr(
            [r.id for r in ranked],
            {r.id: r.score for r in ranked},
            {i: hits[i].vector if i in hits else None for i in by_id},
            k,
            lambda_=fusion.mmr_lambda,
            duplicate_similarity=fusion.duplicate_similarity,
        )
        top = [by_id[i] for i in order]
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
        found = self._ctx.backend.vectors.query(vector, 1, filters.where())
        keyword = self._keyword(plan.anchor, 1, filters, None)
        anchor_id = keyword[0][0] if keyword else (found[0].id if found else None)
        node = self._ctx.backend.graph.node(anchor_id) if anchor_id else None
        if node is None:
            return None
        at = float(node["timestamp"])
        # the anchor event itself is neither before nor after itself
        return (0.0, at - 1e-3) if plan.anchor_side == "before" else (at + 1e-3, max(now, at + 1e-3))

    def _entity_candidates(self, query: str, plan: Route, filters: Filters) -> dict[str, float]:
        """Facts about entities named in the query (1.0) and the episodes they came from (0.7)."""
        graph = self._ctx.backend.graph
        user = None if filters.any_user else filters.user_id
        agent = filters.exact("agent_id")
        words = _WORD.findall(query)
        names = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        if plan.entity:
            names.add(plan.entity)
        found: dict[str, float] = {}
        for name in names:
            ent = entity_id(name, user, agent)  # type: ignore[arg-type]
            if ent not in graph:
                continue
            for fact, _, kind, _ in graph.edges_of(ent, direction="in"):
                if kind not in ("subject", "object"):
                    continue
                found[fact] = 1.0
                attrs = graph.node(fact) or {}
                for source in attrs.get("source_ids", []):
                    found.setdefault(source, 0.7)
        return found

    # ------------------------------------------------------------------ assembly
    def _load(
        self, signals: dict[str, dict[str, float]], hits: dict[str, VectorHit], qvec: Sequence[float]
    ) -> dict[str, MemoryRecord]:
        """Decode every candidate (one Chroma lookup for those no dense search returned)."""
        missing = [i for i in signals if i not in hits and self._ctx.backend.graph.node(i) is not None]
        for hit in self._ctx.backend.vectors.lookup(missing, with_vectors=True):
            hits[hit.id] = hit
        records: dict[str, MemoryRecord] = {}
        for memory_id in list(signals):
            hit = hits.get(memory_id)
            record = self._ctx.backend.decode_hit(hit) if hit is not None else None
            if record is None:
                del signals[memory_id]
                continue
            records[memory_id] = record
            if "dense" not in signals[memory_id] and hit is not None and hit.vector is not None:
                signals[memory_id]["dense"] = _cosine(qvec, hit.vector)
        return records

    def _mark_structured(
        self,
        signals: dict[str, dict[str, float]],
        records: dict[str, MemoryRecord],
        plan: Route,
        time_range: tuple[float, float] | None,
    ) -> None:
        speaker = plan.speaker.lower() if plan.speaker else None
        for memory_id, record in records.items():
            sig = signals[memory_id]
            if time_range is not None and time_range[0] <= record.timestamp <= time_range[1]:
                sig["time"] = 1.0
            if speaker and speaker in {p.lower() for p in getattr(record, "participants", ())}:
                sig["speaker"] = 1.0
            if plan.kind is RouteKind.PROCEDURAL and record.memory_type is MemoryType.PROCEDURAL:
                sig["kind"] = 1.0

    def _expand(
        self,
        signals: dict[str, dict[str, float]],
        records: dict[str, MemoryRecord],
        hits: dict[str, VectorHit],
        filters: Filters,
        active: set[str],
        qvec: Sequence[float],
    ) -> None:
        """Pull in graph neighbours of the best candidates with discounted activation."""
        cfg = self._ctx.config
        if cfg.fusion.graph_seeds == 0 or cfg.graph.max_hops == 0 or not records:
            return
        pre = fuse(signals, cfg.fusion, active - {"graph"})
        seeds = dict(sorted(pre.items(), key=lambda kv: -kv[1])[: cfg.fusion.graph_seeds])
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
            signals[node_id]["graph"] = max(signals[node_id].get("graph", 0.0), activation / top)
            if node_id not in records:
                new.append(node_id)
        if new:
            for hit in self._ctx.backend.vectors.lookup(new, with_vectors=True):
                hits[hit.id] = hit
                record = self._ctx.backend.decode_hit(hit)
                if record is not None:
                    records[hit.id] = record
                    if hit.vector is not None:
                        signals[hit.id]["dense"] = _cosine(qvec, hit.vector)
        for node_id in [i for i in signals if i not in records]:
            del signals[node_id]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    return float(va @ vb) / (na * nb) if na and nb else 0.0


def _and(where: dict[str, object] | None, clause: dict[str, object]) -> dict[str, object]:
    if not where:
        return clause
    if "$and" in where:
        return {"$and": [*where["$and"], clause]}  # type: ignore[misc]
    return {"$and": [where, clause]}


def _admits_type(filters: Filters, memory_type: MemoryType) -> bool:
    return not filters.memory_types or memory_type in filters.memory_types


def _has_tag(filters: Filters, record: MemoryRecord) -> bool:
    """Tags are checked here for candidates that came from the graph or the entity index."""
    return not filters.tags or bool(set(filters.tags) & set(record.tags))
