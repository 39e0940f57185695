"""The bound view every LangChain adapter reads and writes through."""

from __future__ import annotations

from ucma_core import Memory, ScopedMemory
from ucma_core.conversation import bind

__all__ = ["MemoryLike", "view_of"]

#: What the adapters accept as their memory.
MemoryLike = Memory | ScopedMemory


def view_of(
    target: MemoryLike,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
) -> ScopedMemory:
    """``target`` bound to one scope (:func:`ucma_core.conversation.bind`): a
    ``session_id`` given with an already bound view picks the session its writes and
    history use; the view's user and agent stay as they are."""
    return bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)
