"""Phase 3, ``extract``: facts are learned from observed episodes, with ``derived_from`` provenance.

For each new fact, against the current facts about the same subject:

* a near-identical fact is not stored twice: when a current fact already says all the new
  one says ("prefers short answers with code", then "prefers short answers") it is
  reinforced instead; when the new one says more, it replaces the clipped one (which stays
  as history);
* a fact the provider judges to contradict or revise a current one supersedes it
  (``valid_to`` set, ``supersedes`` / ``contradicts`` edges, the old fact kept as history).
  A revision ("actually I decided on the MacBook Air", "not vegetarian anymore") is judged
  against the facts it may revise: the same or the opposite predicate, the one it takes
  back ("no longer works at"), and for a decision the earlier decision it most likely takes
  back (sharing words with it, else closest in meaning, else the latest). The episode
  the stale fact came from is marked ``revised_by`` the revising episode (a ``supersedes``
  edge links them) and its importance drops, so the stale turn ranks and lasts below the
  correction;
* the subject of what the user says about themselves is the name they gave, or "the user"
  (:mod:`~ucma_core.consolidation.naming`), never their id;
* every learned fact records whose it is: ``about`` is ``"user"`` for the speaker,
  ``"relation"`` for a person the speaker named as a relation ("Marta" after "my sister
  Marta", or "Ana's sister"), ``"other"`` for anyone else. Forgetting keeps the first two
  as the user's profile. The episode gets ``about``: the sorted list of whose facts it
  stated ("My sister Marta lives in Porto" → ``["relation"]``), so a question about the
  user can tell it from "I live in Lisbon" (``["user"]``).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from ucma_core.consolidation import naming, revisions
from ucma_core.consolidation.context import CycleContext, batches, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.providers.conflicts import canonical_predicate, is_decision, related_predicates, single_valued
from ucma_core.providers.fact_objects import RELATIONS
from ucma_core.providers.kinds import same_kind
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.providers.text import TOKEN, content_words, same_name
from ucma_core.records import MemoryType, Source
from ucma_core.scope import ANY, Scope
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.semantic import entity_id, normalise

__all__ = ["REVISED_IMPORTANCE", "run"]

#: The importance of an episode whose fact was revised is multiplied by this.
REVISED_IMPORTANCE = revisions.REVISED_IMPORTANCE

_Key = tuple[str, str, str, str, str]
_Scope = tuple[Any, Any]


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    cfg = cx.config.consolidation
    observed = {s.value for s in Source if s.observed}
    pending = cx.episodes(
        lambda a: not a.get("facts_done") and not a.get("source_ids") and a.get("source") in observed
    )
    names = naming.given_names(cx) if pending else {}
    for batch in cx.steps(list(batches(pending, cfg.batch_size))):
        if stopped(stop, report):
            return
        texts = cx.texts([i for i, _ in batch])
        ids = [i for i, _ in batch if i in texts]
        attrs_by_id = dict(batch)
        speakers = [naming.speaker(attrs_by_id[i], names) for i in ids]
        found = cx.provider.extract_facts([texts[i] for i in ids], speakers=speakers)
        found, speakers = naming.name_batch(ids, found, speakers, attrs_by_id, names)
        pairs = _rival_pairs(cx, ids, found, attrs_by_id)
        verdicts = dict(zip(pairs, cx.provider.conflicts(list(pairs.values())), strict=True)) if pairs else {}
        with cx.lock, cx.ctx.backend.graph.batch():
            for memory_id, facts, speaker in zip(ids, found, speakers, strict=True):
                attrs = cx.ctx.backend.graph.node(memory_id)
                if attrs is None:
                    continue
                whose = {_learn(cx, memory_id, attrs, fact, speaker, verdicts, report) for fact in facts}
                whose.discard(None)
                if whose:
                    cx.ctx.backend.set_state(memory_id, facts_done=True, about=sorted(whose))
                else:
                    cx.ctx.backend.set_state(memory_id, facts_done=True)
                report.count("extract", "episodes")
    revisions.run(cx, now, report, stop)


def _learn(
    cx: CycleContext,
    memory_id: str,
    attrs: Mapping[str, Any],
    fact: ExtractedFact,
    speaker: str | None,
    verdicts: dict[_Key, bool],
    report: ConsolidationReport,
) -> str | None:
    """Store one extracted fact (or reinforce the fuller one) and let it supersede what it revises.

    Returns whose fact it is for the episode's ``about`` (``None`` for the fact that only
    names a relation, "Ana has sister Marta", which says who Marta is, not what Ana did)."""
    graph = cx.ctx.backend.graph
    at = float(attrs["timestamp"])
    scope: _Scope = (attrs.get("user_id"), attrs.get("agent_id"))
    current = _current_facts(cx, fact.subject, scope)
    covering, covered = _overlaps(fact, current)
    subject, predicate, obj = (fact.subject, fact.predicate, fact.object)
    if covering is not None:
        subject, predicate, obj = (covering[1]["subject"], covering[1]["predicate"], covering[1]["object"])
    stored = cx.stores.semantic.assert_fact(
        subject=subject,
        predicate=predicate,
        obj=obj,
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
    if covering is not None:
        report.count("extract", "reinforced")
    about = _about(cx, stored.subject, speaker, scope)
    if about is not None and (graph.node(stored.id) or {"about": None}).get("about") != about:
        cx.ctx.backend.set_state(stored.id, about=about)
    for old_id, _ in covered:
        _retire(cx, old_id, stored.id, at)
        report.count("extract", "refined")
    for rival_id, rattrs in current:
        now_attrs = graph.node(rival_id)
        if rival_id == stored.id or now_attrs is None or float(rattrs["valid_from"]) > at:
            continue
        key = _pair_key(rattrs["subject"], rattrs["predicate"], rattrs["object"], fact.predicate, fact.object)
        if verdicts.get(key) and now_attrs.get("valid_to") is None:
            cx.stores.semantic.supersede(rival_id, stored.id, at)
            _mark_revised(cx, rival_id, memory_id)
            report.count("extract", "superseded")
    names_relation = canonical_predicate(stored.predicate).removeprefix("has ") in RELATIONS
    return None if names_relation else about


def _current_facts(cx: CycleContext, subject: str, scope: _Scope) -> list[tuple[str, dict[str, Any]]]:
    """``(id, attrs)`` of the current facts whose subject is ``subject`` in this user and agent's scope."""
    graph = cx.ctx.backend.graph
    out = []
    for fact_id in cx.stores.semantic.facts_of([entity_id(subject, *scope)], Scope(ANY), role="subject"):
        attrs = graph.node(fact_id)
        if attrs is not None:
            out.append((fact_id, dict(attrs)))
    return out


