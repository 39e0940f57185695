"""Binding the conversation helpers to one scope.

Every helper takes a *target*: a :class:`~ucma_core.Memory` plus scope arguments,
or a view already bound with ``Memory.scope(...)``. :func:`bind` turns either into
a bound view, so the helpers read and write through the view and never pass a
scope themselves: what a view refuses (another user's id, a read across users)
they cannot do either.
"""

from __future__ import annotations

from typing import TypeAlias

from ucma_core.conversation.seam import Unset, stated_user
from ucma_core.errors import InvalidInputError
from ucma_core.memory import Memory
from ucma_core.scope import AnyScope, ScopeId
from ucma_core.scoped import ScopedMemory
from ucma_core.validation import check_scope_id

__all__ = ["Target", "bind", "stated_view"]

#: What the conversation helpers accept as their memory.
Target: TypeAlias = "Memory | ScopedMemory"


def bind(
    target: Target,
    *,
    user_id: ScopeId = None,
    agent_id: ScopeId = None,
    session_id: ScopeId = None,
) -> ScopedMemory:
    """The view of ``target`` bound to one scope.

    A :class:`~ucma_core.Memory` is bound to the given ``user_id`` / ``agent_id`` /
    ``session_id``. A bound view is returned as it is: a ``user_id`` or ``agent_id``
    given with it must equal the view's, since nothing may widen a view; a
    ``session_id`` only moves where writes go (a view reads every session of its
    user), so with one the view is rebound to that session.
    :data:`~ucma_core.ANY` is refused: the helpers write, and a write belongs to
    one user.

    Raises:
        InvalidInputError: ``target`` is neither, a scope argument is :data:`ANY` or
            not a str / ``None``, or a user / agent contradicts the bound view.
    """
    user, agent = _one(user_id, "user_id"), _one(agent_id, "agent_id")
    session = _one(session_id, "session_id")
    if isinstance(target, Memory):
        return target.scope(user_id=user, agent_id=agent, session_id=session)
    if isinstance(target, ScopedMemory):
        for what, value, bound in (("user_id", user, target.user_id), ("agent_id", agent, target.agent_id)):
            if value is not None and value != bound:
                raise InvalidInputError(
                    f"{what}={value!r} contradicts the view's {what}={bound!r}; pass the Memory itself "
                    "to bind another scope"
                )
        if session is not None and session != target.session_id:
            # the session only says where writes go (a view reads every session), so this widens nothing
            return target.memory.scope(user_id=target.user_id, agent_id=target.agent_id, session_id=session)
        return target
    raise InvalidInputError(
        f"target must be a Memory or a view from Memory.scope(...), not {type(target).__name__}"
    )


def stated_view(
    target: Target,
    user_id: str | Unset | None,
    *,
    adapter: str,
    agent_id: ScopeId = None,
    session_id: ScopeId = None,
) -> ScopedMemory:
    """The view of an adapter made for one user (a chat memory, a memory block): a view's
    own user when ``user_id`` is left out, else the stated one (see
    :func:`~ucma_core.conversation.stated_user`).

    Raises:
        UserNotStatedError: ``target`` is a :class:`~ucma_core.Memory` and ``user_id`` was
            left out (an app without users passes ``user_id=None``).
        InvalidInputError: as :func:`bind`.
    """
    if isinstance(target, ScopedMemory) and isinstance(user_id, Unset):
        user = target.user_id
    else:
        user = stated_user(user_id, None, adapter=adapter, where="mem.scope(user_id=...) as the memory")
    return bind(target, user_id=user, agent_id=agent_id, session_id=session_id)


def _one(value: ScopeId, what: str) -> str | None:
    if isinstance(value, AnyScope):
        raise InvalidInputError(
            f"{what}=ANY is not allowed here: conversation helpers read and write one scope; "
            "pass a str or None"
        )
    return check_scope_id(value, what)
