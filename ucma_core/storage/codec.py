"""Records ⇄ Chroma metadata and graph-node attributes.

A memory is split in two places:

* Chroma holds the text, the vector and every field that never changes: the ones
  reads filter on as scalar keys (type, scope, time, source, and one boolean key
  per tag and participant so filters run inside Chroma), the rest as one JSON
  string.
* The graph node holds the scope, time and every field that changes after the
  write (importance, retention state, confidence, status…). The node is the truth
  for those; Chroma keeps their first values so a node lost in a crash can be
  rebuilt from Chroma alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from ucma_core.errors import CorruptStoreError
from ucma_core.records import (
    Episode,
    Fact,
    Intention,
    Learning,
    MemoryRecord,
    MemoryType,
    Procedure,
)

__all__ = [
    "RECORD_CLASSES",
    "decode",
    "filterable_metadata",
    "metadata_key",
    "node_attrs",
    "participant_key",
    "scope_value",
    "tag_key",
    "to_metadata",
]

RECORD_CLASSES: dict[MemoryType, type[MemoryRecord]] = {
    MemoryType.EPISODIC: Episode,
    MemoryType.SEMANTIC: Fact,
    MemoryType.PROCEDURAL: Procedure,
    MemoryType.LEARNING: Learning,
    MemoryType.PROSPECTIVE: Intention,
}

#: Fields kept on the graph node for every memory (the scope and clock fields let
#: indexes be rebuilt from the graph without reading Chroma).
_COMMON_NODE_FIELDS = (
    "user_id",
    "agent_id",
    "session_id",
    "timestamp",
    "importance",
    "source",
    "stability",
    "last_access",
    "access_count",
    "source_ids",
)
_NODE_FIELDS: dict[type[MemoryRecord], tuple[str, ...]] = {
    Episode: ("tier", "summary", "consolidated_into", "participants"),
    Fact: ("subject", "predicate", "object", "confidence", "valid_from", "valid_to", "superseded_by"),
    Procedure: ("name", "trigger_tags", "status", "success_rate", "executions", "usage_count"),
    Learning: ("confidence", "validated", "successes", "failures"),
    Intention: ("status", "trigger", "priority", "triggered_at", "triggered_by"),
}
_SKIP_IN_CHROMA = {"id", "content", "metadata"}
_SCOPE_FIELDS = ("user_id", "agent_id", "session_id")


def scope_value(value: str | None) -> str:
    """How a scope id is stored in Chroma (``None`` becomes ``""``)."""
    return value or ""


def _hashed(prefix: str, text: str) -> str:
    # Chroma records every metadata key it has seen in the collection's schema, where a
    # deletion cannot reach it; hashing keeps a forgotten user's words out of that list.
    return prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def tag_key(tag: str) -> str:
    """The boolean Chroma metadata key that marks a memory as carrying ``tag``."""
    return _hashed("tag:", tag)


def metadata_key(name: str) -> str:
    """The Chroma metadata key that holds the caller's top-level metadata value ``name``
    (str, int, float and bool values are stored there too, so reads can filter on them)."""
    return _hashed("meta:", name)


def participant_key(name: str) -> str:
    """The boolean Chroma metadata key that marks ``name`` (case-insensitive) as a participant."""
    return _hashed("participant:", name.lower())


_HINTS: dict[str, dict[str, Any]] = {}


def _hints(cls: type[MemoryRecord]) -> dict[str, Any]:
    if cls.__name__ not in _HINTS:
        _HINTS[cls.__name__] = typing.get_type_hints(cls)
    return _HINTS[cls.__name__]


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


def to_metadata(record: MemoryRecord) -> dict[str, str | int | float | bool]:
    """Chroma metadata for ``record``: the fields reads filter on as their own keys (type,
    scope, time, source, one boolean key per tag and participant), everything else in
    one JSON string (Chroma's write cost grows with the number of keys)."""
    meta: dict[str, str | int | float | bool] = {
        "memory_type": record.memory_type.value,
        "timestamp": record.timestamp,
        "source": record.source,
    }
    rest: dict[str, Any] = {"metadata": record.metadata}
    for f in dataclasses.fields(record):
        if f.name in _SKIP_IN_CHROMA or f.name in meta:
            continue
        value = getattr(record, f.name)
        if f.name in _SCOPE_FIELDS:
            meta[f.name] = scope_value(value)
        elif value is not None:
            rest[f.name] = _plain(value)
    meta["record"] = json.dumps(rest, ensure_ascii=False, allow_nan=False, sort_keys=True)
    for tag in record.tags:
        meta[tag_key(tag)] = True
    if isinstance(record, Episode):
        for name in record.participants:
            meta[participant_key(name)] = True
    meta.update(filterable_metadata(record.metadata))
    return meta


def filterable_metadata(metadata: dict[str, Any]) -> dict[str, str | int | float | bool]:
    """The caller's top-level scalar metadata values under their :func:`metadata_key`."""
    return {metadata_key(k): v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))}


def node_attrs(record: MemoryRecord) -> dict[str, Any]:
    """The graph-node attributes for ``record``: its type plus the mutable fields."""
    attrs: dict[str, Any] = {"kind": "memory", "memory_type": record.memory_type.value}
    for name in _COMMON_NODE_FIELDS + _NODE_FIELDS[type(record)]:
        attrs[name] = _plain(getattr(record, name))
    if record.key is not None:  # only keyed memories carry one (most have none)
        attrs["key"] = record.key
    return attrs


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(json.loads(value) if isinstance(value, str) else value)


@cache
def _converter(hint: Any) -> Any:
    """The function that turns a stored value into a field of type ``hint`` (worked out once)."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        return _tuple
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _converter(inner[0]) if inner else (lambda v: v)
    if isinstance(hint, type) and issubclass(hint, (Enum, float, int, bool)):
        return hint
    return lambda v: v


def _convert(hint: Any, value: Any) -> Any:
    return None if value is None else _converter(hint)(value)


def decode(
    memory_id: str, document: str, metadata: dict[str, Any], node: dict[str, Any] | None
) -> MemoryRecord:
    """Rebuild a record from its Chroma row, overlaid with its graph node (if any)."""
    try:
        mtype = MemoryType(metadata["memory_type"])
        cls = RECORD_CLASSES[mtype]
        hints = _hints(cls)
        packed = json.loads(str(metadata.get("record", "{}")))
        metadata = {**metadata, **packed}
        values: dict[str, Any] = {
            "id": memory_id,
            "memory_type": mtype,
            "content": document,
            "metadata": packed.get("metadata", {}),
        }
        for f in dataclasses.fields(cls):
            if f.name in values:
                continue
            raw = metadata.get(f.name)
            if node is not None and f.name in node:
                raw = node[f.name]
            if f.name in _SCOPE_FIELDS:
                values[f.name] = raw or None
            elif raw is None:
                if f.default is not dataclasses.MISSING:
                    values[f.name] = f.default
                elif f.default_factory is not dataclasses.MISSING:
                    values[f.name] = f.default_factory()
                else:
                    values[f.name] = () if typing.get_origin(hints[f.name]) is tuple else None
            else:
                values[f.name] = _convert(hints[f.name], raw)
        return cls(**values)
    except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
        raise CorruptStoreError(f"stored record {memory_id!r} cannot be decoded: {e}") from e
