"""Turn a read's scope and filters into a Chroma ``where`` clause."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ucma_core.records import MemoryType, Source
from ucma_core.scope import AnyScope
from ucma_core.storage.codec import scope_value, tag_key

__all__ = ["Filters"]


@dataclass(frozen=True)
class Filters:
    """What a search may return. ``user_id=None`` means memories without a user."""

    user_id: str | AnyScope | None = None
    agent_id: str | AnyScope | None = None
    session_id: str | AnyScope | None = None
    memory_types: tuple[MemoryType, ...] = ()
    time_range: tuple[float, float] | None = None
    tags: tuple[str, ...] = ()
    #: Only memories observed from the user, tools or the environment (no generated text).
    observed_only: bool = False

    @property
    def any_user(self) -> bool:
        return isinstance(self.user_id, AnyScope)

    def exact(self, name: str) -> str | None:
        """The ``agent_id`` / ``session_id`` to match exactly, or ``None`` for any."""
        value = getattr(self, name)
        return None if value is None or isinstance(value, AnyScope) else str(value)

    def where(self) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if not isinstance(self.user_id, AnyScope):
            clauses.append({"user_id": scope_value(self.user_id)})
        for name in ("agent_id", "session_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, AnyScope):
                clauses.append({name: value})
        if self.memory_types and len(self.memory_types) < len(MemoryType):
            types: Sequence[str] = [t.value for t in self.memory_types]
            clauses.append(
                {"memory_type": types[0]} if len(types) == 1 else {"memory_type": {"$in": list(types)}}
            )
        if self.time_range is not None:
            clauses.append({"timestamp": {"$gte": self.time_range[0]}})
            clauses.append({"timestamp": {"$lte": self.time_range[1]}})
        if self.observed_only:
            clauses.append({"source": {"$in": [s.value for s in Source if s.observed]}})
        if self.tags:
            tag_clauses = [{tag_key(t): True} for t in self.tags]
            clauses.append(tag_clauses[0] if len(tag_clauses) == 1 else {"$or": tag_clauses})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def admits(self, attrs: dict[str, Any]) -> bool:
        """Whether a graph node's scope passes these filters (for memories reached by graph walks)."""
        if not isinstance(self.user_id, AnyScope) and attrs.get("user_id") != self.user_id:
            return False
        for name in ("agent_id", "session_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, AnyScope) and attrs.get(name) != value:
                return False
        if self.memory_types and attrs.get("memory_type") not in {t.value for t in self.memory_types}:
            return False
        if self.time_range is not None:
            ts = float(attrs.get("timestamp", 0.0))
            if not self.time_range[0] <= ts <= self.time_range[1]:
                return False
        return not self.observed_only or Source(attrs.get("source", "system")).observed
