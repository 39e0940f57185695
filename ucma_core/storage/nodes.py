"""Typed, compact attribute records for the nodes of the memory graph.

Every node of the graph carries one record. The record's class says what the node is
(an entity, or a memory of one type), and its fields are ``__slots__``: no per-node
dictionary, no per-node copy of the field names. A field that was never set takes no
space and reads as absent, exactly like a missing key; a name no class knows goes into
a small ``extra`` dictionary made only when needed. Strings whose few values repeat
across many nodes (scope ids, source, tier, status) are interned, list values are kept
as tuples (the empty tuple is shared), and a last access equal to the creation time
shares its float.

Code on the hot path reads fields as attributes (``node.timestamp``, typed); the
record also answers the read-only mapping protocol (``node["timestamp"]``,
``node.get("pinned")``, ``"key" in node``, ``dict(node)``), which is what the snapshot,
the journal's undo copies and less frequent callers use.

Examples:
    >>> node = make_node({"kind": "memory", "memory_type": "episodic", "user_id": "ana",
    ...                   "timestamp": 10.0, "importance": 0.5, "participants": ["Ana"]})
    >>> type(node).__name__, node.user_id, node.participants
    ('EpisodeNode', 'ana', ('Ana',))
    >>> node["memory_type"], node.get("pinned"), "summary" in node
    ('episodic', None, False)
    >>> node.update({"importance": 0.9, "pinned": True})
    >>> node.importance, node["pinned"]
    (0.9, True)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

__all__ = [
    "EntityNode",
    "EpisodeNode",
    "FactNode",
    "IntentionNode",
    "LearningNode",
    "MemoryNode",
    "NodeRecord",
    "ProcedureNode",
    "make_node",
]

#: Fields whose few distinct values repeat across many nodes: one string object each.
_INTERNED = frozenset(
    {"user_id", "agent_id", "session_id", "source", "tier", "status", "name", "predicate", "subject"}
)
#: Number fields whose values repeat (defaults, a few levels): one float object per value.
_FLOATS = frozenset({"importance", "stability", "confidence", "success_rate", "priority"})
_FLOAT_CACHE: dict[float, float] = {}
#: Fields stored as tuples (JSON and callers hand lists).
_TUPLES = frozenset({"source_ids", "participants", "trigger_tags"})
_EMPTY: tuple[Any, ...] = ()


def _compact(name: str, value: Any) -> Any:
    if type(value) is str and name in _INTERNED:
        return sys.intern(value)
    if name in _TUPLES and isinstance(value, (list, tuple)):
        return tuple(value) if value else _EMPTY
    if type(value) is float and name in _FLOATS and len(_FLOAT_CACHE) < 4096:
        return _FLOAT_CACHE.setdefault(value, value)
    return value


class NodeRecord(Mapping[str, Any]):
    """Base of every node record: slot fields plus an optional ``extra`` dictionary."""

    __slots__ = ("extra", "ident")

    #: The ``kind`` the snapshot and the journal write for this class.
    KIND: ClassVar[str] = ""
    #: The ``memory_type`` value for memory nodes (``None`` for entities).
    MEMORY_TYPE: ClassVar[str | None] = None
    #: Every slot that holds a field (filled in by ``__init_subclass__``).
    FIELDS: ClassVar[tuple[str, ...]] = ()
    _SLOT_SET: ClassVar[frozenset[str]] = frozenset()

    extra: dict[str, Any] | None
    #: The node's id (the graph sets it: one string object shared with networkx's maps).
    ident: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: list[str] = []
        for klass in reversed(cls.__mro__):
            fields.extend(s for s in klass.__dict__.get("__slots__", ()) if s not in ("extra", "ident"))
        cls.FIELDS = tuple(fields)
        cls._SLOT_SET = frozenset(fields)

    def __init__(self, attrs: Mapping[str, Any] | None = None) -> None:
        self.extra = None
        if attrs:
            self.update(attrs)

    # --------------------------------------------------------------- writing
    def update(self, attrs: Mapping[str, Any]) -> None:
        """Set the given fields (``kind`` / ``memory_type`` are the class and are skipped)."""
        slots = self._SLOT_SET
        for name, value in attrs.items():
            if name == "kind" or name == "memory_type":
                continue
            value = _compact(name, value)
            if name in slots:
                if name == "last_access" and value == getattr(self, "timestamp", None):
                    value = self.timestamp  # type: ignore[attr-defined]
                object.__setattr__(self, name, value)
            else:
                if self.extra is None:
                    self.extra = {}
                self.extra[name] = value

    def restore(self, previous: Mapping[str, Any], missing: object) -> None:
        """Put back fields as they were (a value of ``missing`` means the field was absent)."""
        slots = self._SLOT_SET
        for name, value in previous.items():
            if value is not missing:
                self.update({name: value})
            elif name in slots:
                if hasattr(self, name):
                    object.__delattr__(self, name)
            elif self.extra is not None:
                self.extra.pop(name, None)
                if not self.extra:
                    self.extra = None

    # --------------------------------------------------------------- reading
    def __getitem__(self, name: str) -> Any:
        if name in self._SLOT_SET:
            try:
                return getattr(self, name)
            except AttributeError:
                raise KeyError(name) from None
        if name == "kind":
            return self.KIND
        if name == "memory_type" and self.MEMORY_TYPE is not None:
            return self.MEMORY_TYPE
        if self.extra is not None and name in self.extra:
            return self.extra[name]
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        if name in self._SLOT_SET:
            return getattr(self, name, default)
        extra = self.extra
        if extra is not None and name in extra:
            return extra[name]
        if name == "kind":
            return self.KIND
        if name == "memory_type" and self.MEMORY_TYPE is not None:
            return self.MEMORY_TYPE
        return default

    def __contains__(self, name: object) -> bool:
        if name in self._SLOT_SET:
            return hasattr(self, name)
        if not isinstance(name, str):
            return False
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        yield "kind"
        if self.MEMORY_TYPE is not None:
            yield "memory_type"
        for name in self.FIELDS:
            if hasattr(self, name):
                yield name
        if self.extra:
            yield from self.extra

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):  # tuples and lists of the same items are equal here
            return self.to_dict() == {k: list(v) if isinstance(v, tuple) else v for k, v in other.items()}
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """A plain dictionary (lists for tuples), as the snapshot and the journal store it."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


