"""Episodic memory: what happened, when, in which session, with whom.

Episodes enter the short-term tier. Within a session they are chained in time
order by ``followed_by`` edges (an episode imported out of order is spliced into
the chain where its timestamp puts it). A sorted in-memory time index answers
time-range questions by binary search instead of a scan; it and the session
chains are rebuilt from the graph when the folder is opened.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ucma_core.records import Episode, MemoryType, Tier
from ucma_core.scope import Scope
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.context import StoreContext, new_id
from ucma_core.stores.timeline import TimeLine

__all__ = ["EpisodeDraft", "EpisodicStore"]

SessionKey = tuple[str | None, str | None, str | None]
#: Versions of the episode indexes, increasing across every store of the process (a rebuilt
#: store never repeats an earlier version, so a cache keyed on one cannot be stale).
_VERSIONS = itertools.count(1)


@dataclass(frozen=True)
class EpisodeDraft:
    """A validated observation about to become an episode."""

    content: str
    source: str
    timestamp: float
    importance: float
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    participants: tuple[str, ...] = ()
    #: For consolidated episodes: the episodes they summarise.
    source_ids: tuple[str, ...] = ()
    tier: Tier = Tier.SHORT_TERM
    #: The caller's idempotency key, if any.
    key: str | None = None


class EpisodicStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._times = TimeLine()  # every episode
        self._sessions: dict[SessionKey, TimeLine] = {}
        #: Changes whenever an episode enters or leaves the indexes (see :meth:`chains`).
        self.version = next(_VERSIONS)

    # ------------------------------------------------------------------ indexes
    def index(self, memory_id: str, attrs: Mapping[str, Any]) -> None:
        """Add an existing episode (from the graph) to the time and session indexes.

        Consolidated episodes (those with ``source_ids``) are in the time index but
        not in their session's turn chain."""
        stamp = float(attrs["timestamp"])
        self.version = next(_VERSIONS)
        self._times.insert(stamp, memory_id)
        if not attrs.get("source_ids"):
            key = self._session_key(attrs)
            chain = self._sessions.get(key)
            if chain is None:
                chain = self._sessions[key] = TimeLine()
            chain.insert(stamp, memory_id)

    def unindex(self, memory_id: str, attrs: Mapping[str, Any]) -> None:
        stamp = float(attrs["timestamp"])
        self.version = next(_VERSIONS)
        self._times.remove(stamp, memory_id)
        chain = self._sessions.get(self._session_key(attrs))
        if chain is not None:
            chain.remove(stamp, memory_id)

    @staticmethod
    def _session_key(attrs: Mapping[str, Any]) -> SessionKey:
        return (attrs.get("user_id"), attrs.get("agent_id"), attrs.get("session_id"))

    # ------------------------------------------------------------------ writes
    def add(self, drafts: Sequence[EpisodeDraft], vectors: Sequence[Sequence[float]]) -> list[Episode]:
        """Store episodes (one Chroma write) and chain them into their sessions.

        Must run inside ``graph.batch()`` so the whole write is one journal append.
        """
        now = self._ctx.now()
        # retention's clock starts when the episode is stored, not at its (possibly old) date:
        # an imported history is as fresh as anything else just learned (recency still reads the date)
        states = [self._ctx.fresh_state(d.importance, now) for d in drafts]
        episodes = [self._episode(new_id(), d, state) for d, state in zip(drafts, states, strict=True)]
        self._ctx.backend.insert(episodes, vectors)
        for ep in episodes:
            self.link(ep.id)
        return episodes

    @staticmethod
    def _episode(memory_id: str, d: EpisodeDraft, state: dict[str, Any]) -> Episode:
        return Episode(
            id=memory_id,
            memory_type=MemoryType.EPISODIC,
            content=d.content,
            timestamp=d.timestamp,
            user_id=d.user_id,
            agent_id=d.agent_id,
            session_id=d.session_id,
            importance=d.importance,
            source=d.source,
            tags=d.tags,
            metadata=d.metadata,
            source_ids=d.source_ids,
            key=d.key,
            tier=d.tier,
            participants=d.participants,
            **state,
        )

    def rewrite(self, memory_id: str, draft: EpisodeDraft, old: dict[str, Any]) -> Episode:
        """The episode ``memory_id`` with ``draft``'s fields and ``old``'s retention state
        (the caller stores it and re-links it)."""
        state = {k: old[k] for k in ("stability", "last_access", "access_count")}
        return self._episode(memory_id, draft, state)

    def link(self, memory_id: str) -> None:
        """Index a stored episode and splice it into its session's ``followed_by`` chain."""
        graph = self._ctx.backend.graph
        attrs = graph.node(memory_id)
        if attrs is None:
            return
        self.index(memory_id, attrs)
        if attrs.get("source_ids"):
            self._ctx.link_sources(memory_id, EdgeType.CONSOLIDATES, 0.9)
            return
        seq = self._sessions[self._session_key(attrs)]
        i = seq.position(float(attrs["timestamp"]), memory_id)
        before = seq[i - 1][1] if i > 0 else None
        after = seq[i + 1][1] if i + 1 < len(seq) else None
        if before and after:
            graph.remove_edge(before, after, EdgeType.FOLLOWED_BY)
        if before:
            graph.add_edge(before, memory_id, EdgeType.FOLLOWED_BY, 1.0)
        if after:
            graph.add_edge(memory_id, after, EdgeType.FOLLOWED_BY, 1.0)

    def remove(self, memory_id: str) -> None:
        """Drop an episode from the indexes and bridge its session chain (before deletion)."""
        graph = self._ctx.backend.graph
        attrs = graph.node(memory_id)
        if attrs is None:
            return
        seq = self._sessions.get(self._session_key(attrs)) or TimeLine()
        key = (float(attrs["timestamp"]), memory_id)
        i = seq.position(*key)
        if 0 < i < len(seq) - 1 and seq[i] == key:
            graph.add_edge(seq[i - 1][1], seq[i + 1][1], EdgeType.FOLLOWED_BY, 1.0)
        self.unindex(memory_id, attrs)

    # ------------------------------------------------------------------ reads
    def in_range(self, start: float, end: float) -> list[str]:
        """Ids of episodes with ``start <= timestamp <= end``, oldest first (binary search)."""
        return self._times.between(start, end)

    def session(self, user_id: str | None, agent_id: str | None, session_id: str | None) -> list[str]:
        """Episode ids of one session in time order."""
        chain = self._sessions.get((user_id, agent_id, session_id))
        return chain.ids() if chain is not None else []

    def turns(self, scope: Scope) -> list[str]:
        """Ids of the turns (not consolidated episodes) of every session in ``scope``, in
        time order (write order among equal times)."""
        chains = [seq for key, seq in self._sessions.items() if scope.admits_key(*key)]
        if len(chains) == 1:
            return chains[0].ids()
        return [memory_id for _, memory_id in sorted(k for seq in chains for k in seq)]

    def chains(self, scope: Scope) -> dict[SessionKey, Sequence[tuple[float, str]]]:
        """The turn chain of every session in ``scope``: ``(timestamp, id)`` in time order, by
        ``(user_id, agent_id, session_id)`` (episodes without a session form one chain per
        user and agent). Read-only views: :attr:`version` tells when they changed."""
        return {key: seq for key, seq in self._sessions.items() if seq and scope.admits_key(*key)}

    def neighbours(self, memory_id: str) -> tuple[str | None, str | None]:
        """The episodes just before and just after ``memory_id`` in its session."""
        graph = self._ctx.backend.graph
        before = [u for u, _, _, _ in graph.edges_of(memory_id, EdgeType.FOLLOWED_BY, direction="in")]
        after = [v for _, v, _, _ in graph.edges_of(memory_id, EdgeType.FOLLOWED_BY, direction="out")]
        return (before[0] if before else None, after[0] if after else None)

    def __len__(self) -> int:
        return len(self._times)
