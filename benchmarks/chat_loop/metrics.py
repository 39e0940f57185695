"""Scoring helpers: precision and recall, and when an extracted fact counts as a labelled one.

A predicted fact matches a labelled one when the subjects are the same name (case and
spacing aside) and the words of "predicate object" agree: after mapping predicate
synonyms (:data:`~benchmarks.chat_loop.extraction.PREDICATE_SYNONYMS`) and dropping
articles, forms of "be" / "have" and prepositions, at least 80% of the labelled words
are predicted and at least 60% of the predicted words are labelled. So "Lisbon, Portugal"
for "Lisbon" counts, a clipped "short answers" for "short answers with code" does not,
and "lives in Porto" never counts for "is from Porto". Each labelled fact is matched once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .extraction import PREDICATE_SYNONYMS, Fact

__all__ = ["Counts", "fact_matches", "match_facts", "near_duplicates", "normal_predicate"]

_DROP = frozenset(
    "a an the to is are am be was were has have had in at on of for with from by my our".split()
)
_WORD = re.compile(r"[\w:'.-]+")


class Counts:
    """True positives, false positives and false negatives, and the rates they give."""

    def __init__(self) -> None:
        self.tp = self.fp = self.fn = 0

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def normal_predicate(predicate: str) -> str:
    p = " ".join(predicate.lower().replace("favourite", "favorite").split())
    return PREDICATE_SYNONYMS.get(p, p)


def _words(predicate: str, obj: str) -> set[str]:
    text = f"{normal_predicate(predicate)} {obj}".lower().replace("\u2019", "'")
    return {w.strip(".,'") for w in _WORD.findall(text)} - _DROP - {""}


def _name(text: str) -> str:
    return " ".join(text.lower().replace("\u2019", "'").split()).strip(" .,")


def fact_matches(predicted: Fact, gold: Fact) -> bool:
    """Whether ``predicted`` states ``gold`` (see the module docstring)."""
    if _name(predicted[0]) != _name(gold[0]):
        return False
    p, g = _words(predicted[1], predicted[2]), _words(gold[1], gold[2])
    if not p or not g:
        return False
    shared = len(p & g)
    return shared / len(g) >= 0.8 and shared / len(p) >= 0.6


def match_facts(predicted: Sequence[Fact], gold: Sequence[Fact]) -> tuple[int, int, int]:
    """``(true positives, false positives, false negatives)``; each gold fact matches once."""
    free = list(gold)
    tp = 0
    for fact in predicted:
        hit = next((g for g in free if fact_matches(fact, g)), None)
        if hit is not None:
            free.remove(hit)
            tp += 1
    return tp, len(predicted) - tp, len(free)


def near_duplicates(facts: Iterable[Fact]) -> int:
    """Pairs of facts with the same subject and predicate where one object's words contain the other's."""
    seen = list(facts)
    count = 0
    for i, a in enumerate(seen):
        for b in seen[i + 1 :]:
            if _name(a[0]) != _name(b[0]) or normal_predicate(a[1]) != normal_predicate(b[1]):
                continue
            x, y = _words("", a[2]), _words("", b[2])
            if x and y and (x <= y or y <= x):
                count += 1
    return count
