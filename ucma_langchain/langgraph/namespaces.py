"""Store namespaces ↔ UCMA scopes and tags.

A LangGraph Store namespace is a tuple of labels, such as ``("memories", "ana")``
or ``("users", "ana", "prefs")``. :class:`NamespaceRule` says which label (if any)
is the UCMA user (and agent) the item belongs to, so a Store item is one of that
user's memories: the user's reads find it, ``Memory.forget_user`` deletes it, and
another user's reads never see it. The default rule:

1. a label right after ``"users"`` or ``"user"`` is the user (``("users", "ana", …)``),
   and a label right after ``"agents"`` or ``"agent"`` is the agent;
2. otherwise the second label of a namespace with two or more labels is the user:
   LangMem's default namespace ``("memories", "{langgraph_user_id}")`` and
   ``("memories", "ana")`` both belong to ``ana``;
3. a one-label namespace (``("docs",)``) belongs to no user.

Keep one rule per memory folder: an item is found again under the scope it was
written with.

Each item also carries one tag per namespace prefix (a hash of the prefix, so tags
stay short), which is how a search of ``("users",)`` finds the items of
``("users", "ana", "prefs")``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from langgraph.store.base import InvalidNamespaceError as LangGraphNamespaceError

from ucma_core.errors import InvalidInputError

__all__ = [
    "STORE_TAG",
    "InvalidNamespaceError",
    "NamespaceRule",
    "NamespaceScope",
    "check_namespace",
    "item_key",
    "prefix_tag",
    "prefix_tags",
]

#: Tag carried by every Store item (the empty prefix: the whole Store).
STORE_TAG = "lg-store"


class InvalidNamespaceError(InvalidInputError, LangGraphNamespaceError):
    """A namespace that is not a tuple of non-empty str labels (also LangGraph's
    ``InvalidNamespaceError``, so code written for any LangGraph store catches it)."""


class NamespaceScope(NamedTuple):
    """The UCMA user and agent a namespace belongs to (``None``: none)."""

    user_id: str | None
    agent_id: str | None


@dataclass(frozen=True)
class NamespaceRule:
    """Which namespace labels name the UCMA user and agent of a Store item.

    Args:
        user_markers: a label right after one of these is the user.
        agent_markers: a label right after one of these is the agent.
        user_index: without a marker, the label at this position is the user (when
            the namespace is longer than this index); ``None``: only markers count.

    Examples:
        >>> rule = NamespaceRule()
        >>> rule(("memories", "ana")), rule(("users", "bo", "prefs")), rule(("docs",))
        (NamespaceScope(user_id='ana', agent_id=None), NamespaceScope(user_id='bo', agent_id=None), \
NamespaceScope(user_id=None, agent_id=None))
        >>> NamespaceRule(user_index=0)(("ana", "memories"))
        NamespaceScope(user_id='ana', agent_id=None)
    """

    user_markers: tuple[str, ...] = ("users", "user")
    agent_markers: tuple[str, ...] = ("agents", "agent")
    user_index: int | None = 1

    def __call__(self, namespace: tuple[str, ...]) -> NamespaceScope:
        user = _after(namespace, self.user_markers)
        if user is None and self.user_index is not None and len(namespace) > self.user_index >= 0:
            candidate = namespace[self.user_index]
            user = None if candidate in self.user_markers + self.agent_markers else candidate
        return NamespaceScope(user, _after(namespace, self.agent_markers))


def _after(namespace: tuple[str, ...], markers: tuple[str, ...]) -> str | None:
    for n, label in enumerate(namespace[:-1]):
        if label in markers:
            return namespace[n + 1]
    return None


#: What UCMAStore accepts as a namespace rule: any callable from namespace to scope.
ScopeRule = Callable[[tuple[str, ...]], NamespaceScope | tuple[str | None, str | None]]


def check_namespace(
    namespace: object, *, what: str = "namespace", allow_empty: bool = False, writing: bool = False
) -> tuple[str, ...]:
    """A namespace as a tuple of non-empty str labels without ``.`` or NUL (and, for a
    write, not under LangGraph's reserved root label ``"langgraph"``).

    Raises:
        InvalidNamespaceError: saying which label is wrong and why.
    """
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise InvalidNamespaceError(
            f"{what} must be a tuple of str labels such as ('memories', 'ana'), not {namespace!r}"
        )
    labels = tuple(namespace)
    if not labels and not allow_empty:
        raise InvalidNamespaceError(f"{what} is empty; give at least one label, e.g. ('memories',)")
    for n, label in enumerate(labels):
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"{what} label {n} must be a str, not {type(label).__name__} ({label!r}) in {labels!r}"
            )
        if not label:
            raise InvalidNamespaceError(f"{what} label {n} is an empty string in {labels!r}")
        if "." in label or "\x00" in label:
            raise InvalidNamespaceError(f"{what} label {label!r} contains '.' or a NUL character")
    if writing and labels[0] == "langgraph":
        raise InvalidNamespaceError(f"{what} {labels!r} starts with 'langgraph', a label LangGraph reserves")
    return labels


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()[:32]


def prefix_tag(prefix: Sequence[str]) -> str:
    """The tag carried by every item whose namespace starts with ``prefix``."""
    return _prefix_tag(tuple(prefix))


@functools.lru_cache(maxsize=4096)
def _prefix_tag(prefix: tuple[str, ...]) -> str:
    # the same few namespaces recur on every write of a batch: each tag is worked out once
    return f"lg-ns:{_digest(list(prefix))}" if prefix else STORE_TAG


def prefix_tags(namespace: Sequence[str]) -> list[str]:
    """The tags of an item in ``namespace``: the whole Store's, then one per prefix."""
    return [prefix_tag(namespace[:n]) for n in range(len(namespace) + 1)]


def item_key(namespace: Sequence[str], key: str) -> str:
    """The UCMA idempotency key of the item ``key`` in ``namespace``."""
    return f"lg-item:{_digest([list(namespace), key])}"