def _words(text: str) -> set[str]:
    return set(TOKEN.findall(text.lower()))


def _overlaps(
    fact: ExtractedFact, current: list[tuple[str, dict[str, Any]]]
) -> tuple[tuple[str, dict[str, Any]] | None, list[tuple[str, dict[str, Any]]]]:
    """The current fact (same predicate) that says all ``fact`` says and more, if any, and
    the current facts ``fact`` says in full and more ("short answers" ⊂ "short answers with
    code"). Only objects of two words or more, or single-valued predicates, count, so "likes
    jazz" and "likes jazz bars" stay two facts."""
    mine = _words(fact.object)
    predicate = canonical_predicate(fact.predicate)
    covering, covered = None, []
    for fact_id, attrs in current:
        if canonical_predicate(attrs["predicate"]) != predicate or normalise(attrs["object"]) == normalise(
            fact.object
        ):
            continue
        theirs = _words(attrs["object"])
        smaller = min(len(mine), len(theirs))
        if not mine or not theirs or (smaller < 2 and not single_valued(predicate)):
            continue
        if mine < theirs and covering is None:
            covering = (fact_id, attrs)
        elif theirs < mine:
            covered.append((fact_id, attrs))
    return covering, covered


def _retire(cx: CycleContext, old_id: str, new_id: str, at: float) -> None:
    """A clipped fact steps aside for the fuller one: history kept, no contradiction implied."""
    cx.ctx.backend.set_state(old_id, valid_to=at, superseded_by=new_id)
    cx.ctx.backend.graph.add_edge(new_id, old_id, EdgeType.SUPERSEDES, 1.0)


def _mark_revised(cx: CycleContext, old_fact: str, revising_episode: str) -> None:
    """The episodes a superseded fact came from are revised by the episode that revised it."""
    graph = cx.ctx.backend.graph
    attrs: Mapping[str, Any] = graph.node(old_fact) or {}
    for episode in cx.ctx.known(attrs.get("source_ids", [])):
        node = graph.node(episode)
        if (
            episode == revising_episode
            or node is None
            or node.get("memory_type") != MemoryType.EPISODIC.value
            or node.get("revised_by")
        ):
            continue
        cx.ctx.backend.set_state(
            episode,
            revised_by=revising_episode,
            importance=round(float(node["importance"]) * REVISED_IMPORTANCE, 4),
        )
        graph.add_edge(revising_episode, episode, EdgeType.SUPERSEDES, 1.0)


