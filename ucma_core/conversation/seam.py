"""What every adapter does at the seam with what a framework hands it.

Three rules, written once so that LangChain, LangGraph and LlamaIndex agree:

* **The user must be stated.** :func:`stated_user` gives the user of one run from
  the adapter's fixed ``user_id`` and what the run carries; with neither it raises
  :class:`~ucma_core.errors.UserNotStatedError` unless the adapter was built with
  ``user_id=None`` on purpose (:data:`UNSET` is the default that means "not said").
* **Ordinary chat text is never refused.** :func:`clean_text` turns any ``str``
  into text the core stores (NUL characters and lone surrogate halves replaced)
  and says what it changed.
* **A recall query is clipped, never an error.** :func:`recall_query` makes a
  bounded query from any user message (a pasted 150,000-character log included).
"""

from __future__ import annotations

from typing import Final

from ucma_core.errors import UserNotStatedError

__all__ = ["QUERY_CHARS", "UNSET", "Unset", "clean_text", "recall_query", "stated_user"]

#: Characters of a user message used as a recall query (head and tail of longer ones).
QUERY_CHARS: Final = 2000
_GAP = " … "


class Unset:
    """Type of :data:`UNSET`; there is only one instance."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


#: The default of an adapter's ``user_id``: nothing was said. ``None`` said "no user".
UNSET: Final = Unset()


def stated_user(fixed: str | Unset | None, given: str | None, *, adapter: str, where: str) -> str | None:
    """The user of one run: the run's own (``given``), else the adapter's ``fixed`` one.

    Args:
        fixed: the adapter's ``user_id``: a str (always this user), ``None`` (the app
            said it has no users) or :data:`UNSET` (nothing said).
        given: the user the run carries (its context or config), or ``None``.
        adapter: the adapter's name, for the message (``"UCMAMiddleware"``).
        where: how a run passes its user, for the message.

    Raises:
        UserNotStatedError: neither gives a user and ``fixed`` is :data:`UNSET`, or the
            run's user contradicts a fixed one.

    Examples:
        >>> stated_user("ana", None, adapter="X", where="context={'user_id': ...}")
        'ana'
        >>> stated_user(None, None, adapter="X", where="context={'user_id': ...}") is None
        True
        >>> stated_user(UNSET, None, adapter="X", where="context={'user_id': ...}")
        Traceback (most recent call last):
        ...
        ucma_core.errors.UserNotStatedError: X received no user_id: pass X(memory, user_id=...), or \
context={'user_id': ...} per run; an app without users says so with X(memory, user_id=None)
    """
    if isinstance(fixed, str):
        if given is not None and given != fixed:
            raise UserNotStatedError(f"the run's user_id={given!r} contradicts {adapter}'s user_id={fixed!r}")
        return fixed
    if given is not None:
        return given
    if fixed is None:
        return None
    raise UserNotStatedError(
        f"{adapter} received no user_id: pass {adapter}(memory, user_id=...), or {where} per run; "
        f"an app without users says so with {adapter}(memory, user_id=None)"
    )


def clean_text(text: str) -> tuple[str, list[str]]:
    """``text`` made storable, and a note per kind of change (empty when none).

    NUL characters become spaces and lone surrogate halves become U+FFFD.

    Examples:
        >>> clean_text("a\\x00b")
        ('a b', ['1 NUL character replaced by a space'])
        >>> clean_text("ok")
        ('ok', [])
    """
    notes: list[str] = []
    nuls = text.count("\x00")
    if nuls:
        text = text.replace("\x00", " ")
        notes.append(f"{nuls} NUL character{'s' if nuls > 1 else ''} replaced by a space")
    if text.isascii():
        return text, notes
    try:
        text.encode("utf-8")
        return text, notes
    except UnicodeEncodeError:
        pass
    bad = sum(1 for c in text if 0xD800 <= ord(c) <= 0xDFFF)
    if bad:
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
        notes.append(f"{bad} lone surrogate{'s' if bad > 1 else ''} replaced by U+FFFD")
    return text, notes


def recall_query(text: str, max_chars: int = QUERY_CHARS) -> str:
    """A recall query from a user message: cleaned, and for a long message its first and last
    ``max_chars // 2`` characters (where questions usually are); ``""`` when blank.

    Examples:
        >>> recall_query("  where do I live?  ")
        'where do I live?'
        >>> len(recall_query("x" * 150_000)) <= 2000 + 3
        True
    """
    cleaned, _ = clean_text(text)
    cleaned = cleaned.strip()
    if len(cleaned) <= max_chars:
        return cleaned
    half = max_chars // 2
    return cleaned[:half].rstrip() + _GAP + cleaned[-half:].lstrip()
