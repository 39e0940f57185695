"""What a recall block leaves out: what the conversation already shows, and what says nothing.

One rule for every adapter (:class:`~ucma_core.conversation.loop.Conversation` applies it):

* a memory that *is* a message of the window (its memory id, or the ``message_id``
  it was stored with, is among the window's ids) or says the same text as one;
* a second memory with the same text as a better-ranked one (one fact three times);
* a content-free turn: greetings, thanks, acknowledgements ("Noted.", "Good luck!"),
  or text without a single word;
* a copy of recall output: a memory whose text holds a rendered recall line
  (``- [2026-03-04] (fact) …``) or starts with a recall header.

All functions here are pure: no memory, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from ucma_core.records import RetrievalResult

__all__ = ["content_free", "fresh", "is_recall_output", "text_key"]

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
_RECALL_LINE = re.compile(r"^- \[\d{4}-\d{2}-\d{2}[^\]\n]*\] \([^)\n]+\) ", re.MULTILINE)
_RECALL_HEADERS = ("relevant memories",)


def text_key(text: str) -> str:
    """``text`` reduced to its words, case-folded: two texts with the same key say the same thing.

    Examples:
        >>> text_key("Ana lives in  Lisbon.") == text_key("ana lives in lisbon")
        True
    """
    return " ".join(_WORD.findall(text.casefold()))


def content_free(text: str) -> bool:
    """Whether ``text`` says nothing worth recalling: no word at all, or a short greeting,
    thanks or acknowledgement.

    Examples:
        >>> [content_free(t) for t in ("Noted.", "Good luck!", "Thanks a lot 🙂", "Hi!", "  ")]
        [True, True, True, True, True]
        >>> content_free("I moved to Lisbon.")
        False
    """
    words = _WORD.findall(text.casefold())
    return not words or (len(words) <= _PLEASANTRY_WORDS and all(w in _PLEASANTRIES for w in words))


def is_recall_output(text: str) -> bool:
    """Whether ``text`` is (or holds) a rendered recall block rather than something said.

    Examples:
        >>> is_recall_output("Relevant memories:\\n- [2026-03-04] (fact) Ana lives in Lisbon")
        True
        >>> is_recall_output("I live in Lisbon")
        False
    """
    head = text.lstrip().casefold()
    return head.startswith(_RECALL_HEADERS) or _RECALL_LINE.search(text) is not None


def fresh(
    results: Sequence[RetrievalResult],
    *,
    ids: Collection[str] = (),
    texts: Iterable[str] = (),
    k: int | None = None,
) -> list[RetrievalResult]:
    """The results worth showing, in their order: at most ``k`` of them.

    Args:
        results: what ``remember`` returned, best first.
        ids: memory ids and message ids already shown (the conversation window).
        texts: texts already shown (the window's turns).
        k: keep at most this many (``None``: all).

    Examples:
        >>> fresh([]) == []
        True
    """
    seen = {text_key(t) for t in texts}
    seen.discard("")
    out: list[RetrievalResult] = []
    for result in results:
        if k is not None and len(out) >= k:
            break
        message_id = result.record.metadata.get("message_id")
        if result.id in ids or (isinstance(message_id, str) and message_id in ids):
            continue
        key = text_key(result.content)
        if key in seen or content_free(result.content) or is_recall_output(result.content):
            continue
        seen.add(key)
        out.append(result)
    return out
