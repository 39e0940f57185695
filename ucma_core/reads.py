"""Reading records back without a query: by id or key, a session's history, listings.

:class:`Reads` is the part of :class:`~ucma_core.Memory` that adapters use to show a
conversation, page through a scope or fetch what they stored under their own key.
Every call follows the scope rule of :mod:`ucma_core.scope`. Every call here only reads,
so on a shared memory it takes the workers' write lock shared (``_read_lock``): reads of
every worker run side by side and wait only for a write.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ucma_core.errors import InvalidInputError
from ucma_core.memory_base import MemoryBase
from ucma_core.records import Episode, MemoryRecord, MemoryType
from ucma_core.retrieval.filters import Filters, check_metadata_filter
from ucma_core.scope import ANY, ScopeId
from ucma_core.validation import (
    check_content,
    check_names,
    check_scope_id,
    check_strings,
    check_time_range,
    to_epoch,
)

__all__ = ["Reads"]

_MAX_KEY = 1024


def check_key(value: object) -> str:
    """A caller-given key: a non-blank str of at most 1,024 characters."""
    if not isinstance(value, str):
        raise InvalidInputError(f"key must be a str, not {type(value).__name__}")
    return check_content(value, max_chars=_MAX_KEY, what="key")


def check_limit(value: object, what: str, *, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidInputError(f"{what} must be an int >= {low}, got {value!r}")
    return value


class Reads(MemoryBase):
    """Reads by id, key, session and listing (one of :class:`~ucma_core.Memory`'s parts)."""

    def get(
        self, memory_id: str, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> MemoryRecord | None:
        """The stored record, or ``None`` if there is no such memory in the scope given
        (by default: any user's)."""
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a str, not {type(memory_id).__name__}")
        scope = self._scope(user_id, agent_id, session_id)
        with self._read_lock:
            self._check_open()
            if self._stores.memory_node(memory_id, scope) is None:
                return None
            return self._stores.fetch([memory_id]).get(memory_id)

    def get_by_key(
        self, key: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> MemoryRecord | None:
        """The memory stored with this caller-given ``key`` (see :meth:`~ucma_core.Memory.observe`)
        in this user and agent's scope, or ``None``."""
        k = check_key(key)
        user, agent = check_scope_id(user_id, "user_id"), check_scope_id(agent_id, "agent_id")
        with self._read_lock:
            self._check_open()
            memory_id = self._stores.keyed(user, agent, k)
            return None if memory_id is None else self._stores.fetch([memory_id]).get(memory_id)

    def history(
        self,
        *,
        session_id: str,
        user_id: str | None = None,
        agent_id: ScopeId = None,
        limit: int | None = None,
        before: datetime | float | None = None,
    ) -> list[Episode]:
        """The turns of one session in time order, oldest first (consolidated summaries are
        not turns). With ``before``, only turns before that time; with ``limit``, the last
        ``limit`` of them.

        ``user_id`` is the session's user (``None``: stored without a user);
        ``agent_id=None`` includes every agent's turns of that session.
        """
        session = check_scope_id(session_id, "session_id")
        if session is None:
            raise InvalidInputError("history needs a session_id")
        scope = self._scope(user_id, agent_id, session)
        cap = None if limit is None else check_limit(limit, "limit")
        until = None if before is None else to_epoch(before, "before")
        with self._read_lock:
            self._check_open()
            ids = self._stores.session_turns(scope)
            if until is not None:
                times = [float(self._stores.graph.node(i)["timestamp"]) for i in ids]
                ids = ids[: bisect.bisect_left(times, until)]
            if cap is not None:
                ids = ids[len(ids) - cap :] if cap else []
            return self._stores.fetch_ordered(ids, Episode)

    def list_memories(
        self,
        *,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        tags: Sequence[str] | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        time_range: tuple[datetime | float, datetime | float] | None = None,
        limit: int = 100,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryRecord]:
        """Memories in a scope, by time (newest first unless ``newest_first=False``), a page
        at a time (``limit`` / ``offset``).

        ``tags`` keeps memories carrying any of them; ``metadata_filter`` filters the
        caller's own metadata values (see :meth:`~ucma_core.Memory.remember`);
        ``time_range`` keeps memories whose timestamp is within ``(start, end)``.
        """
        filters = Filters(
            scope=self._scope(user_id, agent_id, session_id),
            memory_types=tuple(MemoryType.parse(t) for t in check_names(memory_types, "memory_types")),
            tags=check_strings(tags, "tags"),
            metadata=check_metadata_filter(metadata_filter),
            time_range=check_time_range(time_range),
        )
        cap = check_limit(limit, "limit")
        skip = check_limit(offset, "offset")
        with self._read_lock:
            self._check_open()
            candidates = (
                (i, a) for i, a in self._stores.scan(filters.scope, filters.memory_types) if filters.admits(a)
            )
            if filters.needs_row:
                backend = self._stores.backend
                allowed = set(backend.vectors.ids_where(filters.where(backend.keys)))
                candidates = ((i, a) for i, a in candidates if i in allowed)
            ordered = sorted(((float(a["timestamp"]), i) for i, a in candidates), reverse=newest_first)
            page = [i for _, i in ordered[skip : skip + cap]]
            return self._stores.fetch_ordered(page, MemoryRecord)

    def list_scopes(
        self, *, user_id: ScopeId = ANY, agent_id: ScopeId = None
    ) -> list[tuple[str | None, str | None, str | None]]:
        """The distinct ``(user_id, agent_id, session_id)`` of stored memories in a scope,
        sorted (``None`` first)."""
        scope = self._scope(user_id, agent_id)
        with self._read_lock:
            self._check_open()
            return self._stores.scopes(scope)

    def stats(self) -> dict[str, Any]:
        """Counts per memory type, graph size, sensory buffer and cache figures."""
        with self._read_lock:
            self._check_open()
            counts = {t.value: 0 for t in MemoryType}
            entities = 0
            graph = self._stores.graph
            for _, attrs in graph.nodes():
                if attrs.get("kind") == "entity":
                    entities += 1
                elif attrs.get("memory_type") in counts:
                    counts[attrs["memory_type"]] += 1
            return {
                "memories": sum(counts.values()),
                "by_type": counts,
                "entities": entities,
                "graph_nodes": len(graph),
                "graph_edges": graph.edge_count(),
                "sensory_buffer": len(self.sensory),
                "sensory_total": self.sensory.total_ingested,
                "skipped": len(self._stores.skipped),
                "embedder": self._embedder.name,
                "dimension": self._embedder.dimension,
                "embedding_cache": {"hits": self._embedder.hits, "misses": self._embedder.misses},
                "vector_cache": self._stores.backend.vectors.cache.stats(),
                "where_sets": self._stores.backend.vectors.where_sets.stats(),
                "session_id": self._session_id,
                "path": str(self.path),
            }
