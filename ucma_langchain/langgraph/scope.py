"""Which UCMA scope a LangGraph run writes to and reads from.

A run names its thread, its user and (optionally) its agent in
``config["configurable"]`` or in the run's context (``context_schema``);
:class:`ScopeKeys` says which keys mean what. The default maps
``thread_id`` → ``session_id``, ``user_id`` → ``user_id`` and ``agent_id`` →
``agent_id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ucma_core.errors import InvalidInputError

__all__ = ["RunScope", "ScopeKeys", "check_thread_id", "scope_from_config"]


class RunScope(NamedTuple):
    """The UCMA scope of one run: ``None`` where the run names none."""

    user_id: str | None
    agent_id: str | None
    session_id: str | None


@dataclass(frozen=True)
class ScopeKeys:
    """The ``configurable`` (or context) keys that carry each UCMA scope.

    Set a field to ``None`` to never read that scope from the run.

    Examples:
        >>> keys = ScopeKeys(user_id="tenant_user", agent_id="assistant_id")
        >>> scope_from_config({"configurable": {"thread_id": "t1", "tenant_user": "ana"}}, keys)
        RunScope(user_id='ana', agent_id=None, session_id='t1')
    """

    user_id: str | None = "user_id"
    agent_id: str | None = "agent_id"
    session_id: str | None = "thread_id"


def check_thread_id(value: object) -> str:
    """A thread id must be a non-empty str (LangGraph stores it as text)."""
    if not isinstance(value, str):
        raise InvalidInputError(
            f"thread_id must be a str, not {type(value).__name__} ({value!r}); "
            'pass {"configurable": {"thread_id": str(...)}}'
        )
    if not value:
        raise InvalidInputError("thread_id is empty; give each conversation thread a non-empty id")
    return value


def _read(sources: tuple[Mapping[str, Any] | object, ...], key: str | None) -> str | None:
    if key is None:
        return None
    for source in sources:
        value = source.get(key) if isinstance(source, Mapping) else getattr(source, key, None)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise InvalidInputError(f"run scope key {key!r} must be a non-empty str, not {value!r}")
        return value
    return None


def scope_from_config(
    config: Mapping[str, Any] | None, keys: ScopeKeys | None = None, *, context: object = None
) -> RunScope:
    """The run's scope from its context (checked first) and ``config["configurable"]``.

    Raises:
        InvalidInputError: a scope value that is not a non-empty str (a ``thread_id``
            that is an int, for example).
    """
    keys = keys or ScopeKeys()
    configurable = (config or {}).get("configurable") or {}
    sources: tuple[Mapping[str, Any] | object, ...] = (
        (context, configurable) if context is not None else (configurable,)
    )
    if keys.session_id == "thread_id" and configurable.get("thread_id") is not None:
        check_thread_id(configurable["thread_id"])
    return RunScope(
        user_id=_read(sources, keys.user_id),
        agent_id=_read(sources, keys.agent_id),
        session_id=_read(sources, keys.session_id),
    )
