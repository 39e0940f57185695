"""Semantic memory: subject–predicate–object facts and the entities they connect.

A fact's id is derived from its scope and normalised triple, so asserting the same
fact again reinforces it (confidence rises, provenance grows) instead of storing a
duplicate. Subjects and objects become entity nodes linked by ``subject`` /
``object`` edges, which is both the entity index and the knowledge graph: facts
about an entity are found from either end, and entity → fact → entity hops walk
the graph. A fact asserted as ``exclusive`` supersedes the current facts with the
same subject and predicate: they get ``valid_to`` and a ``supersedes`` /
``contradicts`` link, and stay in history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ucma_core.records import Fact, MemoryType
from ucma_core.scope import ANY, Scope
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.context import StoreContext, stable_id

__all__ = ["SemanticStore", "entity_id", "normalise"]

_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Case- and whitespace-insensitive form used for ids and entity matching."""
    return _SPACES.sub(" ", text.strip().lower())


def entity_id(name: str, user_id: str | None, agent_id: str | None) -> str:
    return "entity:" + stable_id("entity", user_id, agent_id, normalise(name))


def fact_id(subject: str, predicate: str, obj: str, user_id: str | None, agent_id: str | None) -> str:
    return stable_id("fact", user_id, agent_id, normalise(subject), normalise(predicate), normalise(obj))


class SemanticStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        #: user -> the agents that have entities of that user (so "any agent" finds them all)
        self._agents: dict[str | None, set[str | None]] = {}

    def index_entity(self, attrs: dict[str, Any]) -> None:
        """Note an entity node's scope (called for every entity when the folder opens)."""
        self._agents.setdefault(attrs.get("user_id"), set()).add(attrs.get("agent_id"))

    def entity_ids(self, name: str, scope: Scope) -> list[str]:
        """The entity nodes called ``name`` in ``scope`` (one per user and agent that has it)."""
        graph = self._ctx.backend.graph
        users = list(self._agents) if scope.any_user else [scope.user]
        agent = scope.exact("agent_id")
        found = []
        for user in users:
            for candidate in [agent] if agent is not None else sorted(self._agents.get(user, ()), key=str):
                ent = entity_id(name, user, candidate)
                if ent in graph:
                    found.append(ent)
        return found

    def assert_fact(
        self,
        *,
        subject: str,
        predicate: str,
        obj: str,
        confidence: float,
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        source_ids: Sequence[str],
        valid_from: float | None,
        importance: float,
        source: str,
        metadata: dict[str, Any],
        tags: tuple[str, ...],
        exclusive: bool,
    ) -> Fact:
        """Store a new fact or reinforce the existing one; runs inside ``graph.batch()``."""
        ctx = self._ctx
        graph = ctx.backend.graph
        now = ctx.now()
        memory_id = fact_id(subject, predicate, obj, user_id, agent_id)
        known_sources = ctx.known(source_ids)
        node = graph.node(memory_id)
        if node is not None:
            old_conf = float(node["confidence"])
            merged = tuple(dict.fromkeys([*node.get("source_ids", []), *known_sources]))
            ctx.reinforce(
                memory_id,
                now,
                confidence=round(old_conf + (1.0 - old_conf) * confidence * 0.5, 6),
                source_ids=merged,
                valid_to=None,
                superseded_by=None,
            )
            ctx.link_sources(memory_id, EdgeType.DERIVED_FROM)
        else:
            start = now if valid_from is None else valid_from
            fact = Fact(
                id=memory_id,
                memory_type=MemoryType.SEMANTIC,
                content=f"{subject} {predicate} {obj}",
                timestamp=start,
                user_id=user_id,
                agent_id=agent_id,
                session_id=session_id,
                importance=importance,
                source=source,
                tags=tags,
                metadata=metadata,
                source_ids=known_sources,
                **ctx.fresh_state(importance, now),
                subject=subject,
                predicate=predicate,
                object=obj,
                confidence=confidence,
                valid_from=start,
            )
            vector = ctx.embedder.embed([fact.content])[0]
            ctx.backend.insert([fact], [vector])
            self.link(fact.id)
        if exclusive:
            self._supersede_rivals(memory_id, now if valid_from is None else valid_from)
        return self._current(memory_id)

    def link(self, memory_id: str) -> None:
        """Create the fact's entity nodes and its subject/object/provenance edges."""
        graph = self._ctx.backend.graph
        attrs = graph.node(memory_id)
        if attrs is None:
            return
        user_id, agent_id = attrs.get("user_id"), attrs.get("agent_id")
        for name, role in ((attrs["subject"], EdgeType.SUBJECT), (attrs["object"], EdgeType.OBJECT)):
            ent = entity_id(name, user_id, agent_id)
            if ent not in graph:
                entity = {"kind": "entity", "name": name, "user_id": user_id, "agent_id": agent_id}
                graph.put_node(ent, entity)
                self.index_entity(entity)
            graph.add_edge(memory_id, ent, role, 1.0)
        self._ctx.link_sources(memory_id, EdgeType.DERIVED_FROM)

    def _supersede_rivals(self, memory_id: str, at: float) -> None:
        for rival in self.rivals(memory_id):
            self.supersede(rival, memory_id, at)

    def rivals(self, memory_id: str) -> list[str]:
        """Current facts with the same scope, subject and predicate as ``memory_id`` but
        another object."""
        graph = self._ctx.backend.graph
        attrs = graph.node(memory_id)
        if attrs is None:
            return []
        key = (normalise(attrs["subject"]), normalise(attrs["predicate"]))
        found = []
        subject = entity_id(attrs["subject"], attrs.get("user_id"), attrs.get("agent_id"))
        for rival in self.facts_of([subject], Scope(ANY), role="subject"):
            rattrs = graph.node(rival)
            if (
                rival != memory_id
                and rattrs is not None
                and (normalise(rattrs["subject"]), normalise(rattrs["predicate"])) == key
            ):
                found.append(rival)
        return found

    def supersede(self, old_id: str, new_id: str, at: float) -> None:
        """Close ``old_id``'s validity at ``at`` in favour of ``new_id``; the old fact stays as history."""
        graph = self._ctx.backend.graph
        self._ctx.backend.set_state(old_id, valid_to=at, superseded_by=new_id)
        graph.add_edge(new_id, old_id, EdgeType.SUPERSEDES, 1.0)
        graph.add_edge(new_id, old_id, EdgeType.CONTRADICTS, 1.0)

    def _current(self, memory_id: str) -> Fact:
        record = self._ctx.backend.fetch([memory_id])[memory_id]
        assert isinstance(record, Fact)
        return record

    # ------------------------------------------------------------------ reads
    def facts_about(
        self, entity: str, scope: Scope, *, role: str | None = None, include_superseded: bool = False
    ) -> list[str]:
        """Ids of facts in ``scope`` whose subject (``role="subject"``), object (``"object"``)
        or either is ``entity``, strongest confidence first."""
        return self.facts_of(
            self.entity_ids(entity, scope), scope, role=role, include_superseded=include_superseded
        )

    def facts_of(
        self, entities: list[str], scope: Scope, *, role: str | None = None, include_superseded: bool = False
    ) -> list[str]:
        """Ids of facts in ``scope`` linked to the entity nodes ``entities`` (as ``role``)."""
        graph = self._ctx.backend.graph
        wanted = {EdgeType.SUBJECT.value, EdgeType.OBJECT.value} if role is None else {role}
        ids = []
        for ent in entities:
            for u, _, kind, _ in graph.edges_of(ent, direction="in"):
                attrs = graph.node(u)
                if (
                    kind in wanted
                    and attrs is not None
                    and (include_superseded or attrs.get("valid_to") is None)
                    and scope.admits(attrs)
                ):
                    ids.append(u)
        ids = list(dict.fromkeys(ids))
        ids.sort(key=lambda i: -float(graph.node(i)["confidence"]))  # type: ignore[index]
        return ids

    def related_entities(self, entity: str, scope: Scope, *, hops: int = 1) -> dict[str, int]:
        """Entities reachable through current facts in ``scope`` within ``hops`` fact steps:
        ``{name: hops}``."""
        graph = self._ctx.backend.graph
        starts = self.entity_ids(entity, scope)
        if not starts:
            return {}
        seen = dict.fromkeys(starts, 0)
        frontier = list(starts)
        for hop in range(1, hops + 1):
            nxt = []
            for ent in frontier:
                for fact, _, kind, _ in graph.edges_of(ent, direction="in"):
                    fattrs = graph.node(fact)
                    if (
                        kind not in ("subject", "object")
                        or fattrs is None
                        or fattrs.get("valid_to") is not None
                        or not scope.admits(fattrs)
                    ):
                        continue
                    for _, other, okind, _ in graph.edges_of(fact, direction="out"):
                        if okind in ("subject", "object") and other not in seen:
                            seen[other] = hop
                            nxt.append(other)
            frontier = nxt
        names = {}
        for ent, hop in seen.items():
            attrs = graph.node(ent)
            if hop and attrs is not None:
                names[str(attrs["name"])] = hop
        return names
