"""Conflict rules: when a newer fact contradicts (revises) an older one about the same subject."""

from __future__ import annotations

import re

from ucma_core.providers.fact_objects import EXCLUSIVE_STATES, ONE_RELATIONS
from ucma_core.providers.kinds import same_kind
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.providers.text import TOKEN, content_words

__all__ = [
    "canonical_predicate",
    "facts_conflict",
    "is_decision",
    "negated",
    "related_predicates",
    "single_valued",
]

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
    "is based in": "lives in",
    "is called": "is named",
    "has name": "is named",
    "goes by": "is named",
    "is aged": "has age",
    "comes from": "is from",
    "grew up in": "is from",
    "loves": "likes",
    "enjoys": "likes",
    "adores": "likes",
    "hates": "dislikes",
    "does not like": "dislikes",
    "doesn't like": "dislikes",
    "has blood type": "has blood group",
    "decided on": "chose",
    "picked": "chose",
    "went with": "chose",
    "selected": "chose",
    "opted for": "chose",
    "is going with": "chose",
}
_OPPOSITES = ({"likes", "dislikes"}, {"prefers", "dislikes"})
#: Predicates a revision ("actually I prefer detailed answers now") may change without
#: restating the old value: the older fact of the same kind of thing is replaced.
_PREFERENCES = frozenset({"prefers", "uses"})
_DECISION = re.compile(
    r"^(?:chose|decided(?:\s+(?:on|to))?|picked|plans?\s+to\b.*|is\s+(?:going|planning)\s+to\b.*|"
    r"went\s+with|opted\s+for|selected|will\b.*|is\s+going\s+with)$"
)


def canonical_predicate(predicate: str) -> str:
    """One spelling per predicate: lower case, single spaces, "favorite", known synonyms mapped.

    Examples:
        >>> canonical_predicate("Resides  In"), canonical_predicate("has favourite band")
        ('lives in', 'has favorite band')
    """
    p = _norm(predicate).replace("favourite", "favorite")
    return _SYNONYMS.get(p, p)


def is_decision(predicate: str) -> bool:
    """Whether a predicate records a choice or a plan ("chose", "plans to buy", "decided to")."""
    return bool(_DECISION.match(canonical_predicate(predicate)))


def negated(predicate: str) -> str | None:
    """The predicate a "no longer" predicate takes back: "no longer works at" → "works at",
    "is no longer" → "is"; ``None`` for a predicate that negates nothing."""
    p = canonical_predicate(predicate)
    if p == "is no longer":
        return "is"
    if p.startswith("no longer "):
        rest = p[len("no longer ") :]
        return canonical_predicate(rest)
    return None


def related_predicates(predicate: str) -> set[str]:
    """Predicates whose facts a fact with ``predicate`` may revise: itself, its opposite and
    what it negates (decisions revise each other too: see :func:`is_decision`)."""
    p = canonical_predicate(predicate)
    out = {p}
    if (taken_back := negated(p)) is not None:
        out.add(taken_back)
    for pair in _OPPOSITES:
        if p in pair:
            out |= pair
    return out


def facts_conflict(old: ExtractedFact, new: ExtractedFact) -> bool:
    """Whether ``new`` contradicts or revises ``old`` (same subject).

    * A revision that names what it replaces (``new.replaces``: "instead of the ThinkPad",
      "switched from vim") retires an older fact with a related predicate whose object is that
      value; "no longer works at Initech" retires "works at Initech".
    * A revision of a decision ("actually I decided on the MacBook Air") retires the older
      decision it is paired with (the sleep cycle pairs it with the one it most likely
      revises).
    * A revised preference ("actually I prefer detailed answers now") retires an older one
      about the same kind of thing ("short answers": they share a word, or both are of one
      known kind, :func:`~ucma_core.providers.kinds.kind_of`) without restating it.
    * Otherwise: same single-valued predicate, another object. Single-valued predicates are
      the ones in :data:`_SINGLE_VALUED`, ``has <relation>`` for relations a person has one of
      (wife, boss, doctor…) and ``has favorite <thing>``. An object that only adds detail
      ("Paris" → "Paris, France") is no contradiction. ``is`` is single-valued for roles ("a
      nurse" → "a teacher") and for exclusive states (married / single, vegan / vegetarian),
      not for unrelated traits ("Canadian", "a nurse"). Likes and dislikes of the same object
      contradict each other.

    Examples:
        >>> facts_conflict(ExtractedFact("Ana", "lives in", "Lisbon", 0.8),
        ...                ExtractedFact("ana", "lives in", "Berlin", 0.8))
        True
        >>> facts_conflict(ExtractedFact("Ana", "likes", "jazz", 0.8),
        ...                ExtractedFact("Ana", "likes", "tea", 0.8))
        False
        >>> facts_conflict(ExtractedFact("Ana", "uses", "vim", 0.8),
        ...                ExtractedFact("Ana", "uses", "VS Code", 0.8, revises=True, replaces="vim"))
        True
        >>> facts_conflict(ExtractedFact("Ana", "prefers", "short answers", 0.8),
        ...                ExtractedFact("Ana", "prefers", "detailed answers", 0.8, revises=True))
        True
    """
    if _norm(old.subject) != _norm(new.subject):
        return False
    p, q = canonical_predicate(old.predicate), canonical_predicate(new.predicate)
    a, b = _norm(old.object), _norm(new.object)
    related = p in related_predicates(q) or (is_decision(p) and is_decision(q))
    if new.replaces and related and _mentions(a, _norm(new.replaces)):
        return True
    if negated(q) == p:
        return _same_thing(a, b)
    if new.revises and is_decision(p) and is_decision(q):
        return a != b
    if new.revises and p == q and p in _PREFERENCES and a != b:
        if same_kind(a, b):  # "long explanations" → "brevity", "vim" → "Neovim"
            return True
        x, y = set(content_words(a)), set(content_words(b))
        return bool(x & y) and not (x <= y or y <= x)
    if p != q:
        return {p, q} in _OPPOSITES and _strip_article(a) == _strip_article(b)
    if a == b or not single_valued(p):
        return False
    if p == "is":
        roles = a.startswith(("a ", "an ")) and b.startswith(("a ", "an "))
        return roles or (a in EXCLUSIVE_STATES and EXCLUSIVE_STATES[a] == EXCLUSIVE_STATES.get(b))
    x, y = _tokens(a), _tokens(b)
    return x != y and not (x <= y or y <= x)


def _mentions(obj: str, value: str) -> bool:
    """Whether ``obj`` is (or names) ``value``: "ThinkPad X1 Carbon" mentions "the ThinkPad"."""
    x, y = _tokens(obj), _tokens(value)
    return bool(x and y) and (y <= x or x <= y)


def _same_thing(a: str, b: str) -> bool:
    x, y = _tokens(a), _tokens(b)
    return bool(x and y) and (x <= y or y <= x)


def _tokens(text: str) -> set[str]:
    return set(TOKEN.findall(_strip_article(text)))


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split()).strip(" .,!;:'\"")


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text)


def single_valued(predicate: str) -> bool:
    """Whether a person has one value of ``predicate`` at a time ("lives in", "has wife", "is" for roles)."""
    predicate = canonical_predicate(predicate)
    relation = predicate[4:] if predicate.startswith("has ") else ""
    return predicate in _SINGLE_VALUED or relation in ONE_RELATIONS or relation.startswith("favorite ")
