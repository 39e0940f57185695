"""Sleep consolidation: the cycle that turns a pile of episodes into organised memory.

Phases, in order (each can be run alone):

1. ``compress`` — short-term episodes past ``short_term_ttl_hours`` move to the
   medium-term tier; long ones get a summary. Those below an adaptive importance
   threshold (higher when many expire at once) lose half their stability, so the
   forgetting engine takes them sooner.
2. ``group`` — a session's episodes are grouped into consolidated episodes (a
   summary linked by ``consolidates`` edges to the originals, which are kept).
3. ``extract`` — facts are extracted from observed episodes and asserted with
   ``derived_from`` provenance; a new fact that the provider judges to contradict a
   current one supersedes it (``valid_to`` set, ``contradicts`` edge, history kept).
4. ``patterns`` — an episode that reports success or failure, with the turns
   before it, yields a procedure (or an outcome for a known one) and a lesson.
5. ``merge`` — a user's episodes with the same text (ignoring case and spacing)
   and vectors at ``duplicate_similarity`` or more are merged into the oldest,
   which inherits their use; similar ones get ``similar_to`` edges (three at most).
6. ``transitions`` — working-memory items that were read often, stayed long, are
   important or sit in a nearly full zone move into long-term memory.
7. ``reinforce`` — memories central in the graph (PageRank) gain stability.
8. ``prune`` — the forgetting engine lets faded memories go.

Model calls happen with the memory's lock released, so ``observe`` and
``remember`` are never blocked behind a provider. Progress is recorded on the
episodes themselves, so a cycle that is interrupted (between phases or batches)
or whose provider fails resumes where it stopped on the next run.
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ucma_core.config import MemoryConfig
from ucma_core.errors import ProviderError, UCMAError
from ucma_core.providers.protocols import ExtractedFact, Provider
from ucma_core.records import LearningType, MemoryType, ProcedureStatus, Source, Tier
from ucma_core.scope import ANY, Scope
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.episodic import EpisodeDraft
from ucma_core.stores.folder import FolderStores
from ucma_core.stores.semantic import entity_id, normalise
from ucma_core.working_memory import WorkingMemory

__all__ = ["PHASES", "ConsolidationReport", "SleepCycle"]

PHASES = ("compress", "group", "extract", "patterns", "merge", "transitions", "reinforce", "prune")
_SUCCESS = re.compile(
    r"\b(?:fixed|resolved|works now|working now|solved|succeeded|success(?:ful)?|done)\b", re.I
)
_FAILURE = re.compile(
    r"\b(?:still (?:fails|failing|broken)|didn't work|did not work|gave up|failed again)\b", re.I
)
_WINDOW = 8


@dataclass
class ConsolidationReport:
    """What one cycle did: per phase, counters; plus provider errors and whether it was cut short."""

    phases: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    def count(self, phase: str, key: str, n: int = 1) -> None:
        bucket = self.phases.setdefault(phase, {})
        bucket[key] = bucket.get(key, 0) + n


class SleepCycle:
    """Runs consolidation phases against one memory's stores.

    ``lock`` is the memory's lock: every read or write of memory state happens
    under it, in short critical sections; provider calls happen outside it.
    ``working`` is the memory's working memory, if one is in use.
    """

    def __init__(
        self,
        stores: FolderStores,
        provider: Provider,
        lock: AbstractContextManager[Any],
        *,
        working: WorkingMemory | None = None,
    ) -> None:
        self._ctx = stores.ctx
        self._s = stores
        self._provider = provider
        self._lock = lock
        self._working = working

    @property
    def _config(self) -> MemoryConfig:
        return self._ctx.config

    def run(
        self, *, now: float, stop: threading.Event | None = None, phases: Sequence[str] = PHASES
    ) -> ConsolidationReport:
        report = ConsolidationReport()
        started = time.perf_counter()
        for phase in phases:
            if stop is not None and stop.is_set():
                report.interrupted = True
                break
            report.phases.setdefault(phase, {})
            try:
                getattr(self, f"_{phase}")(now, report, stop)
            except ProviderError as e:
                report.errors.append(f"{phase}: {e}")
        report.seconds = round(time.perf_counter() - started, 4)
        return report

    # ------------------------------------------------------------------ helpers
    def _episodes(self, predicate: Callable[[dict[str, Any]], bool]) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            found = [
                (i, dict(a))
                for i, a in self._ctx.backend.graph.nodes()
                if a.get("memory_type") == MemoryType.EPISODIC.value and predicate(a)
            ]
        found.sort(key=lambda ia: (float(ia[1]["timestamp"]), ia[0]))
        return found

    def _texts(self, ids: Sequence[str]) -> dict[str, str]:
        with self._lock:
            return {h.id: h.document for h in self._ctx.backend.vectors.lookup(list(ids))}

    @staticmethod
    def _batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
        for start in range(0, len(items), size):
            yield items[start : start + size]

    # ------------------------------------------------------------------ 1. compress
    def _compress(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        cfg = self._config.consolidation
        cutoff = now - self._config.short_term_ttl_hours * 3600.0
        expired = self._episodes(
            lambda a: a.get("tier") == Tier.SHORT_TERM.value and float(a["timestamp"]) < cutoff
        )
        if not expired:
            return
        threshold = cfg.compression_importance_base + cfg.compression_volume_penalty * min(
            1.0, len(expired) / cfg.volume_reference
        )
        for batch in self._batches(expired, cfg.batch_size * 8):
            if stop is not None and stop.is_set():
                report.interrupted = True
                return
            texts = self._texts([i for i, _ in batch])
            long_ids = [i for i in texts if len(texts[i].split()) > cfg.summary_words * 1.5]
            summaries = (
                dict(
                    zip(
                        long_ids,
                        self._provider.summarize([[texts[i]] for i in long_ids], max_words=cfg.summary_words),
                        strict=True,
                    )
                )
                if long_ids
                else {}
            )
            with self._lock:
                for memory_id, attrs in batch:
                    if self._ctx.backend.graph.node(memory_id) is None:
                        continue
                    update: dict[str, Any] = {"tier": Tier.MEDIUM_TERM.value}
                    if memory_id in summaries:
                        update["summary"] = summaries[memory_id]
                        report.count("compress", "summarised")
                    if float(attrs["importance"]) < threshold:
                        update["stability"] = float(attrs["stability"]) / 2
                        report.count("compress", "weakened")
                    self._ctx.backend.set_state(memory_id, **update)
                    report.count("compress", "moved_to_medium_term")

    # ------------------------------------------------------------------ 2. group
    def _group(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        cfg = self._config.consolidation
        pending = self._episodes(lambda a: not a.get("consolidated_into") and not a.get("source_ids"))
        sessions: dict[tuple[Any, Any, Any], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for memory_id, attrs in pending:
            sessions[(attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id"))].append(
                (memory_id, attrs)
            )
        quiet = now - cfg.group_after_hours * 3600.0
        chunks: list[list[tuple[str, dict[str, Any]]]] = []
        for episodes in sessions.values():
            for start in range(0, len(episodes), cfg.group_size):
                chunk = episodes[start : start + cfg.group_size]
                full = len(chunk) == cfg.group_size
                if full or (len(chunk) >= cfg.min_group and float(chunk[-1][1]["timestamp"]) < quiet):
                    chunks.append(chunk)
        for batch in self._batches(chunks, cfg.batch_size):
            if stop is not None and stop.is_set():
                report.interrupted = True
                return
            texts = self._texts([i for chunk in batch for i, _ in chunk])
            groups = [[texts[i] for i, _ in chunk if i in texts] for chunk in batch]
            summaries = self._provider.summarize(groups, max_words=cfg.summary_words)
            drafts, members = [], []
            for chunk, summary in zip(batch, summaries, strict=True):
                first = chunk[0][1]
                people = tuple(dict.fromkeys(p for _, a in chunk for p in a.get("participants", [])))
                drafts.append(
                    EpisodeDraft(
                        content=summary,
                        source=Source.CONSOLIDATION.value,
                        timestamp=float(first["timestamp"]),
                        importance=max(float(a["importance"]) for _, a in chunk),
                        user_id=first.get("user_id"),
                        agent_id=first.get("agent_id"),
                        session_id=first.get("session_id"),
                        tags=("consolidated",),
                        participants=people,
                        source_ids=tuple(i for i, _ in chunk),
                        tier=Tier.MEDIUM_TERM,
                    )
                )
                members.append([i for i, _ in chunk])
            vectors = self._ctx.embedder.embed([d.content for d in drafts])
            with self._lock, self._ctx.backend.graph.batch():
                alive = [all(self._ctx.backend.graph.node(i) is not None for i in ids) for ids in members]
                keep = [k for k, ok in enumerate(alive) if ok]
                created = self._s.episodic.add([drafts[k] for k in keep], [vectors[k] for k in keep])
                for episode, k in zip(created, keep, strict=True):
                    for original in members[k]:
                        self._ctx.backend.set_state(original, consolidated_into=episode.id)
                    report.count("group", "consolidated_episodes")
                    report.count("group", "episodes_grouped", len(members[k]))

    # ------------------------------------------------------------------ 3. extract
    def _speaker(self, attrs: dict[str, Any]) -> str | None:
        people = attrs.get("participants") or []
        if people:
            return str(people[0])
        user = attrs.get("user_id")
        if attrs.get("source") != Source.USER.value or not user:
            return None
        # a user id that is a plain lower-case name ("ana") is the user's name ("Ana")
        return str(user).capitalize() if str(user).isalpha() and str(user).islower() else str(user)

    def _extract(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        cfg = self._config.consolidation
        observed = {s.value for s in Source if s.observed}
        pending = self._episodes(
            lambda a: not a.get("facts_done") and not a.get("source_ids") and a.get("source") in observed
        )
        for batch in self._batches(pending, cfg.batch_size):
            if stop is not None and stop.is_set():
                report.interrupted = True
                return
            texts = self._texts([i for i, _ in batch])
            ids = [i for i, _ in batch if i in texts]
            attrs_by_id = dict(batch)
            found = self._provider.extract_facts(
                [texts[i] for i in ids], speakers=[self._speaker(attrs_by_id[i]) for i in ids]
            )
            pairs = self._rival_pairs(ids, found, attrs_by_id)
            verdicts = (
                dict(zip(pairs, self._provider.conflicts(list(pairs.values())), strict=True)) if pairs else {}
            )
            with self._lock, self._ctx.backend.graph.batch():
                for memory_id, facts in zip(ids, found, strict=True):
                    attrs = self._ctx.backend.graph.node(memory_id)
                    if attrs is None:
                        continue
                    at = float(attrs["timestamp"])
                    for fact in facts:
                        stored = self._s.semantic.assert_fact(
                            subject=fact.subject,
                            predicate=fact.predicate,
                            obj=fact.object,
                            confidence=fact.confidence,
                            user_id=attrs.get("user_id"),
                            agent_id=attrs.get("agent_id"),
                            session_id=attrs.get("session_id"),
                            source_ids=[memory_id],
                            valid_from=at,
                            importance=max(0.5, float(attrs["importance"])),
                            source=str(attrs.get("source")),
                            metadata={},
                            tags=(),
                            exclusive=False,
                        )
                        report.count("extract", "facts")
                        for rival in self._s.semantic.rivals(stored.id):
                            rattrs = self._ctx.backend.graph.node(rival)
                            if rattrs is None or float(rattrs["valid_from"]) > at:
                                continue
                            if verdicts.get(
                                _pair_key(
                                    rattrs["subject"], rattrs["predicate"], rattrs["object"], fact.object
                                )
                            ):
                                self._s.semantic.supersede(rival, stored.id, at)
                                report.count("extract", "superseded")
                    self._ctx.backend.set_state(memory_id, facts_done=True)
                    report.count("extract", "episodes")

    def _rival_pairs(
        self, ids: list[str], found: list[list[ExtractedFact]], attrs_by_id: dict[str, dict[str, Any]]
    ) -> dict[tuple[str, str, str, str], tuple[ExtractedFact, ExtractedFact]]:
        """(older, newer) pairs with the same subject and predicate and another object, for the
        conflict judge: older ones stored already or extracted earlier in this batch."""
        pairs: dict[tuple[str, str, str, str], tuple[ExtractedFact, ExtractedFact]] = {}
        graph = self._ctx.backend.graph
        earlier: dict[tuple[Any, Any, str, str], list[ExtractedFact]] = defaultdict(list)
        with self._lock:
            for memory_id, facts in zip(ids, found, strict=True):
                attrs = attrs_by_id[memory_id]
                scope = (attrs.get("user_id"), attrs.get("agent_id"))
                for fact in facts:
                    olds = list(earlier[(*scope, normalise(fact.subject), normalise(fact.predicate))])
                    subject = [entity_id(fact.subject, *scope)]
                    for rival in self._s.semantic.facts_of(subject, Scope(ANY), role="subject"):
                        r = graph.node(rival)
                        if r is not None and normalise(r["predicate"]) == normalise(fact.predicate):
                            olds.append(
                                ExtractedFact(
                                    r["subject"], r["predicate"], r["object"], float(r["confidence"])
                                )
                            )
                    for old in olds:
                        if normalise(old.object) != normalise(fact.object):
                            pairs[_pair_key(old.subject, old.predicate, old.object, fact.object)] = (
                                old,
                                fact,
                            )
                    earlier[(*scope, normalise(fact.subject), normalise(fact.predicate))].append(fact)
        return pairs

    # ------------------------------------------------------------------ 4. patterns
    def _patterns(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        observed = {s.value for s in Source if s.observed}
        pending = self._episodes(
            lambda a: not a.get("mined") and not a.get("source_ids") and a.get("source") in observed
        )
        texts = self._texts([i for i, _ in pending])
        for memory_id, attrs in pending:
            if stop is not None and stop.is_set():
                report.interrupted = True
                return
            text = texts.get(memory_id, "")
            succeeded = bool(_SUCCESS.search(text)) and not _FAILURE.search(text)
            failed = bool(_FAILURE.search(text))
            if not (succeeded or failed):
                with self._lock:
                    if self._ctx.backend.graph.node(memory_id) is not None:
                        self._ctx.backend.set_state(memory_id, mined=True)
                continue
            with self._lock:
                session = self._s.episodic.session(
                    attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id")
                )
            window_ids = (
                session[max(0, session.index(memory_id) - _WINDOW + 1) : session.index(memory_id) + 1]
                if memory_id in session
                else [memory_id]
            )
            window_texts = self._texts(window_ids)
            window = [window_texts[i] for i in window_ids if i in window_texts]
            procedure = self._provider.extract_procedure(window) if succeeded else None
            lesson = self._provider.distill_learning(window, succeeded=succeeded)
            with self._lock, self._ctx.backend.graph.batch():
                if self._ctx.backend.graph.node(memory_id) is None:
                    continue
                scope = {
                    "user_id": attrs.get("user_id"),
                    "agent_id": attrs.get("agent_id"),
                    "session_id": attrs.get("session_id"),
                }
                if procedure is not None and procedure.steps:
                    existing = self._s.procedural.find_by_name(
                        procedure.name, attrs.get("user_id"), attrs.get("agent_id")
                    )
                    if existing is None:
                        self._s.procedural.add(
                            name=procedure.name,
                            steps=procedure.steps,
                            description=procedure.description,
                            trigger_tags=procedure.trigger_tags,
                            status=ProcedureStatus.DRAFT,
                            importance=0.6,
                            source=Source.CONSOLIDATION.value,
                            metadata={},
                            source_ids=window_ids,
                            **scope,
                        )
                        report.count("patterns", "procedures")
                    else:
                        self._s.procedural.record_outcome(existing, True)
                        report.count("patterns", "procedure_outcomes")
                if lesson is not None:
                    self._s.learning.add(
                        insight=lesson.insight,
                        title=lesson.title,
                        learning_type=LearningType(lesson.learning_type),
                        applicability=lesson.applicability,
                        confidence=lesson.confidence,
                        importance=0.6,
                        evidence=window_ids,
                        source=Source.CONSOLIDATION.value,
                        metadata={},
                        **scope,
                    )
                    report.count("patterns", "learnings")
                self._ctx.backend.set_state(memory_id, mined=True)

    # ------------------------------------------------------------------ 5. merge
    def _merge(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        cfg = self._config.consolidation
        fresh = self._episodes(lambda a: not a.get("dedup_done"))
        by_user: dict[Any, list[str]] = defaultdict(list)
        for memory_id, attrs in fresh:
            by_user[(attrs.get("user_id"), attrs.get("agent_id"))].append(memory_id)
        for (user_id, agent_id), new_ids in by_user.items():
            if stop is not None and stop.is_set():
                report.interrupted = True
                return
            older = [
                i
                for i, a in self._episodes(
                    lambda a, u=user_id, g=agent_id: (
                        bool(a.get("dedup_done")) and a.get("user_id") == u and a.get("agent_id") == g
                    )
                )
            ][-500:]
            pool = older + new_ids
            with self._lock:
                hits = {h.id: h for h in self._ctx.backend.vectors.lookup(pool, with_vectors=True)}
            pool = [i for i in pool if i in hits and hits[i].vector is not None]
            if len(pool) < 2:
                self._mark_dedup(new_ids)
                continue
            matrix = np.asarray([hits[i].vector for i in pool], dtype=np.float64)
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            first_new = len(pool) - len([i for i in new_ids if i in hits])
            sims = matrix[first_new:] @ matrix.T
            doomed: set[str] = set()
            with self._lock, self._ctx.backend.graph.batch():
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
                            and hits[other].document.strip().lower()
                            == hits[memory_id].document.strip().lower()
                        ):
                            self._absorb(other, memory_id)
                            doomed.add(memory_id)
                            report.count("merge", "merged")
                            break
                        if linked < 3:
                            self._ctx.backend.graph.add_edge(
                                memory_id, other, EdgeType.SIMILAR_TO, round(sim, 4)
                            )
                            linked += 1
                            report.count("merge", "similar_edges")
            self._mark_dedup([i for i in new_ids if i not in doomed])
            if doomed:
                with self._lock:
                    self._s.delete(sorted(doomed), scrub=False)

    def _absorb(self, survivor: str, duplicate: str) -> None:
        """Fold a duplicate's use into the survivor before the duplicate is deleted."""
        graph = self._ctx.backend.graph
        s, d = graph.node(survivor), graph.node(duplicate)
        assert s is not None and d is not None
        self._ctx.backend.set_state(
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

    def _mark_dedup(self, ids: Sequence[str]) -> None:
        with self._lock, self._ctx.backend.graph.batch():
            for memory_id in ids:
                if self._ctx.backend.graph.node(memory_id) is not None:
                    self._ctx.backend.set_state(memory_id, dedup_done=True)

    # ------------------------------------------------------------------ 6. transitions
    def _transitions(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        working = self._working
        if working is None:
            return
        cfg = self._config.consolidation
        moving = working.due_for_long_term(
            now,
            access_count=cfg.transition_access_count,
            age_hours=cfg.transition_age_hours,
            importance=cfg.transition_importance,
            capacity=cfg.transition_capacity,
        )
        if not moving:
            return
        drafts = [
            EpisodeDraft(
                content=item.content,
                source=Source.ASSISTANT.value,
                timestamp=item.inserted_at,
                importance=item.importance,
                user_id=None,
                agent_id=None,
                session_id=None,
                tags=("working_memory",) + ((item.slot,) if item.slot else ()),
            )
            for item in moving
        ]
        vectors = self._ctx.embedder.embed([d.content for d in drafts])
        with self._lock, self._ctx.backend.graph.batch():
            created = self._s.episodic.add(drafts, vectors)
        for item, episode in zip(moving, created, strict=True):
            working.mark_stored(item.id, episode.id)
            report.count("transitions", "moved_to_long_term")

    # ------------------------------------------------------------------ 7. reinforce
    def _reinforce(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        with self._lock, self._ctx.backend.graph.batch():
            graph = self._ctx.backend.graph
            ranks = graph.pagerank(damping=self._config.graph.pagerank_damping)
            boost = self._config.retention.stability_boost
            for memory_id, rank in ranks.items():
                attrs = graph.node(memory_id)
                if (
                    attrs is None
                    or attrs.get("kind") != "memory"
                    or rank < self._config.forgetting.pagerank_protection
                ):
                    continue
                stability = float(attrs["stability"]) + boost * min(rank, 10.0)
                self._ctx.backend.set_state(memory_id, stability=stability)
                report.count("reinforce", "reinforced")

    # ------------------------------------------------------------------ 8. prune
    def _prune(self, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
        try:
            faded = self._s.forget_faded(Scope(ANY), now, dry_run=False)
            report.count("prune", "forgotten", len(faded.forgotten))
        except UCMAError as e:  # storage trouble ends the phase; the next cycle retries
            report.errors.append(f"prune: {e}")


def _pair_key(subject: str, predicate: str, old_object: str, new_object: str) -> tuple[str, str, str, str]:
    return (normalise(subject), normalise(predicate), normalise(old_object), normalise(new_object))
