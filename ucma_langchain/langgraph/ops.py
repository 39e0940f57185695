"""Checking Store operations before any of a batch runs.

An op no store could run (a value JSON cannot carry, an unknown filter operator, a
negative limit) refuses its whole batch before anything is written, so the caller
never gets a half-applied batch. Ops LangGraph's stores take in ``batch`` are taken
here too (a put under the root label ``"langgraph"``, which only ``put()`` refuses).

Each check raises :class:`~ucma_core.errors.InvalidInputError` (namespaces:
:class:`~ucma_langchain.langgraph.namespaces.InvalidNamespaceError`) saying what was
wrong, and returns the op with its parts normalised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, SearchOp

from ucma_core.errors import InvalidInputError
from ucma_core.validation import check_scope_id
from ucma_langchain.langgraph import items
from ucma_langchain.langgraph.namespaces import NamespaceScope, check_namespace

__all__ = ["check_op", "check_path", "check_ttl"]


def _count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{what} must be an int >= 0, got {value!r}")
    return value


def _key(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"a Store key must be a str, not {type(value).__name__}")
    return value


def _query(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"query must be a str or None, not {type(value).__name__}")
    return value if value.strip() else None


def _depth(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"max_depth must be an int >= 1 or None, got {value!r}")
    return value


def check_ttl(value: object) -> float | None:
    """A TTL: a positive number of minutes, or ``None`` (no expiry)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InvalidInputError(f"ttl must be a positive number of minutes or None, got {value!r}")
    return float(value)


def check_path(path: object, what: str) -> None:
    """A ``list_namespaces`` prefix or suffix: labels, ``"*"`` matching any one."""
    if path is None:
        return
    if isinstance(path, str) or not isinstance(path, Sequence):
        raise InvalidInputError(f"{what} must be a tuple of labels, not {path!r}")
    check_namespace(tuple(label for label in path if label != "*"), what=what, allow_empty=True)


def _check_index(index: object) -> None:
    if index is None or index is False:
        return
    if (
        isinstance(index, str)
        or not isinstance(index, Sequence)
        or not all(isinstance(p, str) and p for p in index)
    ):
        raise InvalidInputError(f"index must be False, None or a list of str paths, got {index!r}")


def check_op(op: Op, scope_of: Callable[[tuple[str, ...]], NamespaceScope]) -> Op:
    """``op``, checked; ``scope_of`` gives the UCMA scope a written namespace maps to (its ids
    must be usable UCMA scope ids)."""
    if isinstance(op, GetOp):
        return GetOp(check_namespace(op.namespace), _key(op.key), op.refresh_ttl)
    if isinstance(op, PutOp):
        # The reserved root "langgraph" is refused by put() only, as in LangGraph's stores:
        # batch() takes it (LangGraph's own code writes there through batch).
        namespace = check_namespace(op.namespace)
        user, agent = scope_of(namespace)
        check_scope_id(user, f"the user id the namespace rule read from {namespace!r}")
        check_scope_id(agent, f"the agent id the namespace rule read from {namespace!r}")
        value = None if op.value is None else items.check_value(op.value)
        _check_index(op.index)
        return PutOp(namespace, _key(op.key), value, index=op.index, ttl=check_ttl(op.ttl))
    if isinstance(op, SearchOp):
        return SearchOp(
            check_namespace(op.namespace_prefix, what="namespace prefix", allow_empty=True),
            items.check_filter(op.filter) or None,
            _count(op.limit, "limit"),
            _count(op.offset, "offset"),
            _query(op.query),
            op.refresh_ttl,
        )
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            check_path(condition.path, f"{condition.match_type} path")
        return ListNamespacesOp(
            op.match_conditions, _depth(op.max_depth), _count(op.limit, "limit"), _count(op.offset, "offset")
        )
    raise InvalidInputError(f"unknown Store operation {type(op).__name__}")
