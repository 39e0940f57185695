"""Prospective memory: intentions that fire when matching input arrives.

An intention has trigger phrases. When an observation in the same user scope
contains any of them (case-insensitive, on word boundaries), the intention moves
from ``pending`` to ``triggered`` and is linked to the observation that fired it;
the application acts on it and marks it ``resolved``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ucma_core.records import Intention, IntentionStatus, MemoryType
from ucma_core.storage.graph import EdgeType
from ucma_core.stores.context import StoreContext, new_id

__all__ = ["ProspectiveStore", "trigger_matches"]


def trigger_matches(triggers: list[str] | tuple[str, ...], content: str) -> bool:
    text = content.lower()
    return any(re.search(r"(?<!\w)" + re.escape(phrase.lower()) + r"(?!\w)", text) for phrase in triggers)


class ProspectiveStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._pending: dict[str, Mapping[str, Any]] = {}  # id -> graph record (live)

    def index(self, memory_id: str, attrs: Mapping[str, Any]) -> None:
        if attrs.get("status") == IntentionStatus.PENDING.value:
            self._pending[memory_id] = attrs
        else:
            self._pending.pop(memory_id, None)

    def unindex(self, memory_id: str) -> None:
        self._pending.pop(memory_id, None)

    def add(
        self,
        *,
        description: str,
        trigger: tuple[str, ...],
        action: str | None,
        priority: float,
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        source: str,
        metadata: dict[str, Any],
    ) -> Intention:
        ctx = self._ctx
        now = ctx.now()
        intention = Intention(
            id=new_id(),
            memory_type=MemoryType.PROSPECTIVE,
            content=description if not action else f"{description} (then: {action})",
            timestamp=now,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            importance=priority,
            source=source,
            tags=(),
            metadata=metadata,
            source_ids=(),
            **ctx.fresh_state(priority, now),
            description=description,
            trigger=trigger,
            action=action,
            priority=priority,
        )
        ctx.backend.insert([intention], ctx.embedder.embed([intention.content]))
        self.link(intention.id)
        return intention

    def link(self, memory_id: str) -> None:
        attrs = self._ctx.backend.graph.node(memory_id)
        if attrs is not None:
            self.index(memory_id, attrs)

    def fire(self, episode_id: str, content: str, user_id: str | None, agent_id: str | None) -> list[str]:
        """Trigger every pending intention in scope whose phrases occur in ``content``."""
        fired = []
        for memory_id, attrs in list(self._pending.items()):
            if attrs.get("user_id") != user_id:
                continue
            if attrs.get("agent_id") is not None and attrs.get("agent_id") != agent_id:
                continue
            if trigger_matches(attrs.get("trigger", []), content):
                self._ctx.backend.set_state(
                    memory_id,
                    status=IntentionStatus.TRIGGERED.value,
                    triggered_at=self._ctx.now(),
                    triggered_by=episode_id,
                )
                self._ctx.backend.graph.add_edge(memory_id, episode_id, EdgeType.TRIGGERED_BY, 1.0)
                del self._pending[memory_id]
                fired.append(memory_id)
        return fired

    def resolve(self, memory_id: str) -> None:
        self._ctx.backend.set_state(memory_id, status=IntentionStatus.RESOLVED.value)
        self._pending.pop(memory_id, None)
