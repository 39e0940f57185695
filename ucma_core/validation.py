"""Argument checks shared by every write path. Each raises :class:`InvalidInputError`
with a message that says what was wrong, before anything is stored."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from ucma_core.errors import InvalidInputError

__all__ = [
    "check_content",
    "check_metadata",
    "check_names",
    "check_scope_id",
    "check_strings",
    "check_time_range",
    "check_unit",
    "to_epoch",
]

_MAX_ID = 256
_MAX_TAG = 128


def check_content(value: object, *, max_chars: int, what: str = "content") -> str:
    """Return ``value`` if it is a non-blank str of at most ``max_chars`` characters."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError(f"{what} is empty; there is nothing to remember")
    if len(value) > max_chars:
        raise InvalidInputError(
            f"{what} has {len(value):,} characters, over the limit of {max_chars:,}; split it into "
            "several observations or raise MemoryConfig(max_content_chars=...)"
        )
    if "\x00" in value:
        raise InvalidInputError(f"{what} contains a NUL character")
    return value


def check_scope_id(value: object, what: str) -> str | None:
    """``None`` or a non-empty str id of at most 256 characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str or None, not {type(value).__name__}")
    if not value.strip() or len(value) > _MAX_ID:
        raise InvalidInputError(f"{what} must be 1..{_MAX_ID} non-blank characters, got {value!r}")
    return value


def check_metadata(value: object) -> dict[str, Any]:
    """A JSON object that survives a JSON round trip unchanged (so it comes back as given)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"metadata must be a dict, not {type(value).__name__}")
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"metadata must be JSON-serialisable (str keys, finite numbers): {e}") from e
    if json.loads(encoded) != value:
        raise InvalidInputError(
            "metadata must round-trip through JSON unchanged: use lists not tuples and str keys"
        )
    return value


def check_unit(value: object, what: str) -> float:
    """A finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{what} must be a number in [0, 1], not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidInputError(f"{what} must be a finite number in [0, 1], got {value!r}")
    return number


def to_epoch(value: object, what: str = "timestamp") -> float:
    """Epoch seconds from a ``datetime`` (naive means local time) or a finite number."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{what} must be a datetime or epoch seconds, not {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidInputError(f"{what} must be finite, got {value!r}")
    return number


def check_time_range(value: object) -> tuple[float, float] | None:
    """``None`` or ``(start, end)`` in datetimes or epoch seconds with start <= end."""
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidInputError("time_range must be a (start, end) pair")
    start, end = to_epoch(value[0], "time_range start"), to_epoch(value[1], "time_range end")
    if start > end:
        raise InvalidInputError(f"time_range start {start} is after its end {end}")
    return start, end


def check_strings(value: object, what: str, *, max_len: int = _MAX_TAG) -> tuple[str, ...]:
    """A tuple of non-blank strings from ``None``, a str or an iterable of str (order kept, no repeats)."""
    if value is None:
        return ()
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    try:
        seen: dict[str, None] = {}
        for item in items:
            if not isinstance(item, str) or not item.strip() or len(item) > max_len:
                raise InvalidInputError(
                    f"every entry of {what} must be 1..{max_len} non-blank characters, got {item!r}"
                )
            seen[item.strip()] = None
    except TypeError as e:
        raise InvalidInputError(f"{what} must be a list of str, not {type(value).__name__}") from e
    return tuple(seen)


def check_names(value: object, what: str) -> tuple[Any, ...]:
    """Names from ``None``, one str (a single name, not its letters) or an iterable (the
    caller checks each entry)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    try:
        items: tuple[Any, ...] = tuple(cast(Iterable[Any], value))
    except TypeError as e:
        raise InvalidInputError(f"{what} must be a list of str, not {type(value).__name__}") from e
    return items
