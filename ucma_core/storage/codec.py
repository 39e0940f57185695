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
import functools
import hashlib
import hmac
import json
import types
import typing
from collections.abc import Callable, Mapping
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
    "KEY_PREFIXES",
    "RECORD_CLASSES",
    "UNSALTED",
    "ChromaKeys",
    "decode",
    "filterable_metadata",
    "metadata_key",
    "node_attrs",
    "participant_key",
    "rekey",
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


#: The prefixes of the keys :class:`ChromaKeys` names (nothing else in a row starts with one).
KEY_PREFIXES = ("tag:", "participant:", "meta:")


_KNOWN_KEYS = 4096  # keys each ChromaKeys remembers


class ChromaKeys:
    """How one folder names the Chroma metadata keys of tags, participants and the caller's
    metadata values.

    Chroma records every metadata key it has seen in the collection's schema, where a
    deletion cannot reach it, so the words are never used as keys: each key is a keyed
    hash (HMAC-SHA-256) of the word under the folder's own random secret (kept in
    ``ucma.json``), so a dictionary of likely names does not reveal them from Chroma's
    files alone. ``secret=None`` gives the plain SHA-256 keys of folders written before
    the secret existed (they are re-keyed when opened).

    Examples:
        >>> keys = ChromaKeys(bytes(32))
        >>> keys.tag("health").startswith("tag:") and keys.tag("health") != tag_key("health")
        True
        >>> keys.participant("Ana") == keys.participant("ana")
        True
        >>> ChromaKeys(None).metadata("team") == metadata_key("team")
        True
    """

    __slots__ = ("_known", "_mac")

    def __init__(self, secret: bytes | None) -> None:
        self._mac = None if secret is None else hmac.new(secret, digestmod=hashlib.sha256)
        # the same few tags, participants and metadata names recur on every write: each
        # key is worked out once (a bounded map, emptied when full)
        self._known: dict[tuple[str, str], str] = {}

    @classmethod
    def from_hex(cls, secret: str | None) -> ChromaKeys:
        """The keys for a manifest's hex ``key_secret`` (``None``: the unsalted keys)."""
        return cls(None if secret is None else bytes.fromhex(secret))

    def _hashed(self, prefix: str, text: str) -> str:
        known = self._known.get((prefix, text))
        if known is not None:
            return known
        if self._mac is None:
            key = prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
        else:
            mac = self._mac.copy()
            mac.update((prefix + text).encode("utf-8"))
            key = prefix + mac.hexdigest()[:24]
        if len(self._known) >= _KNOWN_KEYS:
            self._known.clear()
        self._known[prefix, text] = key
        return key

    def tag(self, tag: str) -> str:
        """The boolean key that marks a memory as carrying ``tag``."""
        return self._hashed("tag:", tag)

    def metadata(self, name: str) -> str:
        """The key that holds the caller's top-level metadata value ``name`` (str, int,
        float and bool values are stored there too, so reads can filter on them)."""
        return self._hashed("meta:", name)

    def participant(self, name: str) -> str:
        """The boolean key that marks ``name`` (case-insensitive) as a participant."""
        return self._hashed("participant:", name.lower())


#: The keys of folders written before each folder had its own secret.
UNSALTED = ChromaKeys(None)


def tag_key(tag: str) -> str:
    """The unsalted key of ``tag`` (folders from before per-folder secrets): see :class:`ChromaKeys`."""
    return UNSALTED.tag(tag)


def metadata_key(name: str) -> str:
    """The unsalted key of metadata value ``name``: see :class:`ChromaKeys`."""
    return UNSALTED.metadata(name)


def participant_key(name: str) -> str:
    """The unsalted key of participant ``name``: see :class:`ChromaKeys`."""
    return UNSALTED.participant(name)


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