def _about(cx: CycleContext, subject: str, speaker: str | None, scope: _Scope) -> str | None:
    """Whose fact it is: ``"user"``, ``"relation"`` or ``"other"`` (``None`` without a speaker)."""
    if not speaker:
        return None
    if same_name(subject, speaker):
        return "user"
    if subject.lower().startswith(speaker.lower() + "'s "):
        return "relation"
    graph = cx.ctx.backend.graph
    for fact_id in cx.stores.semantic.facts_of([entity_id(subject, *scope)], Scope(ANY), role="object"):
        attrs: Mapping[str, Any] = graph.node(fact_id) or {}
        if str(attrs.get("predicate", "")).startswith("has ") and same_name(
            attrs.get("subject", ""), speaker
        ):
            return "relation"
    return "other"


def _relevant(old_predicate: str, new: ExtractedFact) -> bool:
    """Whether ``new`` may revise a fact with ``old_predicate`` (see the module docstring)."""
    if canonical_predicate(old_predicate) in related_predicates(new.predicate):
        return True
    return new.revises and is_decision(old_predicate) and is_decision(new.predicate)


def _rival_pairs(
    cx: CycleContext, ids: list[str], found: list[list[ExtractedFact]], attrs_by_id: dict[str, dict[str, Any]]
) -> dict[_Key, tuple[ExtractedFact, ExtractedFact]]:
    """(older, newer) pairs for the conflict judge: older facts about the same subject, stored
    already or extracted earlier in this batch, that the newer one may revise. A revised
    decision is paired with the earlier decision it most likely revises only."""
    pairs: dict[_Key, tuple[ExtractedFact, ExtractedFact]] = {}
    graph = cx.ctx.backend.graph
    earlier: dict[tuple[Any, Any, str], list[tuple[float, ExtractedFact]]] = defaultdict(list)
    with cx.lock:
        for memory_id, facts in zip(ids, found, strict=True):
            attrs = attrs_by_id[memory_id]
            scope = (attrs.get("user_id"), attrs.get("agent_id"))
            at = float(attrs["timestamp"])
            for fact in facts:
                olds = list(earlier[(*scope, normalise(fact.subject))])
                for rival in cx.stores.semantic.facts_of(
                    [entity_id(fact.subject, *scope)], Scope(ANY), role="subject"
                ):
                    r = graph.node(rival)
                    if r is not None:
                        old = ExtractedFact(r["subject"], r["predicate"], r["object"], float(r["confidence"]))
                        olds.append((float(r["valid_from"]), old))
                olds = [
                    (t, o)
                    for t, o in olds
                    if _relevant(o.predicate, fact)
                    and same_kind(o.object, fact.object) is not False  # never across topics
                    and not (
                        normalise(o.object) == normalise(fact.object)
                        and canonical_predicate(o.predicate) == canonical_predicate(fact.predicate)
                    )
                ]
                decisions = [
                    (t, o) for t, o in olds if is_decision(o.predicate) and is_decision(fact.predicate)
                ]
                if fact.revises and not fact.replaces and len(decisions) > 1:
                    revised = _revised_decision(cx, fact, decisions)
                    olds = [to for to in olds if to not in decisions or to == revised]
                for _, old in olds:
                    key = _pair_key(old.subject, old.predicate, old.object, fact.predicate, fact.object)
                    pairs[key] = (old, fact)
                earlier[(*scope, normalise(fact.subject))].append((at, fact))
    return pairs


def _revised_decision(
    cx: CycleContext, fact: ExtractedFact, decisions: list[tuple[float, ExtractedFact]]
) -> tuple[float, ExtractedFact]:
    """The earlier decision a revised one ("actually I decided on the MacBook Air") takes back:
    the one whose object shares most words with it, then the closest in meaning (by the
    folder's embedder, to one decimal), then the latest."""
    mine = set(content_words(fact.object))
    vectors = np.asarray(cx.ctx.embedder.embed([fact.object, *(o.object for _, o in decisions)]), dtype=float)
    norms = np.linalg.norm(vectors, axis=1)
    norms[norms == 0] = 1.0
    unit = vectors / norms[:, None]
    closeness = unit[1:] @ unit[0]

    def likelihood(n: int) -> tuple[int, float, float]:
        at, old = decisions[n]
        return (len(mine & set(content_words(old.object))), round(float(closeness[n]), 1), at)

    return decisions[max(range(len(decisions)), key=likelihood)]


def _pair_key(subject: str, old_predicate: str, old_object: str, new_predicate: str, new_object: str) -> _Key:
    return (
        normalise(subject),
        canonical_predicate(old_predicate),
        normalise(old_object),
        canonical_predicate(new_predicate),
        normalise(new_object),
    )
