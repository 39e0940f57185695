"""One retrieval call: route, gather candidates from every signal, fuse, rank, diversify, reinforce.

Sources of candidates (all within the caller's scope and filters):

* dense — Chroma nearest neighbours of the query vector (the query without its time words);
* keyword — BM25 over the FTS5 keyword index (the query with its time words: memories say
  "last summer" too);
* time — when the router read a time (or anchored one on an event the query names), dense
  and keyword search again inside its span, widened by its graded edges;
* speaker — people the query names whom the scope knows (participants, the user, names most
  sessions use: :mod:`~ucma_core.retrieval.people`), or "what did Caroline say …": their
  names leave the embedded query, their memories (turns they took part in, facts about
  them) get the ``speaker`` signal, a preference and never a filter, and dense search
  runs again among the turns of each (but the scope's own user);
* entity — facts whose subject or object is named in the query, and the episodes they came from;
* kind — procedures for "how do I …" questions;
* hop — memories naming the rare people and places the best matches name (a second hop;
  a person of the scope or a word many sessions use is not followed, the route says which);
* context — the session turns next to the best matches (a reply carries what it answers);
* graph — bounded spreading activation from the best candidates;
* marked — the correction of a candidate the sleep cycle marked revised, and the answer of
  an answered question (:mod:`~ucma_core.retrieval.markers`).

:func:`~ucma_core.retrieval.fusion.fuse` turns the signals into a relevance, the time the
question names lifts the memories that fit it (:mod:`~ucma_core.retrieval.timefit`: evidence,
not a filter), corrections and answers take over the relevance of what they correct or
answer, the multi-factor rank weighs relevance with importance, recency and retention (and
halves what the sleep cycle demoted), a content-free turn ("Bye, Sam!") scores below every
content one (:mod:`~ucma_core.retrieval.substance`), MMR removes near-duplicates, and every memory
returned is recorded as retrieved (which protects it from forgetting but never changes a
later rank: reading is not rehearsing). Each result carries the router's decision, with the reasons of its
time signal, and its neighbouring turns.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from ucma_core.records import MemoryRecord, MemoryType, RetrievalResult, RouteDecision
from ucma_core.retrieval.context import Turns, context_evidence, invites_reply, names, session_window
from ucma_core.retrieval.diversify import mmr
from ucma_core.retrieval.filters import Filters
from ucma_core.retrieval.fusion import fuse
from ucma_core.retrieval.markers import about_user, below_corrections, demotion, inherit, pull
from ucma_core.retrieval.people import Census, People, inside_names, read_query, user_names
from ucma_core.retrieval.prefetch import Prefetch
from ucma_core.retrieval.ranking import Factors, factors, is_current, observed_source
from ucma_core.retrieval.router import Route, RouteKind, route
from ucma_core.retrieval.sets import is_set_question, result_count
from ucma_core.retrieval.substance import content_last
from ucma_core.retrieval.timefit import TimeAsk, fit, modulate, recency_fit
from ucma_core.retrieval.timesignal import DAY, Span, local_day
from ucma_core.storage.nodes import MemoryNode
from ucma_core.stores.folder import FolderStores
from ucma_core.timezones import zone
from ucma_core.validation import EPOCH_MAX, EPOCH_MIN

__all__ = ["Retriever", "first_person"]

_WORD = re.compile(r"[\w'-]+")
#: How much of its strength a generated turn (the assistant's) passes on as context.
GENERATED_CONTEXT = 0.5
#: At most this many people a query names get a search among their own memories.
MAX_SPEAKERS = 2


def first_person(query: str, user_id: str | None) -> str:
    """Refer to the scoped user in the first person, as their own turns do.

    Within one user's memories, "Where does Ana's sister live?" is asked about turns
    in which Ana wrote "my sister lives in Porto"; the name matches nothing there but
    greetings that mention it. A word equal to the ``user_id`` (or to its first part
    before ``-``, ``_``, ``.``, ``@`` or a space), case-insensitively, becomes "my"
    (possessive) or "I".

    Examples:
        >>> first_person("Where does Ana's sister live?", "ana")
        'Where does my sister live?'
    """
    if not user_id:
        return query
    names = {user_id.lower(), re.split(r"[-_.@\s]", user_id.lower())[0]}
    names = {n for n in names if len(n) >= 2}
    folded = query.casefold()
    if not any(n.casefold() in folded for n in names):  # no pattern to build (a first ask compiles it)
        return query
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    text = re.sub(rf"\b(?:{alternatives})(?:'s|’s|s')(?!\w)", "my", query, flags=re.I)
    return re.sub(rf"\b(?:{alternatives})\b", "I", text, flags=re.I)


class Retriever:
    """Runs :meth:`search` for one memory."""

    def __init__(self, stores: FolderStores) -> None:
        self._stores = stores
        self._ctx = stores.ctx
        self._people = People(stores.backend, stores.episodic)

    def plan(self, query: str, now: float, kind: RouteKind | None) -> Route:
        """The router's decision, with the caller's override of the kind applied."""
        decided = route(query, now, timezone=self._ctx.config.timezone)
        if kind is not None and kind is not decided.kind:
            keep_time = kind is RouteKind.TEMPORAL
            decided = dataclasses.replace(
                decided,
                kind=kind,
                time_range=decided.time_range if keep_time else None,
                time=decided.time if keep_time else None,
                anchor=decided.anchor if keep_time else None,
                reason=f"set by caller ({decided.kind.value} by the router)",
                topic=decided.topic if keep_time else query,
            )
        return decided

    def search(
        self,
        query: str,
        *,
        k: int | None,
        filters: Filters,
        now: float,
        kind: RouteKind | None = None,
        diversify: bool = True,
        reinforce: bool = True,
    ) -> list[RetrievalResult]:
        """Top ``k`` memories for ``query`` within ``filters`` (``k=None``: as many as the
        question asks for, :func:`~ucma_core.retrieval.sets.result_count`); each one returned
        is recorded as retrieved (:meth:`StoreContext.retrieved`: it counts against
        forgetting, never in the rank) unless ``reinforce=False`` (a look that leaves
        retention as it was). ``diversify=False`` keeps the plain rank order (no MMR, no
        near-duplicate drop)."""
        ctx = self._ctx
        fusion = ctx.config.fusion
        plan = self.plan(query, now, kind)
        notes: list[str] = []
        if k is None and is_set_question(query):
            notes.append("a set question: more results")
        k = result_count(query, k)
        n = max(fusion.min_candidates, k * fusion.candidates_per_result)
        user = None if filters.any_user else filters.user_id
        census = self._census(filters)
        named = read_query(query, census)
        # known people are structure, not words: out of the embedded text, a preference below
        dense_text = read_query(first_person(plan.topic or query, user), census).text  # type: ignore[arg-type]
        keyword_text = first_person(query, user)  # type: ignore[arg-type]
        speakers = tuple(dict.fromkeys([*([plan.speaker] if plan.speaker else []), *named.people]))
        if named.people:
            notes.append("people named: " + ", ".join(named.people) + " (a preference for their memories)")
        qvec = ctx.embedder.embed([dense_text])[0]
        # Chroma's query releases the GIL: the keyword and entity searches run meanwhile
        dense = ctx.backend.nearest_later(qvec, n, filters.where(ctx.backend.keys))
        try:
            keyword = self._keyword(keyword_text, n, filters, None)
            entity_hits = self._entity_candidates(query, plan, filters)
        finally:
            nearest = dense()
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

        add_dense(nearest)
        add_keyword(keyword)
        if any("keyword" in s for s in signals.values()):
            active.add("keyword")
        prefetch: Prefetch | None = None
        try:
            ask = self._time_ask(plan, filters, now, notes) if filters.time_range is None else None
            if ask is not None and ask.span is not None:
                lo, hi = ask.span.widened()
                ranged = dataclasses.replace(filters, time_range=(max(EPOCH_MIN, lo), min(EPOCH_MAX, hi)))
                in_range = ctx.backend.nearest(qvec, n, ranged.where(ctx.backend.keys))
                add_dense(in_range)
                add_keyword(self._keyword(keyword_text, n, ranged, None))
                if not in_range:
                    notes.append(
                        "no memory is dated then: only what memories say about their own time counts"
                    )
            if speakers:
                active.add("speaker")
                keys = ctx.backend.keys
                # the scope's own user takes part in most of it: a search among their turns repeats the first
                own = user_names(user)
                for speaker in [p for p in speakers if p.casefold() not in own][:MAX_SPEAKERS]:
                    where = _and(filters.where(keys), {keys.participant(speaker): True})
                    add_dense(ctx.backend.nearest(qvec, n, where))
            if plan.kind is RouteKind.PROCEDURAL and _admits_type(filters, MemoryType.PROCEDURAL):
                active.add("kind")
                typed = dataclasses.replace(filters, memory_types=(MemoryType.PROCEDURAL,))
                add_dense(ctx.backend.nearest(qvec, max(5, k), typed.where(ctx.backend.keys)))
            if entity_hits:
                active.add("entity")
                for memory_id, strength in entity_hits.items():
                    signals[memory_id]["entity"] = max(signals[memory_id].get("entity", 0.0), strength)

            self._mark_structured(signals, plan, speakers)
            pre = _strength(fuse(self._admissible(signals, filters), fusion, active - {"graph"}))
            turns = Turns(ctx.backend.graph)
            event = ask.event if ask is not None else None
            # what an assistant said passes on half as much as context (see :meth:`_context`)
            passed_on = {i: v if self._observed(i) else GENERATED_CONTEXT * v for i, v in pre.items()}
            texts = self._texts(self._worth_reading(pre, passed_on, turns, ask))
            if self._hop(signals, pre, texts, keyword_text, user, filters, census, notes):
                active.add("hop")
            evidence = self._context(passed_on, texts, turns, event)
            reached = self._reach(pre, filters)
            # one read of every vector the candidates lack (dense search missed them): it runs on
            # the vector store's worker while context and graph evidence are added
            prefetch = self._prefetch([*signals, *evidence, *reached], vectors, filters)
            if self._add_context(signals, evidence):
                active.add("context")
            self._expand(signals, reached)
            # every candidate, also those the hop, context and graph brought in
            self._mark_structured(signals, plan, speakers)
            for memory_id in pull(signals, ctx.backend.graph.node):  # corrections and answers
                signals.setdefault(memory_id, {})
            nodes = self._complete(signals, vectors, filters, qvec, prefetch)
        finally:
            if prefetch is not None:
                prefetch.settle()  # when a stage above raised: no read left running on the store

        relevance = fuse(signals, fusion, active)
        if ask is not None:
            relevance = self._timed(ask, relevance, nodes, texts, signals, notes)
        for memory_id, value in inherit(relevance, nodes).items():
            signals[memory_id]["inherited"] = value
        weights = ctx.config.ranking
        about_me = about_user(keyword_text)
        decay = ctx.config.forgetting.knowledge_decay_factor
        scored: dict[str, tuple[float, Factors]] = {}
        for memory_id, node in nodes.items():
            if is_current(node, now):
                f = factors(
                    node,
                    relevance[memory_id],
                    now,
                    weights,
                    knowledge_decay=decay,
                    demotion=demotion(node, about_me=about_me, weight=weights.demoted_weight),
                )
                if f.demotion != 1.0:
                    signals[memory_id]["demoted"] = f.demotion
                scored[memory_id] = (f.score(weights), f)
        for memory_id, value in below_corrections({i: v[0] for i, v in scored.items()}, nodes).items():
            scored[memory_id] = (value, scored[memory_id][1])  # never above its correction
        # a total order: exact ties go to the newer memory, then to the id (creation order)
        ranked = sorted(scored, key=lambda i: (-scored[i][0], -float(nodes[i].timestamp), i))
        if self._content_last(ranked, scored, texts, signals, census, k):
            ranked = sorted(scored, key=lambda i: (-scored[i][0], -float(nodes[i].timestamp), i))
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
        reason = "; ".join([plan.reason, *notes]) if notes else plan.reason
        route_note = RouteDecision(plan.kind.value, reason)
        windows = (
            {i: session_window(turns, i, fusion.context_turns) for i in order} if fusion.context_turns else {}
        )
        records = ctx.backend.fetch([*order, *{j for b, a in windows.values() for j in (*b, *a)}])
        top = [
            self._result(
                records[i],
                *scored[i],
                signals[i],
                route_note,
                _around(records, *windows.get(i, ((), ()))),
                vectors.get(i),
            )
            for i in order
            if i in records
        ]
        if reinforce:
            with ctx.backend.graph.batch():
                for result in top:
                    ctx.retrieved(result.id, now)
        return top

    # ------------------------------------------------------------------ people
    def _census(self, filters: Filters) -> Census:
        """Who the scope knows (:mod:`~ucma_core.retrieval.people`), cached per scope."""
        self._people.rebind(self._stores.episodic)
        return self._people.census(filters.scope)

    def _content_last(
        self,
        ranked: list[str],
        scored: dict[str, tuple[float, Factors]],
        texts: dict[str, str],
        signals: dict[str, dict[str, float]],
        census: Census,
        k: int,
    ) -> bool:
        """Scale content-free turns below every content one among the best candidates
        (:mod:`~ucma_core.retrieval.substance`); reads the text of enough of them to fill
        ``k`` with content. Whether any score changed."""
        width = 2 * k + 10
        while True:
            window = ranked[:width]
            texts.update(self._texts([i for i in window if i not in texts]))
            factors = content_last(window, {i: scored[i][0] for i in window}, texts, names=census.names())
            if width >= len(ranked) or len(window) - len(factors) >= k:
                break
            width *= 2
        for memory_id, factor in factors.items():
            score, f = scored[memory_id]
            scored[memory_id] = (score * factor, f)
            signals[memory_id]["content_free"] = factor
        return bool(factors)

    # ------------------------------------------------------------------ time
    def _time_ask(self, plan: Route, filters: Filters, now: float, notes: list[str]) -> TimeAsk | None:
        """What the time the router read asks for; for "before / after <event>", the span is
        anchored on the memory that best matches the event, including its day and session."""
        if plan.time is not None:
            span = plan.time.span
            if span is None:
                notes.append("the newest matching memories are preferred")
                return TimeAsk(None, plan.time.words)
            notes.append(f"graded edges ±{_days(span.margin)}")
            return TimeAsk(span, plan.time.words)
        if not plan.anchor or plan.time_range is not None or plan.kind is not RouteKind.TEMPORAL:
            return None
        user = None if filters.any_user else filters.user_id
        anchor = self._anchor(first_person(plan.anchor, user), filters)  # type: ignore[arg-type]
        node = self._ctx.backend.graph.node(anchor) if anchor else None
        if node is None:
            notes.append("no memory matches the event")
            return None
        at = float(node["timestamp"])
        tz = zone(self._ctx.config.timezone)
        day = local_day(at, tz)
        if day is None:  # before the year 1 in this zone: the event's day in UTC
            tz, day = timezone.utc, datetime.fromtimestamp(at, timezone.utc).date()
        first = datetime(day.year, day.month, day.day, tzinfo=tz).timestamp()
        last = datetime.combine(day + timedelta(days=1), datetime.min.time(), tz).timestamp() - 1e-3
        session = self._stores.episodic.session(
            node.get("user_id"), node.get("agent_id"), node.get("session_id")
        )
        stamps = [float(a["timestamp"]) for i in session if (a := self._ctx.backend.graph.node(i))]
        # the turns of the event's session that are close to it (a session of one sitting)
        near = [t for t in stamps if abs(t - at) <= DAY]
        if near and node.get("session_id") is not None:
            first, last = min(first, near[0]), max(last, near[-1])
        when = day.isoformat()
        notes.append(f"the event is a memory of {when}; its day and session count as {plan.anchor_side} it")
        if plan.anchor_side == "before":
            return TimeAsk(Span(EPOCH_MIN, last, DAY), near=at, event=anchor)
        return TimeAsk(Span(first, max(now, last), DAY), near=at, event=anchor)

    def _anchor(self, event: str, filters: Filters) -> str | None:
        """The memory that best matches an event's words: the best keyword match, else the
        nearest by meaning."""
        keyword = self._keyword(event, 1, filters, None)
        if keyword:
            return keyword[0][0]
        vector = self._ctx.embedder.embed([event])[0]
        found = self._ctx.backend.nearest(vector, 1, filters.where(self._ctx.backend.keys))
        return found[0][0] if found else None

    def _timed(
        self,
        ask: TimeAsk,
        relevance: dict[str, float],
        nodes: dict[str, MemoryNode],
        texts: dict[str, str],
        signals: dict[str, dict[str, float]],
        notes: list[str],
    ) -> dict[str, float]:
        """Relevance lifted for the candidates that fit the time asked about."""
        fusion = self._ctx.config.fusion
        stamps = {i: node.timestamp for i, node in nodes.items()}
        if ask.span is None:
            best = max(relevance.values(), default=0.0)
            plausible = {i: r for i, r in relevance.items() if r >= 0.6 * best}
            fits = recency_fit(stamps, plausible)
            weight = fusion.recency
        else:
            unread = [i for i in _top(relevance, fusion.read_candidates) if i not in texts]
            texts.update(self._texts(unread))
            fits = fit(ask, stamps, texts, zone(self._ctx.config.timezone))
            weight = fusion.time
            inside = sum(1 for v in fits.values() if v >= 0.5)
            notes.append(
                f"{inside} candidate{'s' if inside != 1 else ''} fit that time"
                if inside
                else "no candidate fits that time"
            )
        for memory_id, value in fits.items():
            if value >= 0.01:
                signals[memory_id]["time"] = value
        return modulate(relevance, fits, weight)

    # ------------------------------------------------------------------ context and hops
    def _texts(self, ids: Sequence[str]) -> dict[str, str]:
        """The text of each of ``ids`` (one read of the keyword index's stored rows)."""
        if not ids:
            return {}
        return self._ctx.backend.texts(list(ids))

    def _hop(
        self,
        signals: dict[str, dict[str, float]],
        pre: dict[str, float],
        texts: dict[str, str],
        query: str,
        user: object,
        filters: Filters,
        census: Census,
        notes: list[str],
    ) -> bool:
        """Memories naming someone (or somewhere) the best matches name but the query does not:
        each gets the strength of the best match naming them (a second hop). Only rare names
        are followed: not a person the scope knows (a participant, the user), nor a word that
        many sessions use (:meth:`Census.rare`); ``notes`` says which were and which not."""
        fusion = self._ctx.config.fusion
        if fusion.hop <= 0 or fusion.hop_seeds == 0:
            return False
        asked = set(re.findall(r"\w+", query.lower()))
        if isinstance(user, str):
            asked.update(re.split(r"[-_.@\s]", user.lower()))
        named: dict[str, float] = {}
        skipped: dict[str, None] = {}
        for seed in _top(pre, fusion.hop_seeds):
            inside = inside_names(texts.get(seed, ""))
            for name in names(texts.get(seed, ""), exclude=asked):
                if census.rare(name, inside=name.casefold() in inside):
                    named[name] = max(named.get(name, 0.0), pre[seed])
                else:
                    skipped[name] = None
        if skipped:
            notes.append("hop skips " + ", ".join(skipped) + " (a person of the scope or a common word)")
        if not named:
            return False
        notes.append("hop follows " + ", ".join(named) + " (rare names)")
        hits = [i for i, _ in self._keyword(" ".join(named), 4 * len(named) + 4, filters, None)]
        found = False
        for memory_id, text in self._texts([i for i in hits if i not in texts]).items():
            texts[memory_id] = text
        for memory_id in hits:
            words = set(re.findall(r"[\w'-]+", texts.get(memory_id, "")))
            value = max((v for name, v in named.items() if name in words), default=0.0)
            if value > 0:
                signals[memory_id]["hop"] = max(signals[memory_id].get("hop", 0.0), value)
                found = True
        return found

    def _worth_reading(
        self, pre: dict[str, float], strength: dict[str, float], turns: Turns, ask: TimeAsk | None
    ) -> list[str]:
        """The candidates whose text retrieval reads: the seeds of the name hop and of context
        (with the turns around them), and for a time span the best candidates (for the times
        their text mentions)."""
        fusion = self._ctx.config.fusion
        wanted = set(_top(pre, fusion.hop_seeds))
        graph = self._ctx.backend.graph
        for seed in _top(strength, fusion.context_seeds) if fusion.context > 0 else ():
            wanted.add(seed)
            for direction in ("in", "out"):  # the assistant's turns next to it: do they ask for a reply?
                at = turns.step(seed, direction)
                if at is not None and graph.node(at) is not None and not self._observed(at):
                    wanted.add(at)
        if ask is not None and ask.span is not None:
            wanted.update(_top(pre, fusion.read_candidates))
        return sorted(wanted)

    def _context(
        self, strength: dict[str, float], texts: dict[str, str], turns: Turns, event: str | None
    ) -> dict[str, float]:
        """Context evidence for the replies to the best candidates (and what they reply to), and
        for the turns around the event a "before / after <event>" question is anchored on
        (:meth:`_add_context` adds it to the signals). ``strength`` is each candidate's ``pre``
        score, :data:`GENERATED_CONTEXT` of it for a generated turn: what an assistant said
        passes on half as much (its "What did they suggest?" matches many questions and is
        answered by whatever the user says next)."""
        fusion = self._ctx.config.fusion
        if fusion.context <= 0 or fusion.context_seeds == 0:
            return {}
        observed = self._observed  # generated turns (an assistant's "Noted!") gain nothing
        seeds = _top(strength, fusion.context_seeds)
        evidence = context_evidence(
            turns, strength, seeds, observed, lambda i: invites_reply(texts.get(i, ""))
        )
        if event is not None:
            before, after = session_window(turns, event, fusion.event_window, observed)
            for step, memory_id in (*enumerate(reversed(before)), *enumerate(after)):
                evidence[memory_id] = max(evidence.get(memory_id, 0.0), fusion.event * 0.5**step)
        return evidence

    @staticmethod
    def _add_context(signals: dict[str, dict[str, float]], evidence: dict[str, float]) -> bool:
        """The ``context`` signal of :meth:`_context`'s evidence; whether there was any."""
        for memory_id, value in evidence.items():
            signals[memory_id]["context"] = max(signals[memory_id].get("context", 0.0), value)
        return bool(evidence)

    def _prefetch(
        self, candidates: Iterable[str], vectors: dict[str, np.ndarray], filters: Filters
    ) -> Prefetch:
        """Start reading the vectors of the admissible ``candidates`` not in ``vectors``."""
        graph = self._ctx.backend.graph
        wanted = [
            i
            for i in dict.fromkeys(candidates)
            if i not in vectors and (node := graph.node(i)) is not None and filters.admits(node)
        ]
        return Prefetch(set(wanted), self._ctx.backend.vectors_of_later(wanted))

    def _observed(self, memory_id: str) -> bool:
        """Whether a memory was said or seen by someone (a user, a tool) rather than generated."""
        node = self._ctx.backend.graph.node(memory_id)
        return node is not None and observed_source(node["source"])

    def _admissible(
        self, signals: dict[str, dict[str, float]], filters: Filters
    ) -> dict[str, dict[str, float]]:
        """The candidates whose graph node passes the filters (tags and metadata are checked later)."""
        graph = self._ctx.backend.graph
        return {
            i: s for i, s in signals.items() if (node := graph.node(i)) is not None and filters.admits(node)
        }

    # ------------------------------------------------------------------ sources
    def _keyword(
        self, query: str, n: int, filters: Filters, ids: Sequence[str] | None
    ) -> Sequence[tuple[str, float]]:
        """``(id, score)`` of the best keyword matches (:class:`KeywordHit` tuples)."""
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
        return found

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
                attrs: Mapping[str, Any] = graph.node(fact) or {}
                for source in attrs.get("source_ids", []):
                    found.setdefault(source, 0.7)
        return found

    # ------------------------------------------------------------------ assembly
    def _mark_structured(
        self, signals: dict[str, dict[str, float]], plan: Route, speakers: Sequence[str]
    ) -> None:
        """Speaker and kind signals, read from the candidates' graph nodes: a memory of a
        person the query names (they took part in it, or it is a fact about them) gets
        ``speaker``, a procedure for "how do I" gets ``kind``."""
        graph = self._ctx.backend.graph
        people = {p.casefold() for p in speakers}
        procedural = plan.kind is RouteKind.PROCEDURAL
        if not people and not procedural:
            return
        for memory_id, sig in signals.items():
            node = graph.node(memory_id)
            if node is None:
                continue
            if people and (
                people.intersection(p.casefold() for p in node.get("participants", ()))
                or str(node.get("subject", "")).casefold() in people
            ):
                sig["speaker"] = 1.0
            if procedural and node.get("memory_type") == MemoryType.PROCEDURAL.value:
                sig["kind"] = 1.0

    def _reach(self, pre: dict[str, float], filters: Filters) -> dict[str, float]:
        """The admissible memories the graph reaches from the best candidates (by ``pre``),
        with their discounted activation relative to the best seed (:meth:`_expand` adds them)."""
        cfg = self._ctx.config
        if cfg.fusion.graph_seeds == 0 or cfg.graph.max_hops == 0 or not pre:
            return {}
        seeds = {i: pre[i] for i in _top(pre, cfg.fusion.graph_seeds)}
        graph = self._ctx.backend.graph
        reached = graph.expand(
            seeds,
            max_hops=cfg.graph.max_hops,
            max_nodes=cfg.graph.max_nodes,
            max_fanout=cfg.graph.max_fanout,
            min_weight=cfg.graph.min_edge_weight,
        )
        top = max(seeds.values(), default=0.0) or 1.0
        out: dict[str, float] = {}
        for node_id, (_, activation) in reached.items():
            attrs = graph.node(node_id)
            if attrs is None or attrs.get("kind") != "memory" or not filters.admits(attrs):
                continue
            out[node_id] = activation / top
        return out

    @staticmethod
    def _expand(signals: dict[str, dict[str, float]], reached: dict[str, float]) -> None:
        """The ``graph`` signal of what :meth:`_reach` found (pulled in as candidates)."""
        for node_id, value in reached.items():
            signals[node_id]["graph"] = max(signals[node_id].get("graph", 0.0), value)

    def _complete(
        self,
        signals: dict[str, dict[str, float]],
        vectors: dict[str, np.ndarray],
        filters: Filters,
        qvec: Sequence[float],
        prefetch: Prefetch,
    ) -> dict[str, MemoryNode]:
        """The graph record of every admissible candidate; drops the others from ``signals``.

        The vectors of admissible candidates no dense search returned (keyword, entity,
        hop, context and graph ones) come from ``prefetch``, the one read started before
        context and graph evidence were added (those read before come from the vector
        cache, see :meth:`Backend.vectors_of`); only a candidate it did not ask for (a
        correction or answer :func:`~ucma_core.retrieval.markers.pull` brought in) is read here.
        Their dense signal is the cosine similarity to the query. Tags and metadata filters
        are checked here for them.
        """
        graph = self._ctx.backend.graph
        missing = [
            i for i in signals if i not in vectors and (n := graph.node(i)) is not None and filters.admits(n)
        ]
        asked, early = prefetch.asked, prefetch.read()
        vectors.update((i, early[i]) for i in missing if i in early)
        vectors.update(self._ctx.backend.vectors_of([i for i in missing if i not in asked]))
        if filters.needs_row and missing:
            rows = self._ctx.backend.rows(missing)
            keys = self._ctx.backend.keys
            untagged = {i for i in missing if i not in rows or not filters.admits_row(rows[i][1], keys)}
        else:
            untagged = set()
        nodes: dict[str, MemoryNode] = {}
        for memory_id in list(signals):
            node = graph.node_as(memory_id, MemoryNode)
            if memory_id not in vectors or memory_id in untagged or node is None or not filters.admits(node):
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
        context: tuple[MemoryRecord, ...],
        vector: np.ndarray | None = None,
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
            context=context,
            vector=vector,
        )


