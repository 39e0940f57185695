"""Writing and reading structured knowledge: facts, procedures, lessons, intentions, links.

:class:`Knowledge` is the part of :class:`~ucma_core.Memory` that validates the
arguments of the explicit write and lookup calls and delegates to the stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.graph.memory_graph import EdgeType
from ucma_core.records import (
    Fact,
    Intention,
    IntentionStatus,
    Learning,
    LearningType,
    MemoryType,
    Procedure,
    ProcedureStatus,
    Source,
)
from ucma_core.retrieval.filters import Filters
from ucma_core.scope import AnyScope, Scope
from ucma_core.validation import (
    check_content,
    check_metadata,
    check_scope_id,
    check_strings,
    check_unit,
    to_epoch,
)

if TYPE_CHECKING:
    from ucma_core.memory import Memory

__all__ = ["Knowledge"]

R = TypeVar("R")


class Knowledge:
    """Explicit knowledge writes and lookups of a :class:`~ucma_core.Memory` (mixed into it)."""

    # ------------------------------------------------------------------ explicit writes
    def assert_fact(
        self: Memory,
        subject: str,
        predicate: str,
        object: str,
        *,
        confidence: float = 0.8,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        source_ids: Sequence[str] = (),
        valid_from: datetime | float | None = None,
        importance: float = 0.6,
        source: Source | str = "user",
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        exclusive: bool = False,
    ) -> Fact:
        """Store ``subject predicate object`` or reinforce it if already known.

        The id is derived from the scope and the normalised triple, so asserting the
        same fact again raises its confidence and adds ``source_ids`` to its
        provenance instead of duplicating it. With ``exclusive=True`` the fact
        replaces the current facts with the same subject and predicate: they get
        ``valid_to`` and stay in history, linked by ``supersedes`` edges.
        """
        args = {
            "subject": check_content(subject, max_chars=1000, what="subject"),
            "predicate": check_content(predicate, max_chars=1000, what="predicate"),
            "obj": check_content(object, max_chars=self.config.max_content_chars, what="object"),
            "confidence": check_unit(confidence, "confidence"),
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "source_ids": check_strings(source_ids, "source_ids"),
            "valid_from": None if valid_from is None else to_epoch(valid_from, "valid_from"),
            "importance": check_unit(importance, "importance"),
            "source": Source.parse(source).value,
            "metadata": check_metadata(metadata),
            "tags": check_strings(tags, "tags"),
            "exclusive": bool(exclusive),
        }
        with self._lock:
            self._check_open()
            session = check_scope_id(session_id, "session_id") or self._session_id
            with self._backend.graph.batch():
                return self._semantic.assert_fact(session_id=session, **args)  # type: ignore[arg-type]

    def add_procedure(
        self: Memory,
        name: str,
        steps: Sequence[str],
        *,
        description: str = "",
        trigger_tags: Sequence[str] | None = None,
        status: ProcedureStatus | str = "draft",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        importance: float = 0.6,
        source: Source | str = "user",
        metadata: Mapping[str, Any] | None = None,
        source_ids: Sequence[str] = (),
    ) -> Procedure:
        """Store a named procedure (unique per scope) with its ordered steps."""
        step_list = check_strings(
            list(steps) if not isinstance(steps, str) else None, "steps", max_len=10_000
        )
        if not step_list:
            raise InvalidInputError("a procedure needs at least one step (a list of str)")
        try:
            parsed_status = ProcedureStatus(status)
        except ValueError as e:
            raise InvalidInputError(
                f"unknown procedure status {status!r}; use draft, active or deprecated"
            ) from e
        args = {
            "name": check_content(name, max_chars=200, what="name"),
            "steps": step_list,
            "description": description
            if isinstance(description, str)
            else check_content(description, max_chars=1),
            "trigger_tags": check_strings(trigger_tags, "trigger_tags"),
            "status": parsed_status,
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "importance": check_unit(importance, "importance"),
            "source": Source.parse(source).value,
            "metadata": check_metadata(metadata),
            "source_ids": check_strings(source_ids, "source_ids"),
        }
        with self._lock:
            self._check_open()
            session = check_scope_id(session_id, "session_id") or self._session_id
            with self._backend.graph.batch():
                return self._procedural.add(session_id=session, **args)  # type: ignore[arg-type]

    def record_outcome(self: Memory, procedure_id: str, success: bool) -> Procedure:
        """Fold one run's outcome into a procedure's success rate; returns the updated procedure."""
        if not isinstance(success, bool):
            raise InvalidInputError(f"success must be a bool, not {type(success).__name__}")
        with self._lock:
            self._check_open()
            self._require(procedure_id, MemoryType.PROCEDURAL)
            self._procedural.record_outcome(procedure_id, success)
            return self._fetch(procedure_id, Procedure)

    def find_procedures(
        self: Memory,
        tags: Sequence[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        include_deprecated: bool = False,
    ) -> list[Procedure]:
        """Procedures sharing a trigger tag with ``tags``: most shared tags first, then by
        evidence-weighted success rate."""
        wanted = check_strings(tags, "tags")
        with self._lock:
            self._check_open()
            ids = self._procedural.find(
                wanted,
                check_scope_id(user_id, "user_id"),
                check_scope_id(agent_id, "agent_id"),
                include_deprecated=include_deprecated,
            )
            found = self._backend.fetch(ids)
            return [found[i] for i in ids if isinstance(found.get(i), Procedure)]  # type: ignore[misc]

    def learn(
        self: Memory,
        insight: str,
        *,
        title: str = "",
        learning_type: LearningType | str = "domain_insight",
        applicability: Sequence[str] | None = None,
        confidence: float = 0.5,
        importance: float = 0.7,
        evidence: Sequence[str] = (),
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        source: Source | str = "assistant",
        metadata: Mapping[str, Any] | None = None,
    ) -> Learning:
        """Store a distilled lesson; ``evidence`` are ids of the memories that support it."""
        try:
            parsed_type = LearningType(learning_type)
        except ValueError as e:
            known = ", ".join(t.value for t in LearningType)
            raise InvalidInputError(
                f"unknown learning type {learning_type!r}; expected one of: {known}"
            ) from e
        args = {
            "insight": check_content(insight, max_chars=self.config.max_content_chars, what="insight"),
            "title": "" if title == "" else check_content(title, max_chars=500, what="title"),
            "learning_type": parsed_type,
            "applicability": check_strings(applicability, "applicability"),
            "confidence": check_unit(confidence, "confidence"),
            "importance": check_unit(importance, "importance"),
            "evidence": check_strings(evidence, "evidence"),
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "source": Source.parse(source).value,
            "metadata": check_metadata(metadata),
        }
        with self._lock:
            self._check_open()
            session = check_scope_id(session_id, "session_id") or self._session_id
            with self._backend.graph.batch():
                return self._learning.add(session_id=session, **args)  # type: ignore[arg-type]

    def validate_learning(self: Memory, learning_id: str, success: bool) -> Learning:
        """Confirm (+0.10 confidence) or refute (−0.15) a learning; returns the updated learning."""
        if not isinstance(success, bool):
            raise InvalidInputError(f"success must be a bool, not {type(success).__name__}")
        with self._lock:
            self._check_open()
            self._require(learning_id, MemoryType.LEARNING)
            self._learning.validate(learning_id, success)
            return self._fetch(learning_id, Learning)

    def intend(
        self: Memory,
        description: str,
        trigger: str | Sequence[str],
        *,
        action: str | None = None,
        priority: float = 0.7,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Intention:
        """Remember to do something when an observation mentions any of the ``trigger`` phrases."""
        args = {
            "description": check_content(
                description, max_chars=self.config.max_content_chars, what="description"
            ),
            "trigger": check_strings(trigger, "trigger", max_len=500),
            "action": None if action is None else check_content(action, max_chars=10_000, what="action"),
            "priority": check_unit(priority, "priority"),
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "source": "user",
            "metadata": check_metadata(metadata),
        }
        if not args["trigger"]:
            raise InvalidInputError("trigger needs at least one phrase")
        with self._lock:
            self._check_open()
            session = check_scope_id(session_id, "session_id") or self._session_id
            with self._backend.graph.batch():
                return self._prospective.add(session_id=session, **args)  # type: ignore[arg-type]

    def intentions(
        self: Memory, *, status: IntentionStatus | str | None = None, user_id: Scope = None
    ) -> list[Intention]:
        """Intentions in the user's scope (optionally of one status), oldest first."""
        wanted = None if status is None else IntentionStatus(status).value
        with self._lock:
            self._check_open()
            ids = [
                i
                for i, a in self._backend.graph.nodes()
                if a.get("memory_type") == MemoryType.PROSPECTIVE.value
                and (isinstance(user_id, AnyScope) or a.get("user_id") == user_id)
                and (wanted is None or a.get("status") == wanted)
            ]
            found = self._backend.fetch(ids)
            out = [r for r in found.values() if isinstance(r, Intention)]
            return sorted(out, key=lambda r: (r.timestamp, r.id))

    def resolve_intention(self: Memory, intention_id: str) -> Intention:
        """Mark an intention done."""
        with self._lock:
            self._check_open()
            self._require(intention_id, MemoryType.PROSPECTIVE)
            self._prospective.resolve(intention_id)
            return self._fetch(intention_id, Intention)

    def link(
        self: Memory,
        source_id: str,
        target_id: str,
        edge_type: EdgeType | str = "related_to",
        weight: float = 1.0,
    ) -> None:
        """Add a typed, weighted edge between two memories."""
        with self._lock:
            self._check_open()
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise InvalidInputError("weight must be a number in (0, 1]")
            self._backend.graph.add_edge(source_id, target_id, edge_type, float(weight))

    def facts_about(
        self: Memory,
        entity: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        role: str | None = None,
        include_superseded: bool = False,
    ) -> list[Fact]:
        """Facts whose subject or object is ``entity``; ``role="subject"`` or ``"object"``
        picks one end."""
        if role not in (None, "subject", "object"):
            raise InvalidInputError(f"role must be 'subject', 'object' or None, got {role!r}")
        name = check_content(entity, max_chars=1000, what="entity")
        with self._lock:
            self._check_open()
            ids = self._semantic.facts_about(
                name,
                check_scope_id(user_id, "user_id"),
                check_scope_id(agent_id, "agent_id"),
                role=role,
                include_superseded=include_superseded,
            )
            found = self._backend.fetch(ids)
            return [found[i] for i in ids if isinstance(found.get(i), Fact)]  # type: ignore[misc]

    def related_entities(
        self: Memory, entity: str, *, hops: int = 1, user_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, int]:
        """Entities connected to ``entity`` through current facts: ``{name: hops}``."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= 5:
            raise InvalidInputError("hops must be an int in 1..5")
        with self._lock:
            self._check_open()
            return self._semantic.related_entities(
                check_content(entity, max_chars=1000, what="entity"),
                check_scope_id(user_id, "user_id"),
                check_scope_id(agent_id, "agent_id"),
                hops=hops,
            )

    def neighbours(self: Memory, memory_id: str, *, hops: int = 1) -> list[tuple[str, int, float]]:
        """Memories near ``memory_id`` in the graph (bounded by ``config.graph``):
        ``(id, hops, activation)``, strongest first; entities are skipped."""
        with self._lock:
            self._check_open()
            node = self._backend.graph.node(memory_id)
            if node is None:
                raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
            g = self.config.graph
            reached = self._backend.graph.expand(
                {memory_id: 1.0},
                max_hops=min(hops, g.max_hops) or 1,
                max_nodes=g.max_nodes,
                max_fanout=g.max_fanout,
                min_weight=g.min_edge_weight,
            )
            filt = Filters(user_id=node.get("user_id"))
            out = [
                (n, h, a)
                for n, (h, a) in reached.items()
                if n != memory_id
                and (attrs := self._backend.graph.node(n)) is not None
                and attrs.get("kind") == "memory"
                and filt.admits(attrs)
            ]
            return sorted(out, key=lambda x: (-x[2], x[0]))

    # ------------------------------------------------------------------ helpers
    def _require(self: Memory, memory_id: str, memory_type: MemoryType) -> None:
        node = self._backend.graph.node(memory_id) if isinstance(memory_id, str) else None
        if node is None or node.get("memory_type") != memory_type.value:
            raise MemoryNotFoundError(f"no {memory_type.value} memory with id {memory_id!r}")

    def _fetch(self: Memory, memory_id: str, cls: type[R]) -> R:
        record = self._backend.fetch([memory_id]).get(memory_id)
        if not isinstance(record, cls):
            raise MemoryNotFoundError(f"memory {memory_id!r} vanished while being read")
        return record
