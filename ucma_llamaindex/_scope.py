"""The user a LlamaIndex adapter binds: stated, or the view's own."""

from __future__ import annotations

from ucma_core.conversation import Unset, stated_user
from ucma_core.memory import Memory
from ucma_core.scoped import ScopedMemory

__all__ = ["fixed_user"]


def fixed_user(memory: Memory | ScopedMemory, user_id: str | Unset | None, adapter: str) -> str | None:
    """A view's own user when ``user_id`` is left out, else the stated one.

    Raises:
        UserNotStatedError: ``memory`` is a :class:`~ucma_core.Memory` and ``user_id`` was
            left out (an app without users passes ``user_id=None``).
    """
    if isinstance(memory, ScopedMemory) and isinstance(user_id, Unset):
        return memory.user_id
    return stated_user(user_id, None, adapter=adapter, where="mem.scope(user_id=...) as the memory")
