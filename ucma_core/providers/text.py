"""Small text helpers the offline rules share: sentences, content words, casing, names."""

from __future__ import annotations

import re

from ucma_core.storage.keywords import STOPWORDS

__all__ = ["TOKEN", "content_words", "join", "lower_first", "same_name", "sentences"]

#: A word: letters and digits, no underscore.
TOKEN = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\be\.g\.)"
    r"(?<!\bi\.e\.)(?<!\bProf\.)\s+|\n+"
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (curly apostrophes made straight), without empty ones.

    Examples:
        >>> sentences("Dr. Patel called. It’s fixed!\\nThanks")
        ['Dr. Patel called.', "It's fixed!", 'Thanks']
    """
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry meaning (no stop words, no single letters).

    Examples:
        >>> content_words("The JWT tokens expire after 5 minutes")
        ['jwt', 'tokens', 'expire', '5', 'minutes']
    """
    return [t for t in TOKEN.findall(text.lower()) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]


def lower_first(text: str) -> str:
    """Lower-case a leading capital ("The tests fail" → "the tests fail"), not an acronym or "Ana's"."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower() and "'" not in first:
        return text[0].lower() + text[1:]
    return text


def join(parts: list[str], sep: str) -> str:
    """The non-empty ``parts`` joined by ``sep``."""
    return sep.join(p for p in parts if p)


def same_name(a: str, b: str) -> bool:
    """Whether two names are written the same, ignoring case, spacing and outer punctuation.

    Examples:
        >>> same_name("michael", " Michael. "), same_name("Ana", "Ana Silva")
        (True, False)
    """
    return _name_key(a) == _name_key(b)


def _name_key(name: str) -> str:
    return " ".join(name.casefold().split()).strip(" .,!;:'\"")
