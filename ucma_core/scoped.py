"""A view of a :class:`~ucma_core.Memory` bound to one user, agent and session.

:meth:`Memory.scope() <ucma_core.Memory.scope>` returns a :class:`ScopedMemory`.
Reads through it see the bound user's memories (and only the bound agent's, if
one is bound) across all sessions, so a new conversation recalls earlier ones;
writes, :meth:`~ScopedMemory.history` and :meth:`~ScopedMemory.forget_session`
use the bound session. A read may narrow itself to a session with
``session_id=``; nothing passed to a view can widen it to another user or agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.memory_base import in_thread
from ucma_core.progress import ProgressCallback
from ucma_core.records import Episode, Fact, Intention, Learning, MemoryRecord, Procedure, RetrievalResult
from ucma_core.validation import check_scope_id

if TYPE_CHECKING:  # the view is created by Memory.scope(); importing Memory here would be a circle
    from ucma_core.memory import Memory

__all__ = ["ScopedMemory"]

_BOUND = ("user_id", "agent_id")


class ScopedMemory:
    """A :class:`~ucma_core.Memory` seen from one scope (see the module docstring).

    Every method takes the keyword arguments of the :class:`~ucma_core.Memory`
    method of the same name, less the bound ``user_id`` / ``agent_id``.
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
    def _bound(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        for name in _BOUND:
            if name in kwargs and kwargs[name] != getattr(self, f"_{name}"):
                raise InvalidInputError(
                    f"this view is bound to {name}={getattr(self, f'_{name}')!r}; "
                    f"use memory.scope({name}=...) for another"
                )
        return {**kwargs, "user_id": self._user_id, "agent_id": self._agent_id}

    def _write(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {"session_id": self.session_id, **self._bound(kwargs)}

    def _session(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        bound = self._bound(kwargs)
        bound["session_id"] = kwargs.get("session_id") or self.session_id
        return bound

    # ------------------------------------------------------------------ writes
    def observe(self, content: str, **kwargs: Any) -> str | None:
        """:meth:`Memory.observe <ucma_core.Memory.observe>` in this scope and session."""
        return self._memory.observe(content, **self._write(kwargs))

    def observe_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        progress: ProgressCallback | None = None,
        **defaults: Any,
    ) -> list[str | None]:
        """:meth:`Memory.observe_many <ucma_core.Memory.observe_many>`; items may not name
        another user or agent."""
        listed = list(items) if not isinstance(items, (str, Mapping)) else items
        for item in listed:
            if isinstance(item, Mapping):
                self._bound(dict(item))
        return self._memory.observe_many(listed, progress=progress, **self._write(defaults))

    def upsert(self, key: str, content: str, **kwargs: Any) -> str:
        return self._memory.upsert(key, content, **self._write(kwargs))

    def assert_fact(self, subject: str, predicate: str, object: str, **kwargs: Any) -> Fact:
        return self._memory.assert_fact(subject, predicate, object, **self._write(kwargs))

    def learn(self, insight: str, **kwargs: Any) -> Learning:
        return self._memory.learn(insight, **self._write(kwargs))

    def add_procedure(self, name: str, steps: list[str], **kwargs: Any) -> Procedure:
        return self._memory.add_procedure(name, steps, **self._write(kwargs))

    def intend(self, description: str, trigger: str | list[str], **kwargs: Any) -> Intention:
        return self._memory.intend(description, trigger, **self._write(kwargs))

    # ------------------------------------------------------------------ reads
    def remember(self, query: str, **kwargs: Any) -> list[RetrievalResult]:
        """:meth:`Memory.remember <ucma_core.Memory.remember>` over this user's (and agent's)
        memories of every session, unless ``session_id=`` narrows it."""
        return self._memory.remember(query, **self._bound(kwargs))

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record, or ``None`` if it is not a memory of this scope."""
        return self._memory.get(memory_id, **self._bound({}))

    def get_by_key(self, key: str) -> MemoryRecord | None:
        return self._memory.get_by_key(key, **self._bound({}))

    def history(self, **kwargs: Any) -> list[Episode]:
        """The bound session's turns (or ``session_id=``'s), oldest first."""
        return self._memory.history(**self._session(kwargs))

    def list_memories(self, **kwargs: Any) -> list[MemoryRecord]:
        return self._memory.list_memories(**self._bound(kwargs))

    def facts_about(self, entity: str, **kwargs: Any) -> list[Fact]:
        return self._memory.facts_about(entity, **self._bound(kwargs))

    def related_entities(self, entity: str, **kwargs: Any) -> dict[str, int]:
        return self._memory.related_entities(entity, **self._bound(kwargs))

    def find_procedures(self, tags: list[str], **kwargs: Any) -> list[Procedure]:
        return self._memory.find_procedures(tags, **self._bound(kwargs))

    def intentions(self, **kwargs: Any) -> list[Intention]:
        return self._memory.intentions(**self._bound(kwargs))

    def list_scopes(self) -> list[tuple[str | None, str | None, str | None]]:
        """The ``(user_id, agent_id, session_id)`` of this user's (and agent's) stored memories."""
        return self._memory.list_scopes(**self._bound({}))

    # ------------------------------------------------------------------ updates by id
    def _own(self, memory_id: str, what: str) -> str:
        """``memory_id`` if it is a memory of this scope; else :class:`MemoryNotFoundError`."""
        if self.get(memory_id) is None:
            raise MemoryNotFoundError(f"no {what} with id {memory_id!r} in this scope")
        return memory_id

    def pin(self, memory_id: str) -> bool:
        """:meth:`Memory.pin <ucma_core.Memory.pin>` a memory of this scope (the forgetting
        engine keeps it); ``False`` if there is none with that id here."""
        return self._memory.pin(memory_id, **self._bound({}))

    def unpin(self, memory_id: str) -> bool:
        """Let a pinned memory of this scope fade again; ``False`` if there is none with that id here."""
        return self._memory.unpin(memory_id, **self._bound({}))

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
    def forget(self, memory_id: str) -> bool:
        """Delete a memory of this scope; ``False`` if there is none with that id here."""
        return self._memory.forget(memory_id, **self._bound({}))

    def forget_session(self, session_id: str | None = None) -> int:
        """Delete the bound session's memories (or ``session_id``'s) in this scope."""
        return self._memory.forget_session(session_id or self.session_id, **self._bound({}))

    # ------------------------------------------------------------------ async partners
    aobserve = in_thread(observe, "ScopedMemory")
    aobserve_many = in_thread(observe_many, "ScopedMemory")
    aupsert = in_thread(upsert, "ScopedMemory")
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
    arecord_outcome = in_thread(record_outcome, "ScopedMemory")
    avalidate_learning = in_thread(validate_learning, "ScopedMemory")
    aresolve_intention = in_thread(resolve_intention, "ScopedMemory")
    aforget = in_thread(forget, "ScopedMemory")
    aforget_session = in_thread(forget_session, "ScopedMemory")
