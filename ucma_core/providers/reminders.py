"""Reminders in chat: "Remind me to …" becomes an intention (prospective memory).

:func:`reminder` reads what a turn asks to be reminded of, and when: the task ("call the
dentist tomorrow") is the intention's description; its trigger phrases are the condition's
words when the turn names one ("… when I'm at the store" → ``store``), else the task's own
words without its verb and time words ("dentist"), so the intention fires the next time
the user mentions it. The sleep cycle turns such turns into intentions
(:mod:`ucma_core.consolidation.patterns`).

Examples:
    >>> reminder("Remind me to call the dentist tomorrow.")
    Reminder(description='Call the dentist tomorrow', trigger=('dentist',))
    >>> reminder("Can you remind me to buy oat milk when I'm at the store?")
    Reminder(description="Buy oat milk when I'm at the store", trigger=('store',))
    >>> reminder("Don't let me forget to renew my passport") is not None, reminder("I called the dentist.")
    (True, None)
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ucma_core.providers.text import content_words

__all__ = ["Reminder", "reminder"]

_REMIND = re.compile(
    r"\b(?:remind\s+me\s+(?:to|about)|don'?t\s+let\s+me\s+forget\s+(?:to|about)|"
    r"i\s+(?:need|have|must)\s+to\s+remember\s+to|note\s+to\s+self\s*[:,-]?)\s+(?P<task>[^.!?\n]+)",
    re.I,
)
_CONDITION = re.compile(r"\s+(?:when(?:ever)?|if|once|next\s+time|as\s+soon\s+as)\s+(?P<cond>.+)$", re.I)
_TIME_WORDS = frozenset(
    """today tomorrow tonight morning afternoon evening night later soon week weekend month year
    monday tuesday wednesday thursday friday saturday sunday next this am pm""".split()
)
_NOT_TRIGGERS = frozenset("i'm im i me my get got go going be at the a an".split())


class Reminder(NamedTuple):
    """What to remember to do (``description``) and the phrases that bring it back (``trigger``)."""

    description: str
    trigger: tuple[str, ...]


def _words(text: str) -> tuple[str, ...]:
    words = [
        w
        for w in content_words(text)
        if w not in _TIME_WORDS and w not in _NOT_TRIGGERS and not w.isdigit() and len(w) > 2
    ]
    return tuple(dict.fromkeys(words))[:3]


def reminder(text: str) -> Reminder | None:
    """The reminder a turn asks for, or ``None``."""
    m = _REMIND.search(text)
    if m is None:
        return None
    task = " ".join(m["task"].split()).strip(" ,;:")
    if not task:
        return None
    cond = _CONDITION.search(task)
    trigger = _words(cond["cond"]) if cond else ()
    if not trigger:
        head = task[: cond.start()] if cond else task
        verb, _, rest = head.partition(" ")
        trigger = _words(rest) or _words(verb)
    if not trigger:
        return None
    return Reminder(task[:1].upper() + task[1:], trigger)
