"""Phase 3, ``extract``: facts are extracted from observed episodes and asserted with
``derived_from`` provenance; a new fact that the provider judges to contradict a current
one supersedes it (``valid_to`` set, ``contradicts`` edge, history kept)."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

from ucma_core.consolidation.context import CycleContext, batches, stopped
from ucma_core.consolidation.report import ConsolidationReport
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.records import Source
from ucma_core.scope import ANY, Scope
from ucma_core.stores.semantic import entity_id, normalise

__all__ = ["run"]


def _speaker(attrs: dict[str, Any]) -> str | None:
    people = attrs.get("participants") or []
    if people:
        return str(people[0])
    user = attrs.get("user_id")
    if attrs.get("source") != Source.USER.value or not user:
        return None
    # a user id that is a plain lower-case name ("ana") is the user's name ("Ana")
    return str(user).capitalize() if str(user).isalpha() and str(user).islower() else str(user)


def run(cx: CycleContext, now: float, report: ConsolidationReport, stop: threading.Event | None) -> None:
    cfg = cx.config.consolidation
    observed = {s.value for s in Source if s.observed}
    pending = cx.episodes(
        lambda a: not a.get("facts_done") and not a.get("source_ids") and a.get("source") in observed
    )
    for batch in batches(pending, cfg.batch_size):
        if stopped(stop, report):
            return
        texts = cx.texts([i for i, _ in batch])
        ids = [i for i, _ in batch if i in texts]
        attrs_by_id = dict(batch)
        found = cx.provider.extract_facts(
            [texts[i] for i in ids], speakers=[_speaker(attrs_by_id[i]) for i in ids]
        )
        pairs = _rival_pairs(cx, ids, found, attrs_by_id)
        verdicts = dict(zip(pairs, cx.provider.conflicts(list(pairs.values())), strict=True)) if pairs else {}
        with cx.lock, cx.ctx.backend.graph.batch():
            for memory_id, facts in zip(ids, found, strict=True):
                attrs = cx.ctx.backend.graph.node(memory_id)
                if attrs is None:
                    continue
                at = float(attrs["timestamp"])
                for fact in facts:
                    stored = cx.stores.semantic.assert_fact(
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
                    for rival in cx.stores.semantic.rivals(stored.id):
                        rattrs = cx.ctx.backend.graph.node(rival)
                        if rattrs is None or float(rattrs["valid_from"]) > at:
                            continue
                        if verdicts.get(
                            _pair_key(rattrs["subject"], rattrs["predicate"], rattrs["object"], fact.object)
                        ):
                            cx.stores.semantic.supersede(rival, stored.id, at)
                            report.count("extract", "superseded")
                cx.ctx.backend.set_state(memory_id, facts_done=True)
                report.count("extract", "episodes")


def _rival_pairs(
    cx: CycleContext, ids: list[str], found: list[list[ExtractedFact]], attrs_by_id: dict[str, dict[str, Any]]
) -> dict[tuple[str, str, str, str], tuple[ExtractedFact, ExtractedFact]]:
    """(older, newer) pairs with the same subject and predicate and another object, for the
    conflict judge: older ones stored already or extracted earlier in this batch."""
    pairs: dict[tuple[str, str, str, str], tuple[ExtractedFact, ExtractedFact]] = {}
    graph = cx.ctx.backend.graph
    earlier: dict[tuple[Any, Any, str, str], list[ExtractedFact]] = defaultdict(list)
    with cx.lock:
        for memory_id, facts in zip(ids, found, strict=True):
            attrs = attrs_by_id[memory_id]
            scope = (attrs.get("user_id"), attrs.get("agent_id"))
            for fact in facts:
                olds = list(earlier[(*scope, normalise(fact.subject), normalise(fact.predicate))])
                subject = [entity_id(fact.subject, *scope)]
                for rival in cx.stores.semantic.facts_of(subject, Scope(ANY), role="subject"):
                    r = graph.node(rival)
                    if r is not None and normalise(r["predicate"]) == normalise(fact.predicate):
                        olds.append(
                            ExtractedFact(r["subject"], r["predicate"], r["object"], float(r["confidence"]))
                        )
                for old in olds:
                    if normalise(old.object) != normalise(fact.object):
                        pairs[_pair_key(old.subject, old.predicate, old.object, fact.object)] = (
                            old,
                            fact,
                        )
                earlier[(*scope, normalise(fact.subject), normalise(fact.predicate))].append(fact)
    return pairs


def _pair_key(subject: str, predicate: str, old_object: str, new_object: str) -> tuple[str, str, str, str]:
    return (normalise(subject), normalise(predicate), normalise(old_object), normalise(new_object))
