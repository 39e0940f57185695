"""Whether a record's Chroma metadata satisfies a ``where`` clause, worked out in Python.

A kept set of ids (:mod:`~ucma_core.storage.wheresets`) stays true through a write of
records that neither were in it nor satisfy its clause. :func:`admits` answers the
second half from the metadata the write sends to Chroma, in three values: ``True``
(Chroma would admit the record), ``False`` (it would not) and ``None`` (not known: a
clause shape or a value type this module does not evaluate exactly, or a key the
metadata does not say). Only ``False`` lets a set stay, so every doubt drops it.

Evaluated exactly: equality (``{key: value}`` and ``{key: {"$eq": value}}``), ``$in``,
``$and`` and ``$or``, on str and bool values compared as Chroma does (a value of another
type is never equal; an int or a float is not known). Metadata given as a whole
record's (``partial=False``) lacks a key only if the record has none, which no
equality admits; a metadata update (``partial=True``) merges its keys into the stored
ones, so a key it does not carry is not known.

Examples:
    >>> admits({"user_id": "ana"}, {"user_id": "bob", "source": "user"})
    False
    >>> admits({"$and": [{"user_id": "ana"}, {"tag:x": True}]}, {"user_id": "ana", "tag:x": True})
    True
    >>> admits({"$and": [{"user_id": "ana"}, {"tag:x": True}]}, {"user_id": "ana"})
    False
    >>> admits({"user_id": "ana"}, {"source": "user"}, partial=True) is None  # the update keeps user_id
    True
    >>> admits({"timestamp": {"$gt": 3.0}}, {"timestamp": 1.0}) is None  # not evaluated here
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["admits", "names"]


def _equal(stored: Any, value: Any) -> bool | None:
    if isinstance(value, (str, bool)) and isinstance(stored, (str, bool, int, float)):
        return type(stored) is type(value) and stored == value  # Chroma: no str/bool/number mix
    return None


def _field(name: str, condition: Any, metadata: Mapping[str, Any], partial: bool) -> bool | None:
    if isinstance(condition, Mapping):
        if len(condition) != 1:
            return None
        ((op, operand),) = condition.items()
        if op == "$eq":
            values: Sequence[Any] = [operand]
        elif op == "$in" and isinstance(operand, (list, tuple)):
            values = operand
        else:
            return None
    else:
        values = [condition]
    if any(not isinstance(v, (str, bool)) for v in values):
        return None
    if name not in metadata:
        return None if partial else False
    return _any(_equal(metadata[name], v) for v in values)


def _any(answers: Any) -> bool | None:
    unknown = False
    for answer in answers:
        if answer is True:
            return True
        unknown |= answer is None
    return None if unknown else False


def _all(answers: Any) -> bool | None:
    unknown = False
    for answer in answers:
        if answer is False:
            return False
        unknown |= answer is None
    return None if unknown else True


def names(where: Mapping[str, Any]) -> set[str] | None:
    """The metadata keys ``where`` reads (``None`` for a shape :func:`admits` does not
    evaluate): an update that sets none of them leaves the clause's answer as it was.

    >>> sorted(names({"$and": [{"user_id": "ana"}, {"$or": [{"tag:a": True}, {"tag:b": True}]}]}))
    ['tag:a', 'tag:b', 'user_id']
    """
    found: set[str] = set()
    for name, condition in where.items():
        if name in ("$and", "$or"):
            if not isinstance(condition, (list, tuple)):
                return None
            for inner in condition:
                more = names(inner) if isinstance(inner, Mapping) else None
                if more is None:
                    return None
                found |= more
        elif name.startswith("$"):
            return None
        else:
            found.add(name)
    return found


def admits(where: Mapping[str, Any], metadata: Mapping[str, Any], *, partial: bool = False) -> bool | None:
    """Whether Chroma would admit a record with ``metadata`` under ``where`` (``None``: not
    known; see the module). ``partial``: ``metadata`` is an update merged into the stored keys."""
    if len(where) != 1:  # several keys: Chroma's implicit $and
        return _all(admits({k: v}, metadata, partial=partial) for k, v in where.items())
    ((name, condition),) = where.items()
    if name in ("$and", "$or"):
        if not isinstance(condition, (list, tuple)) or not condition:
            return None
        if any(not isinstance(c, Mapping) for c in condition):
            return None
        answers = (admits(c, metadata, partial=partial) for c in condition)
        return _all(answers) if name == "$and" else _any(answers)
    if name.startswith("$"):
        return None
    return _field(name, condition, metadata, partial)
