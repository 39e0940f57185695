"""The plain records UCMA stores and returns.

Every memory shares the fields of :class:`MemoryRecord`; each kind adds its own.
:class:`RetrievalResult` is the one result type of every search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ucma_core.errors import InvalidInputError, UnknownMemoryTypeError

__all__ = [
    "Episode",
    "Fact",
    "Intention",
    "IntentionStatus",
    "Learning",
    "LearningType",
    "MemoryRecord",
    "MemoryType",
    "Procedure",
    "ProcedureStatus",
    "RetrievalResult",
    "Source",
    "Tier",
]


class MemoryType(str, Enum):
    """The kind of a memory."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    LEARNING = "learning"
    PROSPECTIVE = "prospective"

    @classmethod
    def parse(cls, value: MemoryType | str) -> MemoryType:
        """Return the member for ``value`` or raise :class:`UnknownMemoryTypeError`."""
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise UnknownMemoryTypeError(
                f"memory type must be a str or MemoryType, not {type(value).__name__}"
            )
        try:
            return cls(value.lower())
        except ValueError as e:
            known = ", ".join(m.value for m in cls)
            raise UnknownMemoryTypeError(f"unknown memory type {value!r}; expected one of: {known}") from e


class Source(str, Enum):
    """Where an observation came from. User, tool and environment are *observed*;
    assistant and system text is *generated* by the application."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    ENVIRONMENT = "environment"
    SYSTEM = "system"

    @classmethod
    def parse(cls, value: Source | str) -> Source:
        """Return the member for ``value`` or raise :class:`InvalidInputError`."""
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower())
        except ValueError as e:
            known = ", ".join(m.value for m in cls)
            raise InvalidInputError(f"unknown source {value!r}; expected one of: {known}") from e


class Tier(str, Enum):
    """Episodic tier: fresh detail, or compressed/consolidated."""

    SHORT_TERM = "short_term"
    MEDIUM_TERM = "medium_term"


class ProcedureStatus(str, Enum):
    """Lifecycle of a procedure."""

    DRAFT = "draft"
    ACTIVE = "active"
    DEPRECATED = "deprecated"


class LearningType(str, Enum):
    """What a learning is about."""

    FAILURE_ANALYSIS = "failure_analysis"
    SUCCESS_PATTERN = "success_pattern"
    STRATEGY_UPDATE = "strategy_update"
    SELF_CORRECTION = "self_correction"
    USER_PREFERENCE = "user_preference"
    DOMAIN_INSIGHT = "domain_insight"


class IntentionStatus(str, Enum):
    """Lifecycle of a prospective intention."""

    PENDING = "pending"
    TRIGGERED = "triggered"
    RESOLVED = "resolved"


@dataclass(frozen=True)
class MemoryRecord:
    """Fields every stored memory has.

    Attributes:
        id: stable memory id.
        memory_type: which store holds it.
        content: the text that is embedded and returned.
        timestamp: when it happened (episodes) or was first stored, epoch seconds.
        user_id / agent_id / session_id: the scope it belongs to (``None`` if unset).
        importance: 0..1, how much it matters.
        source: who produced it (see :class:`Source`).
        tags: free labels, used as filters.
        metadata: the caller's JSON-able metadata, returned unchanged.
        source_ids: ids of the episodes this memory was derived from.
        stability: Ebbinghaus stability in days.
        last_access: epoch seconds of the last reinforcement.
        access_count: how many times it was retrieved or reinforced.
    """

    id: str
    memory_type: MemoryType
    content: str
    timestamp: float
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    importance: float
    source: str
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    source_ids: tuple[str, ...]
    stability: float
    last_access: float
    access_count: int


@dataclass(frozen=True)
class Episode(MemoryRecord):
    """Something that happened: an observation, turn or event."""

    tier: Tier = Tier.SHORT_TERM
    participants: tuple[str, ...] = ()
    summary: str | None = None


@dataclass(frozen=True)
class Fact(MemoryRecord):
    """A subject–predicate–object statement, valid from ``valid_from`` until ``valid_to``."""

    subject: str = ""
    predicate: str = ""
    object: str = ""
    confidence: float = 0.0
    valid_from: float = 0.0
    valid_to: float | None = None
    superseded_by: str | None = None


@dataclass(frozen=True)
class Procedure(MemoryRecord):
    """A named, reusable sequence of steps."""

    name: str = ""
    description: str = ""
    steps: tuple[str, ...] = ()
    trigger_tags: tuple[str, ...] = ()
    status: ProcedureStatus = ProcedureStatus.DRAFT
    success_rate: float = 0.0
    executions: int = 0
    usage_count: int = 0


@dataclass(frozen=True)
class Learning(MemoryRecord):
    """A distilled lesson with applicability tags and a confidence."""

    learning_type: LearningType = LearningType.DOMAIN_INSIGHT
    title: str = ""
    insight: str = ""
    applicability: tuple[str, ...] = ()
    confidence: float = 0.0
    validated: bool = False
    successes: int = 0
    failures: int = 0


@dataclass(frozen=True)
class Intention(MemoryRecord):
    """Something to do when matching input arrives."""

    description: str = ""
    trigger: tuple[str, ...] = ()
    action: str | None = None
    status: IntentionStatus = IntentionStatus.PENDING
    priority: float = 0.5
    triggered_at: float | None = None
    triggered_by: str | None = None


@dataclass(frozen=True)
class RetrievalResult:
    """One hit of :meth:`ucma_core.Memory.remember`.

    ``score`` is the final rank score; ``relevance``, ``importance``, ``recency``
    and ``retention`` are the factors it was combined from (each 0..1).
    ``signals`` holds the per-signal evidence behind ``relevance`` (``dense``,
    ``keyword``, ``entity``, ``time``, ``speaker``, ``graph``), ``route`` the query
    router's decision (kind and reason), and ``record`` the full stored memory.
    """

    id: str
    memory_type: MemoryType
    content: str
    score: float
    timestamp: float
    metadata: dict[str, Any]
    source_ids: tuple[str, ...]
    relevance: float
    importance: float
    recency: float
    retention: float
    record: MemoryRecord = field(repr=False)
    signals: dict[str, float] = field(default_factory=dict)
    route: str = "hybrid"
