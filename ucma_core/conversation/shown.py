"""What a recall block leaves out: what the conversation already shows, and what says nothing.

One rule for every adapter (:class:`~ucma_core.conversation.loop.Conversation` applies it):

* a memory that *is* a message of the window (its memory id, or the ``message_id``
  it was stored with, is among the window's ids) or says the same text as one;
* a second memory with the same text as a better-ranked one (one fact three times);
* a content-free turn: greetings, thanks, acknowledgements ("Noted.", "Good luck!"), also
  when they name someone a result was said by ("Bye, Sam!"), or text without a single word;
* a copy of recall output: a memory whose text holds a rendered recall line
  (``- [2026-03-04] (fact) …``) or starts with a recall header.

All functions here are pure: no memory, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from ucma_core.records import RetrievalResult
from ucma_core.retrieval.substance import content_free

__all__ = ["content_free", "fresh", "is_recall_output", "text_key"]

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
    people = {p for r in results for p in getattr(r.record, "participants", ())}
    out: list[RetrievalResult] = []
    for result in results:
        if k is not None and len(out) >= k:
            break
        message_id = result.record.metadata.get("message_id")
        if result.id in ids or (isinstance(message_id, str) and message_id in ids):
            continue
        key = text_key(result.content)
        if key in seen or content_free(result.content, names=people) or is_recall_output(result.content):
            continue
        seen.add(key)
        out.append(result)
    return out
