"""Set questions get the set: "all / every / which places / how many / list / what has X said
about Y" ask for every matching memory, not the single best one.

When the caller of :meth:`~ucma_core.Memory.remember` leaves ``k`` unset, a set question gets
:data:`SET_K` results instead of :data:`DEFAULT_K`; a ``k`` the caller gives is always kept
(a context budget is theirs to set). The route reason says when the rule applied.

Examples:
    >>> [is_set_question(q) for q in (
    ...     "Which places has Ana visited?", "How many books did Ben read?",
    ...     "What has Caroline said about her family?", "List the gifts Ana got",
    ...     "Which city does Ana's sister live in?", "What is the locker code?")]
    [True, True, True, True, False, False]
    >>> result_count("Which places has Ana visited?", None), result_count("Which places?", 3)
    (20, 3)
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DEFAULT_K", "SET_K", "is_set_question", "result_count"]

#: Results of :meth:`~ucma_core.Memory.remember` when the caller does not set ``k``.
DEFAULT_K: Final = 10
#: Results of a set question when the caller does not set ``k``.
SET_K: Final = 20

_SET = re.compile(
    r"\b(?:all|every|each|list|enumerate)\b"
    r"|\bhow (?:many|often)\b"
    r"|\bwhat (?:kinds?|sorts?|types?) of\b"
    r"|\b(?:which|what)\s+(?:\w+\s+)?\w+(?<!ss)s\s+(?:has|have|had|did|do|does|are|were|is)\b"
    r"|\bwhat (?:has|have|had)\s+(?:\w+\s+){1,3}(?:said|told|mentioned|shared|talked|written)\b"
    r"|\bwhat (?:things|activities|places|events|hobbies|books|gifts|foods?)\b"
    r"|\bin what ways\b",
    re.I,
)


def is_set_question(query: str) -> bool:
    """Whether ``query`` asks for every matching memory rather than one."""
    return bool(_SET.search(query))


def result_count(query: str, k: int | None) -> int:
    """How many results to return: ``k`` when the caller set it, otherwise :data:`SET_K` for
    a set question and :data:`DEFAULT_K` for any other."""
    if k is not None:
        return k
    return SET_K if is_set_question(query) else DEFAULT_K
