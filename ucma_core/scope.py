"""Scopes: whose memories a read sees, and the one rule every read and scan follows.

Every memory belongs to a user, an agent and a session (each may be unset). A
:class:`Scope` selects memories by those three fields, with one meaning per
field that every read path uses (``remember``, facts, entities, neighbours,
procedures, lessons, intentions, history, listing, forgetting, consolidation):

============== ============================== ==================== ======================
field          a str                          ``None``             :data:`ANY`
============== ============================== ==================== ======================
``user_id``    only that user's memories      only memories stored every user's memories
                                              without a user
``agent_id``   only that agent's memories     any agent            any agent
``session_id`` only that session's memories   any session          any session
============== ============================== ==================== ======================

``user_id`` is a hard boundary (a read never crosses users unless it says
:data:`ANY`); ``agent_id`` and ``session_id`` only narrow a read when given.

Examples:
    >>> s = Scope.of(user_id="ana")
    >>> s.admits({"user_id": "ana", "agent_id": "bot", "session_id": "s1"})
    True
    >>> s.admits({"user_id": "ben", "agent_id": None, "session_id": None})
    False
    >>> Scope.of(user_id=None).admits({"user_id": "ana"})
    False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ucma_core.validation import check_scope_id

__all__ = ["ANY", "AnyScope", "Scope", "ScopeId"]


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
ScopeId = str | AnyScope | None


def _checked(value: object, what: str) -> str | AnyScope | None:
    return value if isinstance(value, AnyScope) else check_scope_id(value, what)


@dataclass(frozen=True)
class Scope:
    """Which memories a read sees (see the module docstring for the rule)."""

    user_id: str | AnyScope | None = None
    agent_id: str | AnyScope | None = None
    session_id: str | AnyScope | None = None

    @classmethod
    def of(cls, user_id: object = None, agent_id: object = None, session_id: object = None) -> Scope:
        """A validated scope; raises :class:`~ucma_core.errors.InvalidInputError` on a bad id."""
        return cls(
            _checked(user_id, "user_id"), _checked(agent_id, "agent_id"), _checked(session_id, "session_id")
        )

    @property
    def any_user(self) -> bool:
        """True when the read crosses users on purpose."""
        return isinstance(self.user_id, AnyScope)

    @property
    def user(self) -> str | None:
        """The one user this scope is bound to (``None``: memories without a user).

        Raises ``ValueError`` for a scope that crosses users."""
        if isinstance(self.user_id, AnyScope):
            raise ValueError("this scope reads across users")
        return self.user_id

    def exact(self, name: str) -> str | None:
        """The ``agent_id`` / ``session_id`` to match exactly, or ``None`` for any."""
        value = getattr(self, name)
        return None if value is None or isinstance(value, AnyScope) else str(value)

    def admits(self, attrs: Mapping[str, Any]) -> bool:
        """Whether a memory (its graph node, or any mapping with the three fields) is in scope."""
        if not isinstance(self.user_id, AnyScope) and attrs.get("user_id") != self.user_id:
            return False
        agent, session = self.exact("agent_id"), self.exact("session_id")
        if agent is not None and attrs.get("agent_id") != agent:
            return False
        return session is None or attrs.get("session_id") == session

    def admits_key(self, user_id: str | None, agent_id: str | None, session_id: str | None) -> bool:
        """:meth:`admits` for a ``(user, agent, session)`` triple."""
        return self.admits({"user_id": user_id, "agent_id": agent_id, "session_id": session_id})
