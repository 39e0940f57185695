"""What a read may return: a scope plus filters, as a Chroma ``where`` clause and as a
check on graph nodes and stored rows.

``metadata`` filters the caller's own top-level metadata values: each key maps to a
scalar (equality) or to an operator dict (``$eq``, ``$ne``, ``$gt``, ``$gte``,
``$lt``, ``$lte``, ``$in``, ``$nin``); several keys must all hold. Values are stored
under keyed-hash Chroma keys named by the folder's
:class:`~ucma_core.storage.codec.ChromaKeys`, so the filter runs inside Chroma for
dense search and in Python for the other candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryType, Source
from ucma_core.scope import AnyScope, Scope
from ucma_core.storage.codec import ChromaKeys, scope_value

__all__ = ["Filters", "check_metadata_filter", "metadata_matches"]

Scalar = str | int | float | bool
#: A checked metadata filter: ``((key, operator, operand), ...)``.
MetadataFilter = tuple[tuple[str, str, Any], ...]

_COMPARE = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_MEMBER = ("$in", "$nin")


def _scalar(value: object, where: str) -> Scalar:
    if not isinstance(value, (str, int, float, bool)):
        raise InvalidInputError(f"{where} must be a str, int, float or bool, not {type(value).__name__}")
    return value


def check_metadata_filter(value: object) -> MetadataFilter:
    """Validate a metadata filter mapping; raise :class:`InvalidInputError` with what was wrong."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"metadata_filter must be a dict, not {type(value).__name__}")
    out: list[tuple[str, str, Any]] = []
    for key, condition in value.items():
        if not isinstance(key, str) or not key:
            raise InvalidInputError(f"metadata_filter keys must be non-empty str, got {key!r}")
        if not isinstance(condition, Mapping):
            out.append((key, "$eq", _scalar(condition, f"metadata_filter[{key!r}]")))
            continue
        if not condition:
            raise InvalidInputError(f"metadata_filter[{key!r}] is an empty operator dict")
        for op, operand in condition.items():
            where = f"metadata_filter[{key!r}][{op!r}]"
            if op in _COMPARE:
                out.append((key, op, _scalar(operand, where)))
            elif op in _MEMBER:
                if isinstance(operand, (str, bytes)) or not isinstance(operand, Sequence) or not operand:
                    raise InvalidInputError(f"{where} must be a non-empty list of scalars")
                out.append((key, op, tuple(_scalar(v, where) for v in operand)))
            else:
                known = ", ".join(_COMPARE + _MEMBER)
                raise InvalidInputError(f"unknown metadata_filter operator {op!r}; expected one of: {known}")
    return tuple(out)


