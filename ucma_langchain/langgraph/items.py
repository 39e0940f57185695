"""Store items ↔ UCMA memories: values, indexed text, filters and the stored metadata.

A Store item is one UCMA memory (written with ``Memory.upsert``). Its content is
the text LangGraph would embed (the ``index`` fields of the value, joined by
newlines; the whole value as JSON for ``"$"``), so UCMA's retrieval (dense,
keyword, entity and graph signals) searches exactly that. The item itself lives
in the memory's metadata, under keys no UCMA code uses:

``lg_namespace`` (list of labels), ``lg_key``, ``lg_value`` (``{"json": <the value as
JSON text>}``: text keeps the value's key order, and a nested dict is not indexed
as a filterable field),
``lg_created`` / ``lg_updated`` (epoch seconds), ``lg_indexed`` (whether a query
may find it), and, for an item with a TTL, ``lg_ttl`` (minutes) and
``lg_expires`` (epoch seconds).
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import Item, SearchItem, get_text_at_path, tokenize_path

from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryRecord
from ucma_core.validation import check_depth

__all__ = [
    "CREATED",
    "EXPIRES",
    "INDEXED",
    "KEY",
    "MAX_DEPTH",
    "NAMESPACE",
    "TTL",
    "UPDATED",
    "VALUE",
    "check_filter",
    "check_value",
    "encode_value",
    "field_value",
    "indexed_text",
    "stored_value",
    "to_item",
    "value_matches",
]

NAMESPACE = "lg_namespace"
KEY = "lg_key"
VALUE = "lg_value"
CREATED = "lg_created"
UPDATED = "lg_updated"
INDEXED = "lg_indexed"
TTL = "lg_ttl"
EXPIRES = "lg_expires"

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")

#: How deep a Store value or filter may nest (dicts and lists); deeper ones are refused
#: with an InvalidInputError before any recursive step (JSON encoding, matching) sees them.
MAX_DEPTH = 100


def check_value(value: object) -> dict[str, Any]:
    """A Store value: a dict with str keys that comes back from JSON exactly as given.

    Raises:
        InvalidInputError: a value that is not a dict, nests more than :data:`MAX_DEPTH`
            levels, or holds something JSON cannot carry unchanged (a set, a datetime, a
            tuple, NaN, a non-str key).
    """
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"a Store value must be a dict, not {type(value).__name__}")
    plain = dict(value)
    check_depth(plain, MAX_DEPTH, "a Store value", "; store deep structures flatter or as text")
    try:
        encoded = json.dumps(plain, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(
            f"a Store value must be JSON data (dicts with str keys, lists, str, numbers, bools, None): {e}"
        ) from e
    if json.loads(encoded) != plain:
        raise InvalidInputError(
            "a Store value must come back from JSON unchanged: use lists instead of tuples and str keys"
        )
    return plain


def encode_value(value: Mapping[str, Any]) -> dict[str, str]:
    """How a value is kept in the memory's metadata (see the module docstring)."""
    return {"json": json.dumps(value, ensure_ascii=False)}


def stored_value(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The value a memory's metadata holds, exactly as it was put."""
    value: dict[str, Any] = json.loads(meta[VALUE]["json"])
    return value


def indexed_text(value: Mapping[str, Any], fields: Sequence[str]) -> str:
    """The text LangGraph would embed for ``value`` with these index ``fields``
    (``"$"`` is the whole value as JSON), joined by newlines; ``""`` if none is present."""
    texts: list[str] = []
    for path in fields:
        texts.extend(get_text_at_path(value, "$" if path == "$" else tokenize_path(path)))
    return "\n".join(t for t in texts if t.strip())


def check_filter(filter: object) -> dict[str, Any]:
    """A search ``filter``: a dict of value fields to a value or an operator dict
    (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

    Raises:
        InvalidInputError: a filter that is not a dict, nests more than :data:`MAX_DEPTH`
            levels, or has an unknown operator.
    """
    if filter is None:
        return {}
    if not isinstance(filter, Mapping):
        raise InvalidInputError(f"filter must be a dict of value fields, not {type(filter).__name__}")
    check_depth(filter, MAX_DEPTH, "a Store filter")

    def walk(condition: object, where: str) -> None:
        if isinstance(condition, Mapping):
            for op, operand in condition.items():
                if not isinstance(op, str):
                    raise InvalidInputError(f"filter keys must be str, got {op!r} in {where}")
                if op.startswith("$") and op not in _OPERATORS:
                    known = ", ".join(_OPERATORS)
                    raise InvalidInputError(f"unknown filter operator {op!r} in {where}; use one of {known}")
                walk(operand, f"{where}.{op}")

    for field, condition in filter.items():
        if not isinstance(field, str) or not field:
            raise InvalidInputError(f"filter fields must be non-empty str, got {field!r}")
        walk(condition, field)
    return dict(filter)


def _number(value: object) -> float | None:
    """A number to compare: ints, floats (±inf included), bools and numeric strings."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except (ValueError, OverflowError):
            return None
        return None if math.isnan(number) else number
    return None


def _operator(actual: object, op: str, operand: object) -> bool:
    if op == "$eq":
        return actual == operand
    if op == "$ne":
        return actual != operand
    a, b = _number(actual), _number(operand)
    compare = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}[op]
    if a is not None and b is not None:
        return bool(compare(a, b))
    # two non-numeric strings compare as text, as the SQL stores do
    return isinstance(actual, str) and isinstance(operand, str) and bool(compare(actual, operand))


def _matches(actual: object, condition: object) -> bool:
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            return all(_operator(actual, op, operand) for op, operand in condition.items())
        return isinstance(actual, Mapping) and all(_matches(actual.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(condition)
            and all(_matches(a, c) for a, c in zip(actual, condition, strict=True))
        )
    return actual == condition


def field_value(value: Mapping[str, Any], field: str) -> object:
    """The value a filter ``field`` names: the top-level key if the value has it, else a
    dotted path into nested dicts (``"user.access_level"``), as LangGraph's SQL stores read
    it; ``None`` when absent.

    Examples:
        >>> field_value({"user": {"access_level": 3}}, "user.access_level")
        3
        >>> field_value({"a.b": 1, "a": {"b": 2}}, "a.b"), field_value({"a": 1}, "a.b")
        (1, None)
    """
    if field in value or "." not in field:
        return value.get(field)
    current: object = value
    for part in field.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def value_matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """Whether a value passes a search filter, as LangGraph's stores read it: a field is a
    top-level key or a dotted path (:func:`field_value`); a plain value is equality (nested
    dicts match field by field, lists element by element), an operator dict compares
    (``$gt`` … numerically, ``±inf`` included; two non-numeric strings as text; a missing
    field, ``None`` or NaN does not match)."""
    return all(_matches(field_value(value, field), condition) for field, condition in filter.items())


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


def to_item(record: MemoryRecord, *, score: float | None = None, search: bool = False) -> Item:
    """The Store item (or search item) a memory holds."""
    meta = record.metadata
    fields = {
        "namespace": tuple(meta[NAMESPACE]),
        "key": meta[KEY],
        "value": stored_value(meta),
        "created_at": _when(float(meta[CREATED])),
        "updated_at": _when(float(meta[UPDATED])),
    }
    if search:
        return SearchItem(score=score, **fields)
    return Item(**fields)