def to_metadata(record: MemoryRecord, keys: ChromaKeys) -> dict[str, str | int | float | bool]:
    """Chroma metadata for ``record``: the fields reads filter on as their own keys (type,
    scope, time, source, one boolean key per tag and participant, named by ``keys``),
    everything else in one JSON string (Chroma's write cost grows with the number of keys)."""
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
            # "" is how a missing user is filtered on; a missing agent or session is never
            # filtered on, so it gets no key (each key costs Chroma time on every write)
            if value is not None or f.name == "user_id":
                meta[f.name] = scope_value(value)
        elif value is not None:
            rest[f.name] = _plain(value)
    meta["record"] = json.dumps(rest, ensure_ascii=False, allow_nan=False, sort_keys=True)
    meta.update(_keyed(record, keys))
    return meta


def _keyed(record: MemoryRecord, keys: ChromaKeys) -> dict[str, str | int | float | bool]:
    out: dict[str, str | int | float | bool] = {keys.tag(tag): True for tag in record.tags}
    if isinstance(record, Episode):
        out.update({keys.participant(name): True for name in record.participants})
    out.update(filterable_metadata(record.metadata, keys))
    return out


def filterable_metadata(metadata: dict[str, Any], keys: ChromaKeys) -> dict[str, str | int | float | bool]:
    """The caller's top-level scalar metadata values under their :meth:`ChromaKeys.metadata` key."""
    return {keys.metadata(k): v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))}


def rekey(
    memory_id: str, document: str, stored: dict[str, Any], keys: ChromaKeys
) -> dict[str, str | int | float | bool]:
    """A record's stored Chroma fields with its tag, participant and metadata keys named by
    ``keys`` instead (worked out again from the record's own fields, whatever named them
    before)."""
    kept = {k: v for k, v in stored.items() if not k.startswith(KEY_PREFIXES)}
    return {**kept, **_keyed(decode(memory_id, document, stored, None), keys)}


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


@cache
def _plan(mtype: MemoryType) -> tuple[tuple[str, bool, Callable[[], Any], Callable[[Any], Any]], ...]:
    """For each field of the record class of ``mtype``: its name, whether it is a scope
    field, the value of a missing one and the converter of a stored one (worked out once)."""
    cls = RECORD_CLASSES[mtype]
    hints = _hints(cls)
    plan = []
    for f in dataclasses.fields(cls):
        empty: Callable[[], Any]
        if f.default is not dataclasses.MISSING:
            empty = functools.partial(_same, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            empty = f.default_factory
        elif typing.get_origin(hints[f.name]) is tuple:
            empty = tuple
        else:
            empty = functools.partial(_same, None)
        plan.append((f.name, f.name in _SCOPE_FIELDS, empty, _converter(hints[f.name])))
    return tuple(plan)


def _same(value: Any) -> Any:
    return value


#: A field a record's graph node does not hold.
_ABSENT: Any = object()


def _absent(name: str, default: Any) -> Any:
    return default


def decode(
    memory_id: str, document: str, metadata: dict[str, Any], node: Mapping[str, Any] | None
) -> MemoryRecord:
    """Rebuild a record from its Chroma row, overlaid with its graph node (if any)."""
    try:
        mtype = MemoryType(metadata["memory_type"])
        cls = RECORD_CLASSES[mtype]
        packed = json.loads(str(metadata.get("record", "{}")))
        values: dict[str, Any] = {
            "id": memory_id,
            "memory_type": mtype,
            "content": document,
            "metadata": packed.get("metadata", {}),
        }
        read = node.get if node is not None else _absent
        for name, scope, empty, convert in _plan(mtype):
            if name in values:
                continue
            raw = read(name, _ABSENT)  # one look-up of the node, not ``in`` then ``[]``
            if raw is _ABSENT:
                raw = packed[name] if name in packed else metadata.get(name)
            if scope:
                values[name] = raw or None
            elif raw is None:
                values[name] = empty()
            else:
                values[name] = convert(raw)
        return cls(**values)
    except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
        raise CorruptStoreError(f"stored record {memory_id!r} cannot be decoded: {e}") from e