def _cosines(query: Sequence[float], matrix: np.ndarray) -> np.ndarray:
    """Cosine similarity of ``query`` to each row of ``matrix`` (0 for zero vectors)."""
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(q))
    dots = (matrix * q).sum(axis=1)  # not ``@``: waking BLAS threads costs more than this product
    cosines: np.ndarray = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return cosines


def _and(where: dict[str, object] | None, clause: dict[str, object]) -> dict[str, object]:
    if not where:
        return clause
    if "$and" in where:
        return {"$and": [*where["$and"], clause]}  # type: ignore[misc]
    return {"$and": [where, clause]}


def _admits_type(filters: Filters, memory_type: MemoryType) -> bool:
    return not filters.memory_types or memory_type in filters.memory_types


def _top(scores: dict[str, float], n: int) -> list[str]:
    """The ``n`` best-scored ids (ties by id)."""
    return sorted(scores, key=lambda i: (-scores[i], i))[:n]


def _strength(scores: dict[str, float]) -> dict[str, float]:
    """``scores`` divided by the best of them."""
    best = max(scores.values(), default=0.0)
    return {i: v / best for i, v in scores.items()} if best > 0 else dict(scores)


def _around(
    records: dict[str, MemoryRecord], before: Iterable[str], after: Iterable[str]
) -> tuple[MemoryRecord, ...]:
    return tuple(records[i] for i in (*before, *after) if i in records)


def _days(seconds: float) -> str:
    days = seconds / DAY
    if days < 1:
        return f"{seconds / 3600:g} h"
    return f"{days:g} day{'s' if days != 1 else ''}"
