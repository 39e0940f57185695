"""Extractive summaries: a group's most informative sentences, in their order, within a word budget."""

from __future__ import annotations

import math
import re
from collections import Counter

from ucma_core.importance import HeuristicImportance
from ucma_core.providers.text import content_words, sentences

__all__ = ["summarize_group"]

_HEURISTIC = HeuristicImportance()
_NUMBER_OR_NAME = re.compile(r"\d|(?<!^)(?<![.!?]\s)\b[A-Z][a-z]{2,}")


def summarize_group(group: list[str], max_words: int) -> str:
    """A summary of ``group`` in at most ``max_words`` words; empty only for an empty group.

    A group that already fits comes back whole (texts joined by a space); otherwise
    sentences are ranked by how many of the group's recurring content words they
    carry, their importance and their position, and kept while they fit.

    Args:
        group: The texts to summarise.
        max_words: The word budget (at least 1).

    Examples:
        >>> summarize_group(["Short note."], 10)
        'Short note.'
    """
    texts = [t.strip() for t in group if t.strip()]
    if not texts:
        return ""
    whole = " ".join(dict.fromkeys(texts))
    if len(whole.split()) <= max_words:
        return group[0] if len(group) == 1 else whole
    units = list(dict.fromkeys(s for text in texts for s in sentences(text)))  # repeats add nothing
    words = [set(content_words(u)) for u in units]
    spread = Counter(w for ws in words for w in ws)
    central = [sum(spread[w] - 1 for w in ws) / math.sqrt(len(ws) + 1) for ws in words]
    most = max(central) or 1.0
    scores = [
        central[i] / most
        + 0.6 * _HEURISTIC.score_importance(unit, source="user")
        + (0.3 if i == 0 else 0.1 if unit in texts[0] else 0.0)
        + (0.2 if _NUMBER_OR_NAME.search(unit) else 0.0)
        for i, unit in enumerate(units)
    ]
    order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
    chosen: list[int] = []
    used = 0
    for i in order:
        size = len(units[i].split())
        if used + size <= max_words and not any(_similar(words[i], words[j]) for j in chosen):
            chosen.append(i)
            used += size
    if not chosen:  # even the best sentence is too long: cut it
        return " ".join(units[order[0]].split()[:max_words]).rstrip(".,;:") + "…"
    return " ".join(units[i] for i in sorted(chosen))


def _similar(a: set[str], b: set[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) > 0.7
