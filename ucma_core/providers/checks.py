"""Input checks every provider runs, so each rejects the same bad input the same way."""

from __future__ import annotations

from collections.abc import Sequence

from ucma_core.errors import InvalidInputError
from ucma_core.providers.protocols import ExtractedFact

__all__ = ["check_episodes", "check_fact_pairs", "check_groups", "check_texts_and_speakers"]


def check_groups(groups: object) -> list[list[str]]:
    """``groups`` as a list of lists of strings.

    Raises:
        InvalidInputError: ``groups`` is not a list of lists of strings.
    """
    return [_strings(f"groups[{i}]", group) for i, group in enumerate(_sequence("groups", groups))]


def check_texts_and_speakers(texts: object, speakers: object) -> tuple[list[str], list[str | None]]:
    """The texts and one speaker (a string or ``None``) per text.

    Raises:
        InvalidInputError: ``texts`` is not a list of strings, or ``speakers`` does not hold
            one string or ``None`` per text.
    """
    items = _strings("texts", texts)
    who = _sequence("speakers", speakers)
    if len(who) != len(items):
        raise InvalidInputError(
            f"speakers has {len(who)} entries for {len(items)} texts; pass one speaker (or None) per text"
        )
    checked: list[str | None] = []
    for i, speaker in enumerate(who):
        if speaker is not None and not isinstance(speaker, str):
            raise InvalidInputError(f"speakers[{i}] must be a str or None, got {type(speaker).__name__}")
        checked.append(speaker)
    return items, checked


def check_episodes(episodes: object) -> list[str]:
    """``episodes`` as a list of strings.

    Raises:
        InvalidInputError: ``episodes`` is not a list of strings.
    """
    return _strings("episodes", episodes)


def check_fact_pairs(pairs: object) -> list[tuple[ExtractedFact, ExtractedFact]]:
    """``pairs`` as (older, newer) :class:`~ucma_core.providers.protocols.ExtractedFact` tuples.

    Raises:
        InvalidInputError: ``pairs`` is not a list of two-fact tuples.
    """
    out = []
    for i, pair in enumerate(_sequence("pairs", pairs)):
        if not (
            isinstance(pair, (tuple, list))
            and len(pair) == 2
            and all(isinstance(fact, ExtractedFact) for fact in pair)
        ):
            raise InvalidInputError(
                f"pairs[{i}] must be an (older, newer) tuple of ExtractedFact, got {pair!r}"
            )
        out.append((pair[0], pair[1]))
    return out


def _sequence(name: str, value: object) -> list[object]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInputError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _strings(name: str, value: object) -> list[str]:
    items = _sequence(name, value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidInputError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return items  # type: ignore[return-value]
