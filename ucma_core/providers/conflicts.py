"""Conflict rules: when a newer fact contradicts an older one about the same subject."""

from __future__ import annotations

import re

from ucma_core.providers.fact_rules import EXCLUSIVE_STATES, ONE_RELATIONS
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.providers.text import TOKEN

__all__ = ["facts_conflict"]

_SINGLE_VALUED = frozenset(
    p.strip()
    for p in """lives in|works at|works as|is named|is married to|is|has birthday|has blood group|has email|
    has phone number|has address|has age|is aged""".split("|")
)
_SYNONYMS = {
    "works for": "works at",
    "is employed at": "works at",
    "is employed by": "works at",
    "lives at": "lives in",
    "resides in": "lives in",
    "is called": "is named",
    "has name": "is named",
    "loves": "likes",
    "enjoys": "likes",
    "hates": "dislikes",
    "does not like": "dislikes",
    "doesn't like": "dislikes",
    "has blood type": "has blood group",
}
_OPPOSITES = ({"likes", "dislikes"}, {"prefers", "dislikes"})


def facts_conflict(old: ExtractedFact, new: ExtractedFact) -> bool:
    """Whether ``new`` contradicts ``old``: same subject, same single-valued predicate, another object.

    Single-valued predicates are the ones in :data:`_SINGLE_VALUED`, ``has <relation>`` for
    relations a person has one of (wife, boss, doctor…) and ``has favorite <thing>``. An
    object that only adds detail ("Paris" → "Paris, France") is no contradiction. ``is`` is
    single-valued for roles ("a nurse" → "a teacher") and for exclusive states (married /
    single, vegan / vegetarian), not for unrelated traits ("Canadian", "a nurse"). Likes and
    dislikes of the same object contradict each other.

    Example:
        >>> facts_conflict(ExtractedFact("Ana", "lives in", "Lisbon", 0.8),
        ...                ExtractedFact("ana", "lives in", "Berlin", 0.8))
        True
        >>> facts_conflict(ExtractedFact("Ana", "likes", "jazz", 0.8),
        ...                ExtractedFact("Ana", "likes", "tea", 0.8))
        False
    """
    if _norm(old.subject) != _norm(new.subject):
        return False
    p, q = _predicate(old.predicate), _predicate(new.predicate)
    a, b = _norm(old.object), _norm(new.object)
    if p != q:
        return {p, q} in _OPPOSITES and _strip_article(a) == _strip_article(b)
    if a == b or not _single_valued(p):
        return False
    if p == "is":
        roles = a.startswith(("a ", "an ")) and b.startswith(("a ", "an "))
        return roles or (a in EXCLUSIVE_STATES and EXCLUSIVE_STATES[a] == EXCLUSIVE_STATES.get(b))
    x, y = set(TOKEN.findall(_strip_article(a))), set(TOKEN.findall(_strip_article(b)))
    return x != y and not (x <= y or y <= x)


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split()).strip(" .,!;:'\"")


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text)


def _predicate(predicate: str) -> str:
    p = _norm(predicate).replace("favourite", "favorite")
    return _SYNONYMS.get(p, p)


def _single_valued(predicate: str) -> bool:
    relation = predicate[4:] if predicate.startswith("has ") else ""
    return predicate in _SINGLE_VALUED or relation in ONE_RELATIONS or relation.startswith("favorite ")
