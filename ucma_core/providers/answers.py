"""Strict checks of a model's JSON answers, for :class:`~ucma_core.providers.LLMProvider`.

Every check either returns clean values (text with its spacing normalised, tags
lower-cased and deduplicated, facts deduplicated) or raises
:class:`UnusableAnswerError` saying what was wrong, so the provider can ask again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from ucma_core.errors import ProviderError
from ucma_core.providers.conflicts import canonical_predicate
from ucma_core.providers.fact_rules import without_clipped
from ucma_core.providers.protocols import DistilledLearning, ExtractedFact, ExtractedProcedure
from ucma_core.providers.text import same_name
from ucma_core.records import LearningType

__all__ = [
    "UnusableAnswerError",
    "check_facts",
    "check_flag",
    "check_text",
    "json_object",
    "parse_importance",
    "parse_items",
    "parse_learning",
    "parse_procedure",
]

_MAX_FIELD_CHARS = 2000
_LEARNING_TYPES = frozenset(t.value for t in LearningType)
_T = TypeVar("_T")


class UnusableAnswerError(ProviderError):
    """A model's answer arrived but cannot be used (not JSON, wrong shape, cut off); worth asking again.

    A :class:`~ucma_core.providers.protocols.ChatTransport` raises it for an answer it
    already knows is unusable (the model stopped at its token limit); the provider
    raises it for answers that fail its checks. After the last attempt the provider
    raises a :class:`~ucma_core.errors.ProviderError` chained to it.
    """


def json_object(content: str) -> dict[str, Any]:
    """The JSON object in ``content``.

    Raises:
        UnusableAnswerError: ``content`` is empty, not JSON, or JSON but not an object.

    Examples:
        >>> json_object('{"importance": 0.5}')
        {'importance': 0.5}
    """
    if not content.strip():
        raise UnusableAnswerError("the answer is empty")
    try:
        value = json.loads(content)
    except ValueError as e:
        raise UnusableAnswerError(f"the answer is not valid JSON ({e}): {content[:200]!r}") from e
    if not isinstance(value, dict):
        raise UnusableAnswerError(f"the answer is JSON {type(value).__name__}, not an object")
    return value


def parse_items(answer: dict[str, Any], count: int, key: str, check: Callable[[object, str], _T]) -> list[_T]:
    """``answer["items"]``: exactly one ``{"index": i, key: ...}`` per index ``0..count-1``, in index order.

    Args:
        answer: The model's JSON object.
        count: How many items were sent.
        key: The field each item carries.
        check: Checks one item's field (given the value and where it is, for messages).

    Raises:
        UnusableAnswerError: An item is missing, repeated, out of range or fails ``check``.
    """
    items = answer.get("items")
    if not isinstance(items, list):
        raise UnusableAnswerError(f'"items" must be a list, got {type(items).__name__}')
    if len(items) != count:
        raise UnusableAnswerError(f'"items" has {len(items)} entries for {count} inputs')
    out: dict[int, _T] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or index in out:
            raise UnusableAnswerError(f"item {item!r:.200} has a missing, repeated or out-of-range index")
        if key not in item:
            raise UnusableAnswerError(f'item {index} has no "{key}"')
        out[index] = check(item[key], f"item {index} {key}")
    return [out[i] for i in range(count)]


def check_text(value: object, where: str) -> str:
    """A non-empty string of at most 2,000 characters, its whitespace collapsed."""
    if not isinstance(value, str) or not value.strip():
        raise UnusableAnswerError(f"{where} must be a non-empty string, got {value!r:.100}")
    if len(value) > _MAX_FIELD_CHARS:
        raise UnusableAnswerError(f"{where} is {len(value)} characters long (at most {_MAX_FIELD_CHARS})")
    return " ".join(value.split())


def check_flag(value: object, where: str) -> bool:
    """A JSON boolean."""
    if not isinstance(value, bool):
        raise UnusableAnswerError(f"{where} must be true or false, got {value!r:.100}")
    return value


def check_facts(value: object, where: str) -> list[ExtractedFact]:
    """A list of fact objects: canonical predicates, duplicates merged (highest confidence kept).

    Predicates are lower-cased and known synonyms mapped ("resides in" → "lives in", see
    :func:`~ucma_core.providers.conflicts.canonical_predicate`). A fact may carry
    ``"revises": true`` and ``"replaces": "<older value>"`` for a correction or update. A
    fact whose subject and object are the same name ("michael is named Michael") says
    nothing and is dropped, and so is one that another fact states in full ("prefers short
    answers" beside "prefers short answers with code").
    """
    if not isinstance(value, list):
        raise UnusableAnswerError(f"{where} must be a list, got {type(value).__name__}")
    out: dict[tuple[str, str, str], ExtractedFact] = {}
    for n, raw in enumerate(value):
        at = f"{where}[{n}]"
        fact = _fields(raw, at, ("subject", "predicate", "object", "confidence"))
        subject = check_text(fact["subject"], f"{at} subject")
        obj = check_text(fact["object"], f"{at} object")
        predicate = canonical_predicate(check_text(fact["predicate"], f"{at} predicate"))
        confidence = _unit(fact["confidence"], f"{at} confidence")
        revises = fact.get("revises", False)
        if not isinstance(revises, bool):
            raise UnusableAnswerError(f"{at} revises must be true or false, got {revises!r:.60}")
        replaces = fact.get("replaces")
        replaces = None if replaces in (None, "") else check_text(replaces, f"{at} replaces")
        key = (subject.lower(), predicate, obj.lower())
        if not same_name(subject, obj) and (key not in out or out[key].confidence < confidence):
            out[key] = ExtractedFact(
                subject, predicate, obj, confidence, revises or replaces is not None, replaces
            )
    return without_clipped(list(out.values()))


def parse_importance(answer: dict[str, Any]) -> float:
    """``{"importance": <number in [0, 1]>}``."""
    return _unit(answer.get("importance"), '"importance"')


def parse_procedure(answer: dict[str, Any]) -> ExtractedProcedure | None:
    """``{"procedure": {name, steps, description?, trigger_tags?}}`` or ``{"procedure": null}``."""
    if "procedure" not in answer:
        raise UnusableAnswerError('the answer has no "procedure"')
    if answer["procedure"] is None:
        return None
    raw = _fields(answer["procedure"], '"procedure"', ("name", "steps"))
    steps = raw["steps"]
    if not isinstance(steps, list) or not steps:
        raise UnusableAnswerError(
            f'"procedure" steps must be a non-empty list of strings, got {steps!r:.100}'
        )
    description = raw.get("description") or ""
    return ExtractedProcedure(
        name=check_text(raw["name"], '"procedure" name'),
        steps=tuple(check_text(step, '"procedure" step') for step in steps),
        description=check_text(description, '"procedure" description') if description else "",
        trigger_tags=_tags(raw.get("trigger_tags"), '"procedure" trigger_tags'),
    )


def parse_learning(answer: dict[str, Any]) -> DistilledLearning | None:
    """``{"learning": {title, insight, learning_type, confidence, applicability?}}`` or ``null``."""
    if "learning" not in answer:
        raise UnusableAnswerError('the answer has no "learning"')
    if answer["learning"] is None:
        return None
    raw = _fields(answer["learning"], '"learning"', ("title", "insight", "learning_type", "confidence"))
    kind = raw["learning_type"]
    if not isinstance(kind, str) or kind not in _LEARNING_TYPES:
        raise UnusableAnswerError(
            f'"learning" learning_type {kind!r:.60} is not one of {sorted(_LEARNING_TYPES)}'
        )
    return DistilledLearning(
        title=check_text(raw["title"], '"learning" title'),
        insight=check_text(raw["insight"], '"learning" insight'),
        learning_type=kind,
        applicability=_tags(raw.get("applicability"), '"learning" applicability'),
        confidence=_unit(raw["confidence"], '"learning" confidence'),
    )


def _unit(value: object, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)  # NaN fails the range test
    raise UnusableAnswerError(f"{where} must be a number in [0, 1], got {value!r:.100}")


def _tags(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise UnusableAnswerError(f"{where} must be a list of strings, got {type(value).__name__}")
    return tuple(dict.fromkeys(check_text(tag, where).lower() for tag in value))


def _fields(value: object, where: str, required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UnusableAnswerError(f"{where} must be an object, got {type(value).__name__}")
    missing = [k for k in required if k not in value]
    if missing:
        raise UnusableAnswerError(f"{where} lacks {', '.join(missing)}")
    return value
