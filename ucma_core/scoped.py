"""A view of a :class:`~ucma_core.Memory` bound to one user, agent and session.

:meth:`Memory.scope() <ucma_core.Memory.scope>` returns a :class:`ScopedMemory`.
Reads through it see the bound user's memories (and only the bound agent's, if
one is bound) across all sessions, so a new conversation recalls earlier ones;
writes, :meth:`~ScopedMemory.history` and :meth:`~ScopedMemory.forget_session`
use the bound session. A read may narrow itself to a session with
``session_id=``; nothing passed to a view can widen it to another user or agent.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.memory_base import in_thread
from ucma_core.progress import ProgressCallback
from ucma_core.records import (
    Episode,
    Fact,
    Intention,
    IntentionStatus,
    Learning,
    LearningType,
    MemoryRecord,
    MemoryType,
    ObserveDefaults,
    Procedure,
    ProcedureStatus,
    RetrievalResult,
    ScopedObserveDefaults,
    Source,
)
from ucma_core.retrieval.router import RouteKind
from ucma_core.scope import ScopeId
from ucma_core.validation import check_scope_id

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

if TYPE_CHECKING:  # the view is created by Memory.scope(); importing Memory here would be a circle
    from ucma_core.memory import Memory

__all__ = ["ScopedMemory"]

_BOUND = ("user_id", "agent_id")


class ScopedMemory:
    """A :class:`~ucma_core.Memory` seen from one scope (see the module docstring).

    Every method takes the arguments of the :class:`~ucma_core.Memory` method of
    the same name, less the bound ``user_id`` / ``agent_id`` (a test keeps the two
    signatures equal). ``session_id=None`` means the bound session for writes,
    :meth:`history` and :meth:`forget_session`, and every session for other reads.
    """

    def __init__(
        self, memory: Memory, *, user_id: str | None, agent_id: str | None, session_id: str | None
    ) -> None:
        self._memory = memory
        self._user_id = check_scope_id(user_id, "user_id")
        self._agent_id = check_scope_id(agent_id, "agent_id")
        self._session_id = check_scope_id(session_id, "session_id")

    def __repr__(self) -> str:
        return (
            f"ScopedMemory(user_id={self._user_id!r}, agent_id={self._agent_id!r}, "
            f"session_id={self._session_id!r})"
        )

    @property
    def memory(self) -> Memory:
        """The memory this view reads and writes."""
        return self._memory

    @property
    def user_id(self) -> str | None:
        return self._user_id

    @property
    def agent_id(self) -> str | None:
        return self._agent_id

    @property
    def session_id(self) -> str:
        """The session writes go to: the bound one, else the memory's current session."""
        return self._session_id or self._memory.session_id

    # ------------------------------------------------------------------ argument binding
    def _check_bound(self, fields: Mapping[str, Any]) -> None:
        """Refuse ``user_id`` / ``agent_id`` in ``fields`` (an ``observe_many`` item or default)
        other than the view's."""
        for name in _BOUND:
            if name in fields and fields[name] != getattr(self, f"_{name}"):
                raise InvalidInputError(
                    f"this view is bound to {name}={getattr(self, f'_{name}')!r}; "
                    f"use memory.scope({name}=...) for another"
                )

    def _session(self, session_id: str | None) -> str:
        """The session a write goes to: the one given, else the view's."""
        return self.session_id if session_id is None else session_id

    # ------------------------------------------------------------------ writes
    def observe(
        self,
        content: str,
        *,
        source: Source | str = "user",
        session_id: str | None = None,
        timestamp: datetime | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        participants: Sequence[str] | None = None,
        importance: float | None = None,
        key: str | None = None,
        keep: bool = False,
    ) -> str | None:
        """:meth:`Memory.observe <ucma_core.Memory.observe>` in this scope and session."""
        return self._memory.observe(
            content,
            source=source,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            timestamp=timestamp,
            metadata=metadata,
            tags=tags,
            participants=participants,
            importance=importance,
            key=key,
            keep=keep,
        )

    def observe_many(
        self,
        /,
        items: Iterable[str | Mapping[str, Any]],
        *,
        progress: ProgressCallback | None = None,
        **defaults: Unpack[ScopedObserveDefaults],
    ) -> list[str | None]:
        """:meth:`Memory.observe_many <ucma_core.Memory.observe_many>`; items and defaults may
        not name another user or agent."""
        listed = list(items) if not isinstance(items, (str, Mapping)) else items
        for item in listed:
            if isinstance(item, Mapping):
                self._check_bound(item)
        self._check_bound(defaults)  # a caller passing a dict with ** is not checked by mypy
        bound: ObserveDefaults = {
            **defaults,
            "user_id": self._user_id,
            "agent_id": self._agent_id,
            "session_id": self._session(defaults.get("session_id")),
        }
        return self._memory.observe_many(listed, progress=progress, **bound)

    def upsert(
        self,
        key: str,
        content: str,
        *,
        source: Source | str = "user",
        session_id: str | None = None,
        timestamp: datetime | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        participants: Sequence[str] | None = None,
        importance: float | None = None,
    ) -> str:
        return self._memory.upsert(
            key,
            content,
            source=source,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            timestamp=timestamp,
            metadata=metadata,
            tags=tags,
            participants=participants,
            importance=importance,
        )

    def upsert_many(
        self, /, items: Iterable[Mapping[str, Any]], *, progress: ProgressCallback | None = None
    ) -> list[str]:
        """:meth:`Memory.upsert_many <ucma_core.Memory.upsert_many>` in this scope and session;
        items may not name another user or agent."""
        listed = list(items) if not isinstance(items, (str, Mapping)) else items
        bound = []
        for item in listed:
            if isinstance(item, Mapping):
                self._check_bound(item)
                item = {
                    **item,
                    "user_id": self._user_id,
                    "agent_id": self._agent_id,
                    "session_id": self._session(item.get("session_id")),
                }
            bound.append(item)
        return self._memory.upsert_many(bound, progress=progress)

    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        confidence: float = 0.8,
        session_id: str | None = None,
        source_ids: Sequence[str] = (),
        valid_from: datetime | float | None = None,
        importance: float = 0.6,
        source: Source | str = "user",
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        exclusive: bool = False,
    ) -> Fact:
        return self._memory.assert_fact(
            subject,
            predicate,
            object,
            confidence=confidence,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            source_ids=source_ids,
            valid_from=valid_from,
            importance=importance,
            source=source,
            metadata=metadata,
            tags=tags,
            exclusive=exclusive,
        )

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
        session_id: str | None = None,
        source: Source | str = "assistant",
        metadata: Mapping[str, Any] | None = None,
    ) -> Learning:
        return self._memory.learn(
            insight,
            title=title,
            learning_type=learning_type,
            applicability=applicability,
            confidence=confidence,
            importance=importance,
            evidence=evidence,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            source=source,
            metadata=metadata,
        )

    def add_procedure(
        self,
        name: str,
        steps: Sequence[str],
        *,
        description: str = "",
        trigger_tags: Sequence[str] | None = None,
        status: ProcedureStatus | str = "draft",
        session_id: str | None = None,
        importance: float = 0.6,
        source: Source | str = "user",
        metadata: Mapping[str, Any] | None = None,
        source_ids: Sequence[str] = (),
    ) -> Procedure:
        return self._memory.add_procedure(
            name,
            steps,
            description=description,
            trigger_tags=trigger_tags,
            status=status,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            importance=importance,
            source=source,
            metadata=metadata,
            source_ids=source_ids,
        )

    def intend(
        self,
        description: str,
        trigger: str | Sequence[str],
        *,
        action: str | None = None,
        priority: float = 0.7,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Intention:
        return self._memory.intend(
            description,
            trigger,
            action=action,
            priority=priority,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=self._session(session_id),
            metadata=metadata,
        )

    # ------------------------------------------------------------------ reads
    def remember(
        self,
        query: str,
        *,
        k: int | None = None,
        session_id: ScopeId = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        time_range: tuple[datetime | float, datetime | float] | None = None,
        tags: Sequence[str] | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        now: datetime | float | None = None,
        route: RouteKind | str | None = None,
        stage: bool = False,
        include_generated: bool = True,
        diversify: bool = True,
        reinforce: bool = True,
    ) -> list[RetrievalResult]:
        """:meth:`Memory.remember <ucma_core.Memory.remember>` over this user's (and agent's)
        memories of every session, unless ``session_id=`` narrows it."""
        return self._memory.remember(
            query,
            k=k,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=session_id,
            memory_types=memory_types,
            time_range=time_range,
            tags=tags,
            metadata_filter=metadata_filter,
            now=now,
            route=route,
            stage=stage,
            include_generated=include_generated,
            diversify=diversify,
            reinforce=reinforce,
        )

    def get(self, memory_id: str, *, session_id: ScopeId = None) -> MemoryRecord | None:
        """The record, or ``None`` if it is not a memory of this scope."""
        return self._memory.get(
            memory_id, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def get_by_key(self, key: str) -> MemoryRecord | None:
        return self._memory.get_by_key(key, user_id=self._user_id, agent_id=self._agent_id)

    def history(
        self,
        *,
        session_id: str | None = None,
        limit: int | None = None,
        before: datetime | float | None = None,
    ) -> list[Episode]:
        """The bound session's turns (or ``session_id``'s), oldest first."""
        return self._memory.history(
            session_id=self._session(session_id),
            user_id=self._user_id,
            agent_id=self._agent_id,
            limit=limit,
            before=before,
        )

    def list_memories(
        self,
        *,
        session_id: ScopeId = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        tags: Sequence[str] | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        time_range: tuple[datetime | float, datetime | float] | None = None,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryRecord]:
        return self._memory.list_memories(
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=session_id,
            memory_types=memory_types,
            tags=tags,
            metadata_filter=metadata_filter,
            time_range=time_range,
            limit=limit,
            offset=offset,
            newest_first=newest_first,
        )

    def facts_about(
        self,
        entity: str,
        *,
        session_id: ScopeId = None,
        role: str | None = None,
        include_superseded: bool = False,
    ) -> list[Fact]:
        return self._memory.facts_about(
            entity,
            user_id=self._user_id,
            agent_id=self._agent_id,
            session_id=session_id,
            role=role,
            include_superseded=include_superseded,
        )

    def related_entities(self, entity: str, *, hops: int = 1, session_id: ScopeId = None) -> dict[str, int]:
        return self._memory.related_entities(
            entity, hops=hops, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def find_procedures(self, tags: Sequence[str], *, include_deprecated: bool = False) -> list[Procedure]:
        return self._memory.find_procedures(
            tags, user_id=self._user_id, agent_id=self._agent_id, include_deprecated=include_deprecated
        )

    def intentions(
        self, *, status: IntentionStatus | str | None = None, session_id: ScopeId = None
    ) -> list[Intention]:
        return self._memory.intentions(
            status=status, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def list_scopes(self) -> list[tuple[str | None, str | None, str | None]]:
        """The ``(user_id, agent_id, session_id)`` of this user's (and agent's) stored memories."""
        return self._memory.list_scopes(user_id=self._user_id, agent_id=self._agent_id)

    # ------------------------------------------------------------------ updates by id
    def _own(self, memory_id: str, what: str) -> str:
        """``memory_id`` if it is a memory of this scope; else :class:`MemoryNotFoundError`."""
        if self.get(memory_id) is None:
            raise MemoryNotFoundError(f"no {what} with id {memory_id!r} in this scope")
        return memory_id

    def pin(self, memory_id: str, *, session_id: ScopeId = None) -> bool:
        """:meth:`Memory.pin <ucma_core.Memory.pin>` a memory of this scope (the forgetting
        engine keeps it); ``False`` if there is none with that id here."""
        return self._memory.pin(
            memory_id, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def reinforce(self, memory_ids: Sequence[str], *, session_id: ScopeId = None) -> int:
        """:meth:`Memory.reinforce <ucma_core.Memory.reinforce>` the memories of this scope the
        app used; returns how many were reinforced."""
        return self._memory.reinforce(
            memory_ids, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def unpin(self, memory_id: str, *, session_id: ScopeId = None) -> bool:
        """Let a pinned memory of this scope fade again; ``False`` if there is none with that id here."""
        return self._memory.unpin(
            memory_id, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def record_outcome(self, procedure_id: str, success: bool) -> Procedure:
        """:meth:`Memory.record_outcome <ucma_core.Memory.record_outcome>` for a procedure of this scope."""
        return self._memory.record_outcome(self._own(procedure_id, "procedure"), success)

    def validate_learning(self, learning_id: str, success: bool) -> Learning:
        """:meth:`Memory.validate_learning <ucma_core.Memory.validate_learning>` for a learning of
        this scope."""
        return self._memory.validate_learning(self._own(learning_id, "learning"), success)

    def resolve_intention(self, intention_id: str) -> Intention:
        """Mark an intention of this scope done."""
        return self._memory.resolve_intention(self._own(intention_id, "intention"))

    # ------------------------------------------------------------------ forgetting
    def forget(self, memory_id: str, *, session_id: ScopeId = None) -> bool:
        """Delete a memory of this scope; ``False`` if there is none with that id here."""
        return self._memory.forget(
            memory_id, user_id=self._user_id, agent_id=self._agent_id, session_id=session_id
        )

    def forget_session(self, session_id: str | None = None, *, scrub: bool = False) -> int:
        """Delete the bound session's memories (or ``session_id``'s) in this scope; ``scrub``
        as :meth:`Memory.forget_session <ucma_core.Memory.forget_session>`."""
        return self._memory.forget_session(
            self._session(session_id), user_id=self._user_id, agent_id=self._agent_id, scrub=scrub
        )

    # ------------------------------------------------------------------ async partners
    aobserve = in_thread(observe, "ScopedMemory")
    aobserve_many = in_thread(observe_many, "ScopedMemory")
    aupsert = in_thread(upsert, "ScopedMemory")
    aupsert_many = in_thread(upsert_many, "ScopedMemory")
    aassert_fact = in_thread(assert_fact, "ScopedMemory")
    alearn = in_thread(learn, "ScopedMemory")
    aadd_procedure = in_thread(add_procedure, "ScopedMemory")
    aintend = in_thread(intend, "ScopedMemory")
    aremember = in_thread(remember, "ScopedMemory")
    aget = in_thread(get, "ScopedMemory")
    aget_by_key = in_thread(get_by_key, "ScopedMemory")
    ahistory = in_thread(history, "ScopedMemory")
    alist_memories = in_thread(list_memories, "ScopedMemory")
    afacts_about = in_thread(facts_about, "ScopedMemory")
    arelated_entities = in_thread(related_entities, "ScopedMemory")
    afind_procedures = in_thread(find_procedures, "ScopedMemory")
    aintentions = in_thread(intentions, "ScopedMemory")
    alist_scopes = in_thread(list_scopes, "ScopedMemory")
    apin = in_thread(pin, "ScopedMemory")
    aunpin = in_thread(unpin, "ScopedMemory")
    areinforce = in_thread(reinforce, "ScopedMemory")
    arecord_outcome = in_thread(record_outcome, "ScopedMemory")
    avalidate_learning = in_thread(validate_learning, "ScopedMemory")
    aresolve_intention = in_thread(resolve_intention, "ScopedMemory")
    aforget = in_thread(forget, "ScopedMemory")
    aforget_session = in_thread(forget_session, "ScopedMemory")
