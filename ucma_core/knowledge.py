"""Writing and reading structured knowledge: facts, procedures, lessons, intentions, links.

:class:`Knowledge` is the part of :class:`~ucma_core.Memory` that validates the
arguments of the explicit write and lookup calls and delegates to the stores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ucma_core.errors import InvalidInputError, MemoryNotFoundError, StorageError
from ucma_core.memory_base import MemoryBase
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
from ucma_core.scope import ANY, Scope, ScopeId
from ucma_core.storage.graph import EdgeType
from ucma_core.validation import (
    check_content,
    check_metadata,
    check_scope_id,
    check_strings,
    check_unit,
    to_epoch,
)

__all__ = ["Knowledge"]


class Knowledge(MemoryBase):
    """Explicit knowledge writes and lookups of a :class:`~ucma_core.Memory` (one of its parts)."""

    # ------------------------------------------------------------------ explicit writes
    def assert_fact(
        self,
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
            "metadata": check_metadata(metadata, limits=self.config.limits),
            "tags": check_strings(tags, "tags", max_items=self.config.limits.max_tags),
            "exclusive": bool(exclusive),
        }
        with self._lock:
            self._check_open()
            session = self._write_session(session_id)
            with self._stores.graph.batch():
                return self._stores.semantic.assert_fact(session_id=session, **args)  # type: ignore[arg-type]

    def add_procedure(
        self,
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
            "trigger_tags": check_strings(
                trigger_tags, "trigger_tags", max_items=self.config.limits.max_tags
            ),
            "status": parsed_status,
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "importance": check_unit(importance, "importance"),
            "source": Source.parse(source).value,
            "metadata": check_metadata(metadata, limits=self.config.limits),
            "source_ids": check_strings(source_ids, "source_ids"),
        }
        with self._lock:
            self._check_open()
            session = self._write_session(session_id)
            with self._stores.graph.batch():
                return self._stores.procedural.add(session_id=session, **args)  # type: ignore[arg-type]

    def record_outcome(self, procedure_id: str, success: bool) -> Procedure:
        """Fold one run's outcome into a procedure's success rate; returns the updated procedure."""
        if not isinstance(success, bool):
            raise InvalidInputError(f"success must be a bool, not {type(success).__name__}")
        with self._lock:
            self._check_open()
            self._stores.require(procedure_id, MemoryType.PROCEDURAL)
            self._stores.procedural.record_outcome(procedure_id, success)
            return self._stores.fetch_one(procedure_id, Procedure)

    def find_procedures(
        self,
        tags: Sequence[str],
        *,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        include_deprecated: bool = False,
    ) -> list[Procedure]:
        """Procedures in scope sharing a trigger tag with ``tags``: most shared tags first,
        then by evidence-weighted success rate."""
        wanted = check_strings(tags, "tags")
        scope = self._scope(user_id, agent_id)
        with self._lock:
            self._check_open()
            ids = self._stores.procedural.find(
                wanted,
                self._stores.scan(scope, [MemoryType.PROCEDURAL]),
                include_deprecated=include_deprecated,
            )
            return self._stores.fetch_ordered(ids, Procedure)

    def learn(
        self,
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
            "applicability": check_strings(
                applicability, "applicability", max_items=self.config.limits.max_tags
            ),
            "confidence": check_unit(confidence, "confidence"),
            "importance": check_unit(importance, "importance"),
            "evidence": check_strings(evidence, "evidence"),
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "source": Source.parse(source).value,
            "metadata": check_metadata(metadata, limits=self.config.limits),
        }
        with self._lock:
            self._check_open()
            session = self._write_session(session_id)
            with self._stores.graph.batch():
                return self._stores.learning.add(session_id=session, **args)  # type: ignore[arg-type]

    def validate_learning(self, learning_id: str, success: bool) -> Learning:
        """Confirm (+0.10 confidence) or refute (−0.15) a learning; returns the updated learning."""
        if not isinstance(success, bool):
            raise InvalidInputError(f"success must be a bool, not {type(success).__name__}")
        with self._lock:
            self._check_open()
            self._stores.require(learning_id, MemoryType.LEARNING)
            self._stores.learning.validate(learning_id, success)
            return self._stores.fetch_one(learning_id, Learning)

    def intend(
        self,
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
            "trigger": check_strings(
                trigger, "trigger", max_len=500, max_items=self.config.limits.max_triggers
            ),
            "action": None if action is None else check_content(action, max_chars=10_000, what="action"),
            "priority": check_unit(priority, "priority"),
            "user_id": check_scope_id(user_id, "user_id"),
            "agent_id": check_scope_id(agent_id, "agent_id"),
            "source": "user",
            "metadata": check_metadata(metadata, limits=self.config.limits),
        }
        if not args["trigger"]:
            raise InvalidInputError("trigger needs at least one phrase")
        with self._lock:
            self._check_open()
            session = self._write_session(session_id)
            with self._stores.graph.batch():
                return self._stores.prospective.add(session_id=session, **args)  # type: ignore[arg-type]

    def intentions(
        self,
        *,
        status: IntentionStatus | str | None = None,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> list[Intention]:
        """Intentions in scope (optionally of one status), oldest first."""
        try:
            wanted = None if status is None else IntentionStatus(status).value
        except ValueError as e:
            known = ", ".join(s.value for s in IntentionStatus)
            raise InvalidInputError(f"unknown intention status {status!r}; expected one of: {known}") from e
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            ids = [
                i
                for i, a in self._stores.scan(scope, [MemoryType.PROSPECTIVE])
                if wanted is None or a.get("status") == wanted
            ]
            out = self._stores.fetch_ordered(ids, Intention)
            return sorted(out, key=lambda r: (r.timestamp, r.id))

    def resolve_intention(self, intention_id: str) -> Intention:
        """Mark an intention done."""
        with self._lock:
            self._check_open()
            self._stores.require(intention_id, MemoryType.PROSPECTIVE)
            self._stores.prospective.resolve(intention_id)
            return self._stores.fetch_one(intention_id, Intention)

    def pin(
        self, memory_id: str, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> bool:
        """Keep a memory however long it goes unused: the forgetting engine (:meth:`prune` and
        the sleep cycle) never lets a pinned memory go; :meth:`expire` and :meth:`forget`
        still remove it. Returns ``False`` if there is no such memory in the scope given (by
        default: any user's).

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> now = [1_750_000_000.0]
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder(), clock=lambda: now[0]) as mem:
            ...     note = mem.observe("The spare key is under the blue pot", importance=0.3)
            ...     mem.pin(note)
            ...     now[0] += 365 * 86_400
            ...     mem.prune().protected
            True
            {'pinned': 1}
        """
        return self._set_pinned(memory_id, True, self._scope(user_id, agent_id, session_id))

    def unpin(
        self, memory_id: str, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> bool:
        """Let a pinned memory fade again like any other; ``False`` if there is no such memory
        in the scope given."""
        return self._set_pinned(memory_id, False, self._scope(user_id, agent_id, session_id))

    def reinforce(
        self,
        memory_ids: Sequence[str],
        *,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> int:
        """Rehearse memories the app used (put in a prompt, acted on, confirmed): each one's
        stability grows with the spacing since its last review, its last access becomes now
        and its access count grows. Unlike a retrieval (:meth:`remember` only records that it
        returned a memory, which keeps it from being forgotten but never changes a later
        rank), a rehearsal counts in the rank's retention factor. Ids that are not memories
        in the scope given (by default: any user's) are skipped; returns how many were
        reinforced.

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     note = mem.observe("The spare key is under the blue pot", importance=0.5)
            ...     before = mem.get(note).stability
            ...     mem.reinforce([note, "no-such-id"])
            ...     mem.get(note).stability > before
            1
            True
        """
        if isinstance(memory_ids, str) or not all(isinstance(i, str) for i in memory_ids):
            raise InvalidInputError("memory_ids must be a list of memory ids (str)")
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            now = self.now()
            ctx = self._stores.ctx
            done = 0
            with self._stores.graph.batch():
                for memory_id in dict.fromkeys(memory_ids):
                    if self._stores.memory_node(memory_id, scope) is not None:
                        ctx.reinforce(memory_id, now)
                        done += 1
            return done

    def _set_pinned(self, memory_id: str, pinned: bool, scope: Scope) -> bool:
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a str, not {type(memory_id).__name__}")
        with self._lock:
            self._check_open()
            if self._stores.memory_node(memory_id, scope) is None:
                return False
            with self._stores.graph.batch():
                self._stores.backend.set_state(memory_id, pinned=pinned)
            # the copy in Chroma a rebuilt graph node reads; a failure is retried by the next
            # consolidation cycle (the graph, which is the truth, already holds the pin)
            with contextlib.suppress(StorageError):
                self._stores.backend.keep_markers()
            return True

    def link(
        self,
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
            self._stores.graph.add_edge(source_id, target_id, edge_type, float(weight))

    def edges(
        self, memory_id: str, *, edge_type: EdgeType | str | None = None, direction: str = "both"
    ) -> list[tuple[str, str, str, float]]:
        """The graph edges touching a memory or entity: ``(from, to, type, weight)``.

        ``direction`` is ``"out"``, ``"in"`` or ``"both"``; ``edge_type`` keeps one type.
        An unknown id has no edges.
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInputError(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a str, not {type(memory_id).__name__}")
        kind = None if edge_type is None else EdgeType.parse(edge_type)
        with self._lock:
            self._check_open()
            return sorted(self._stores.graph.edges_of(memory_id, kind, direction=direction))

    def facts_about(
        self,
        entity: str,
        *,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
        role: str | None = None,
        include_superseded: bool = False,
    ) -> list[Fact]:
        """Facts in scope whose subject or object is ``entity``; ``role="subject"`` or
        ``"object"`` picks one end."""
        if role not in (None, "subject", "object"):
            raise InvalidInputError(f"role must be 'subject', 'object' or None, got {role!r}")
        name = check_content(entity, max_chars=1000, what="entity")
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            ids = self._stores.semantic.facts_about(
                name, scope, role=role, include_superseded=include_superseded
            )
            return self._stores.fetch_ordered(ids, Fact)

    def related_entities(
        self,
        entity: str,
        *,
        hops: int = 1,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> dict[str, int]:
        """Entities connected to ``entity`` through current facts in scope: ``{name: hops}``."""
        if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= 5:
            raise InvalidInputError("hops must be an int in 1..5")
        name = check_content(entity, max_chars=1000, what="entity")
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            return self._stores.semantic.related_entities(name, scope, hops=hops)

    def neighbours(
        self,
        memory_id: str,
        *,
        hops: int = 1,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> list[tuple[str, int, float]]:
        """Memories near ``memory_id`` in the graph (bounded by ``config.graph``):
        ``(id, hops, activation)``, strongest first; entities are skipped. Only memories of
        the start memory's user are returned, narrowed further by the scope given."""
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            node = self._stores.memory_node(memory_id, scope) if isinstance(memory_id, str) else None
            if node is None:
                raise MemoryNotFoundError(f"no memory with id {memory_id!r} in this scope")
            g = self.config.graph
            reached = self._stores.graph.expand(
                {memory_id: 1.0},
                max_hops=min(hops, g.max_hops) or 1,
                max_nodes=g.max_nodes,
                max_fanout=g.max_fanout,
                min_weight=g.min_edge_weight,
            )
            own = Scope(node.get("user_id"), scope.agent_id, scope.session_id)
            out = [
                (n, h, a)
                for n, (h, a) in reached.items()
                if n != memory_id and self._stores.memory_node(n, own) is not None
            ]
            return sorted(out, key=lambda x: (-x[2], x[0]))
