"""Offline, deterministic importance scoring for observations.

A rule-based scorer: no model, no network. It rewards what people usually want an
assistant to keep (self-descriptions, preferences, decisions, commitments, dates,
numbers, names, errors and their fixes) and marks greetings and acknowledgements
as noise. LLM-backed scorers plug in through the same
:class:`~ucma_core.protocols.ImportanceScorer` protocol.
"""

from __future__ import annotations

import re

__all__ = ["HeuristicImportance"]

_FILLER = re.compile(
    r"^(?:(?:hi|hello|hey|ok(?:ay)?|k|thanks?(?: you)?|thx|ty|cool|great|nice|sure|yes|yep|no|nope|"
    r"bye|good(?: morning| night| evening)?|lol|haha|hmm+|uh+|um+|got it|sounds good|np)[\s,!.?]*)+$",
    re.IGNORECASE,
)
_SIGNALS: tuple[tuple[re.Pattern[str], float], ...] = (
    # self-description and identity
    (
        re.compile(
            r"\b(?:i am|i'm|my name is|call me|i work|i live|i was born|my (?:wife|husband|partner|"
            r"son|daughter|sister|brother|mother|father|mom|dad|friend|boss|team|job|birthday))\b",
            re.I,
        ),
        0.25,
    ),
    # preferences
    (
        re.compile(
            r"\b(?:i (?:really )?(?:like|love|prefer|hate|dislike|enjoy|want|need)|i'd rather|"
            r"favou?rite|allergic|can't stand|don't like)\b",
            re.I,
        ),
        0.25,
    ),
    # explicit importance, decisions, commitments
    (
        re.compile(
            r"\b(?:remember|important|always|never|must|decided|decision|deadline|promise|"
            r"plan(?:ning)? to|going to|will|agreed|goal|todo|to-do|remind)\b",
            re.I,
        ),
        0.15,
    ),
    # problems and fixes
    (
        re.compile(
            r"\b(?:error|bug|fail(?:ed|ure|s)?|crash(?:ed)?|broken|fix(?:ed)?|resolved|"
            r"workaround|exception|issue)\b",
            re.I,
        ),
        0.15,
    ),
    # dates and times
    (
        re.compile(
            r"\b(?:\d{4}-\d{2}-\d{2}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|october|november|"
            r"december|tomorrow|yesterday|next week|last week)\b",
            re.I,
        ),
        0.1,
    ),
    # numbers and quantities
    (re.compile(r"\d"), 0.05),
)
_PROPER_NOUN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
_WORD = re.compile(r"\w+")
_BASE_BY_SOURCE = {"user": 0.3, "tool": 0.25, "environment": 0.2, "assistant": 0.15, "system": 0.2}


class HeuristicImportance:
    """Rule-based importance in [0, 1]; the same input always gives the same score.

    Example:
        >>> scorer = HeuristicImportance()
        >>> scorer.score_importance("ok thanks", source="user") < 0.2
        True
        >>> scorer.score_importance("I'm Ana and I prefer concise answers.", source="user") > 0.5
        True
    """

    def score_importance(self, content: str, *, source: str) -> float:
        text = content.strip()
        words = _WORD.findall(text)
        if not words or _FILLER.match(text):
            return 0.05
        score = _BASE_BY_SOURCE.get(source, 0.2)
        for pattern, weight in _SIGNALS:
            if pattern.search(text):
                score += weight
        if _PROPER_NOUN.search(text):
            score += 0.1
        if len(words) <= 3:
            score -= 0.1
        elif len(words) >= 12:
            score += 0.05
        if text.endswith("?") and score < 0.5:
            score -= 0.05
        return round(min(1.0, max(0.0, score)), 4)