class EntityNode(NodeRecord):
    """An entity (a person, place or thing facts are about)."""

    __slots__ = ("agent_id", "name", "user_id")
    KIND = "entity"

    name: str
    user_id: str | None
    agent_id: str | None


class MemoryNode(NodeRecord):
    """Fields every memory node has: scope, clock, retention state, provenance, marks.

    ``retrieved_at`` and ``retrieval_stability`` are set on every memory a retrieval returns
    (:mod:`~ucma_core.stores.accessmarks`): as slots they cost 16 bytes on every node, where
    an ``extra`` dictionary made for them cost about 250 bytes on each retrieved one (a
    long-running memory retrieves most of its memories sooner or later)."""

    __slots__ = (
        "access_count",
        "agent_id",
        "importance",
        "last_access",
        "retrieval_stability",
        "retrieved_at",
        "session_id",
        "source",
        "source_ids",
        "stability",
        "timestamp",
        "user_id",
    )
    KIND = "memory"

    user_id: str | None
    agent_id: str | None
    session_id: str | None
    timestamp: float
    importance: float
    source: str
    stability: float
    last_access: float
    access_count: int
    source_ids: tuple[str, ...]
    retrieved_at: float
    retrieval_stability: float


class EpisodeNode(MemoryNode):
    """An episodic memory: tier, and the marks every sleep cycle sets on it. Rarer marks
    (``key``, ``pinned``, ``revised_by``, ``about``, ``question``, ``answered_by``,
    ``answers``) live in ``extra``."""

    __slots__ = (
        "consolidated_into",
        "dedup_done",
        "facts_done",
        "mined",
        "participants",
        "summary",
        "tier",
    )
    MEMORY_TYPE = "episodic"

    tier: str
    summary: str | None
    consolidated_into: str | None
    participants: tuple[str, ...]
    facts_done: bool
    mined: bool
    dedup_done: bool


class FactNode(MemoryNode):
    """A semantic fact: its triple, confidence and validity interval."""

    __slots__ = ("confidence", "object", "predicate", "subject", "superseded_by", "valid_from", "valid_to")
    MEMORY_TYPE = "semantic"

    subject: str
    predicate: str
    object: str
    confidence: float
    valid_from: float | None
    valid_to: float | None
    superseded_by: str | None


class ProcedureNode(MemoryNode):
    """A procedure: its name, triggers and track record."""

    __slots__ = ("executions", "name", "status", "success_rate", "trigger_tags", "usage_count")
    MEMORY_TYPE = "procedural"

    name: str
    trigger_tags: tuple[str, ...]
    status: str
    success_rate: float
    executions: int
    usage_count: int


class LearningNode(MemoryNode):
    """A learned lesson: confidence and its evidence counts."""

    __slots__ = ("confidence", "failures", "successes", "validated")
    MEMORY_TYPE = "learning"

    confidence: float
    validated: bool
    successes: int
    failures: int


class IntentionNode(MemoryNode):
    """A prospective memory (an intention): status, trigger and priority."""

    __slots__ = ("priority", "status", "trigger", "triggered_at", "triggered_by")
    MEMORY_TYPE = "prospective"

    status: str
    trigger: Any
    priority: float
    triggered_at: float | None
    triggered_by: str | None


_MEMORY_CLASSES: dict[str, type[MemoryNode]] = {
    str(c.MEMORY_TYPE): c for c in (EpisodeNode, FactNode, ProcedureNode, LearningNode, IntentionNode)
}


class _OtherNode(NodeRecord):
    """A node of a kind this version does not know (kept whole in ``extra``)."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        if self.extra is not None and name in self.extra:
            return self.extra[name]
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default) if self.extra is not None else default

    def __iter__(self) -> Iterator[str]:
        return iter(self.extra or ())

    def update(self, attrs: Mapping[str, Any]) -> None:
        if self.extra is None:
            self.extra = {}
        self.extra.update(attrs)


def node_class(attrs: Mapping[str, Any]) -> type[NodeRecord]:
    """The record class for a node with these attributes."""
    kind = attrs.get("kind")
    if kind == "memory":
        cls = _MEMORY_CLASSES.get(str(attrs.get("memory_type")))
        if cls is not None:
            return cls
    elif kind == "entity":
        return EntityNode
    return _OtherNode


def make_node(attrs: Mapping[str, Any]) -> NodeRecord:
    """The record for a new node with ``attrs`` (chosen by ``kind`` and ``memory_type``)."""
    return node_class(attrs)(attrs)


def changes_class(node: NodeRecord, attrs: Mapping[str, Any]) -> bool:
    """Whether merging ``attrs`` into ``node`` would change what the node is."""
    return ("kind" in attrs and attrs["kind"] != node.get("kind")) or (
        "memory_type" in attrs and attrs["memory_type"] != node.get("memory_type")
    )


def merged(node: NodeRecord, attrs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """``node``'s fields with ``attrs`` laid over them, as a plain dictionary."""
    out = dict(node.items())
    out.update(attrs)
    return out
