"""Content-free turns never outrank content: "Bye, Sam!" is never an answer.

A greeting, thanks or acknowledgement (``Noted.``, ``Good luck, Sam!``) matches many
questions through the one name or word it has. :func:`content_free` is the one rule of what says
nothing, also for recall blocks (:mod:`ucma_core.conversation.shown`); retrieval counts the
names of the people the scope knows as pleasantries. Retrieval reads the text of the best candidates
and scales the score of every content-free one below the lowest score of a content one
among them, keeping the order of the content-free ones among themselves; the factor shows
in ``signals["content_free"]``.

Examples:
    >>> scores = {"a": 0.9, "b": 0.8, "c": 0.5}
    >>> factors = content_last(["a", "b", "c"], scores, {"a": "Bye, Sam!", "b": "I moved.", "c": "Ok."},
    ...                        names={"sam"})
    >>> {i: round(scores[i] * f, 3) for i, f in factors.items()}
    {'a': 0.4, 'c': 0.222}
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

__all__ = ["content_free", "content_last"]

#: Words that carry no fact on their own; a short turn made only of them is content-free.
_PLEASANTRIES = frozenset(
    """
    hi hello hey hiya yo morning afternoon evening night good great nice cool fine ok okay k kk
    alright right sure yes yeah yep yup no nope thanks thank thx ty cheers you your you're youre
    so very much a lot noted got it understood will do done bye goodbye see later soon welcome
    problem np sounds perfect awesome wonderful glad happy to help luck there all the best
    take care have day
    """.split()
)
#: A content-free turn has at most this many words.
_PLEASANTRY_WORDS = 8
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

#: A content-free candidate scores at most this share of the lowest content score.
BELOW: float = 0.5


def content_free(text: str, *, names: Collection[str] = ()) -> bool:
    """Whether ``text`` says nothing worth recalling: no word at all, or a short greeting,
    thanks or acknowledgement. ``names`` are people's names (any case) that count as part of
    a pleasantry: "Good luck, Sam!" says nothing when Sam is someone the memory knows.

    Examples:
        >>> [content_free(t) for t in ("Noted.", "Good luck!", "Thanks a lot 🙂", "Hi!", "  ")]
        [True, True, True, True, True]
        >>> content_free("I moved to Lisbon."), content_free("Bye, Sam!")
        (False, False)
        >>> content_free("Bye, Sam!", names={"Sam"})
        True
        >>> content_free("Sam!", names={"sam"})  # a name alone may answer "who?"
        False
    """
    return _free(text, {n.casefold() for n in names} if names else frozenset())


def _free(text: str, known: Collection[str]) -> bool:
    """:func:`content_free` with the ``names`` already case-folded (``known``)."""
    words = _WORD.findall(text.casefold())
    if not words:
        return True
    if len(words) > _PLEASANTRY_WORDS:
        return False
    return any(w in _PLEASANTRIES for w in words) and all(w in _PLEASANTRIES or w in known for w in words)


def content_last(
    ranked: Sequence[str],
    scores: Mapping[str, float],
    texts: Mapping[str, str],
    *,
    names: Collection[str] = (),
) -> dict[str, float]:
    """The score factor of each content-free id among ``ranked`` (those with a text in
    ``texts``) that puts it below every content one there; ``{}`` when none needs moving."""
    known = {n.casefold() for n in names}  # once, not once per text
    free = [i for i in ranked if i in texts and _free(texts[i], known)]
    if not free:
        return {}
    freed = set(free)
    content = [scores[i] for i in ranked if i in texts and i not in freed]
    floor = min(content, default=0.0)
    top = max(scores[i] for i in free)
    if floor <= 0 or top <= 0:
        return {i: 0.0 for i in free} if content else {}
    factor = min(1.0, BELOW * floor / top)
    return {i: factor for i in free} if factor < 1.0 else {}
