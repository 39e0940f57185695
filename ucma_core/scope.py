"""Scope selectors for reads.

Every memory belongs to a user, an agent and a session (each may be unset).
``user_id`` is a hard boundary: a read sees only the memories of the user it
names, and ``user_id=None`` sees only memories stored without a user. Pass
:data:`ANY` to read across users on purpose. ``agent_id`` and ``session_id``
narrow a read when given; ``None`` means any agent / any session.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ANY", "AnyScope", "Scope"]


class AnyScope:
    """Type of :data:`ANY`; there is only one instance."""

    _instance: AnyScope | None = None

    def __new__(cls) -> AnyScope:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ANY"


#: Pass as ``user_id`` (or ``agent_id`` / ``session_id``) to read across that scope.
ANY: Final = AnyScope()

#: What a read accepts for ``user_id`` / ``agent_id`` / ``session_id``.
Scope = str | AnyScope | None