def _holds(actual: object, op: str, operand: Any) -> bool:
    if op == "$eq":
        if _numbers(actual, operand):
            return bool(actual == operand)
        return type(actual) is type(operand) and bool(actual == operand)
    if op == "$ne":
        return not _holds(actual, "$eq", operand)
    if op == "$in":
        return any(_holds(actual, "$eq", v) for v in operand)
    if op == "$nin":
        return not any(_holds(actual, "$eq", v) for v in operand)
    if not _numbers(actual, operand):
        return False
    # int and float compare exactly as they are: float() of an int past 1e308 overflows
    a, b = actual, operand
    return bool({"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op])


def _numbers(a: object, b: object) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def metadata_matches(metadata: Mapping[str, Any], conditions: MetadataFilter) -> bool:
    """Whether a record's own metadata satisfies every condition (missing keys fail, but
    ``$ne`` / ``$nin`` hold for them)."""
    return all(_holds(metadata.get(key), op, operand) for key, op, operand in conditions)


def _chroma_clause(keys: ChromaKeys, key: str, op: str, operand: Any) -> dict[str, Any]:
    operand = list(operand) if op in _MEMBER else operand
    return {keys.metadata(key): {op: operand}}


@cache
def _observed(source: str) -> bool:
    return Source(source).observed


@dataclass(frozen=True)
class Filters:
    """A scope and the filters a search or listing applies."""

    scope: Scope = field(default_factory=Scope)
    memory_types: tuple[MemoryType, ...] = ()
    time_range: tuple[float, float] | None = None
    tags: tuple[str, ...] = ()
    #: Only memories observed from the user, tools or the environment (no generated text).
    observed_only: bool = False
    metadata: MetadataFilter = ()

    @property
    def user_id(self) -> str | AnyScope | None:
        return self.scope.user_id

    @property
    def any_user(self) -> bool:
        return self.scope.any_user

    def exact(self, name: str) -> str | None:
        """The ``agent_id`` / ``session_id`` to match exactly, or ``None`` for any."""
        return self.scope.exact(name)

    def where(self, keys: ChromaKeys) -> dict[str, Any] | None:
        """The Chroma ``where`` clause (tag and metadata keys named by the folder's ``keys``)."""
        clauses: list[dict[str, Any]] = []
        if not self.scope.any_user:
            clauses.append({"user_id": scope_value(self.scope.user)})
        for name in ("agent_id", "session_id"):
            value = self.exact(name)
            if value is not None:
                clauses.append({name: value})
        if self.memory_types and len(self.memory_types) < len(MemoryType):
            types: Sequence[str] = [t.value for t in self.memory_types]
            clauses.append(
                {"memory_type": types[0]} if len(types) == 1 else {"memory_type": {"$in": list(types)}}
            )
        if self.time_range is not None:
            clauses.append({"timestamp": {"$gte": self.time_range[0]}})
            clauses.append({"timestamp": {"$lte": self.time_range[1]}})
        if self.observed_only:
            clauses.append({"source": {"$in": [s.value for s in Source if s.observed]}})
        if self.tags:
            tag_clauses = [{keys.tag(t): True} for t in self.tags]
            clauses.append(tag_clauses[0] if len(tag_clauses) == 1 else {"$or": tag_clauses})
        clauses.extend(_chroma_clause(keys, *c) for c in self.metadata)
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    @cached_property
    def _admission(self) -> tuple[tuple[tuple[str, str | None], ...], frozenset[str]]:
        """What :meth:`admits` compares, read once: the ``(field, value)`` pairs a node must
        have (:meth:`Scope.admits`) and the memory type values admitted (empty: any)."""
        scope = self.scope
        pairs: list[tuple[str, str | None]] = []
        if not isinstance(scope.user_id, AnyScope):
            pairs.append(("user_id", scope.user_id))
        for name in ("agent_id", "session_id"):
            value = scope.exact(name)
            if value is not None:
                pairs.append((name, value))
        return tuple(pairs), frozenset(t.value for t in self.memory_types)

    def admits(self, attrs: Mapping[str, Any]) -> bool:
        """Whether a graph node passes the scope, type, time and source filters (tags and
        metadata live in the stored row: see :meth:`admits_row`)."""
        pairs, types = self._admission
        for name, value in pairs:  # the scope, as :meth:`Scope.admits`
            if attrs.get(name) != value:
                return False
        if types and attrs.get("memory_type") not in types:
            return False
        if self.time_range is not None:
            ts = float(attrs.get("timestamp", 0.0))
            if not self.time_range[0] <= ts <= self.time_range[1]:
                return False
        return not self.observed_only or _observed(attrs.get("source", "system"))

    @property
    def needs_row(self) -> bool:
        """Whether :meth:`admits_row` has anything to check."""
        return bool(self.tags or self.metadata)

    def admits_row(self, stored: Mapping[str, Any], keys: ChromaKeys) -> bool:
        """Tags (any of them) and the metadata filter, checked on a record's stored Chroma
        fields (keys named by ``keys``) as Chroma's ``where`` would."""
        if self.tags and not any(keys.tag(t) in stored for t in self.tags):
            return False
        values = {key: stored.get(keys.metadata(key)) for key, _, _ in self.metadata}
        return metadata_matches(values, self.metadata)
