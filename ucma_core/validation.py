"""Argument checks shared by every write path. Each raises :class:`InvalidInputError`
with a message that says what was wrong, before anything is stored.

Strings must be valid Unicode that UTF-8 can store (no lone surrogates) and ids hold
no NUL character. Size limits that a caller may reasonably want to raise come from
:class:`~ucma_core.config.LimitsConfig` (pass ``limits=``; the defaults apply
otherwise).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, cast

from ucma_core.config import LimitsConfig
from ucma_core.errors import InvalidInputError

__all__ = [
    "EPOCH_MAX",
    "EPOCH_MIN",
    "check_content",
    "check_depth",
    "check_metadata",
    "check_names",
    "check_scope_id",
    "check_strings",
    "check_text",
    "check_time_range",
    "check_unit",
    "to_epoch",
]

_MAX_ID = 256
_MAX_TAG = 128
_DEFAULT_LIMITS = LimitsConfig()
#: Epoch seconds UCMA accepts: 0001-01-01 up to 1e11 (the year 5138). Larger numbers are
#: almost always milliseconds (JavaScript's ``Date.now()``), which are refused with a hint.
EPOCH_MIN = -62_135_596_800.0
EPOCH_MAX = 1e11


def check_text(value: str, what: str) -> str:
    """``value`` if UTF-8 can store it (no lone surrogate halves), else InvalidInputError."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInputError(
            f"{what} is not valid Unicode (a lone surrogate at position {e.start}); decode your input "
            "properly (e.g. errors='replace') before storing it"
        ) from None
    return value


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
    return check_text(value, what)


def check_scope_id(value: object, what: str) -> str | None:
    """``None`` or a non-empty str id of at most 256 characters (no NUL, valid Unicode)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str or None, not {type(value).__name__}")
    if not value.strip() or len(value) > _MAX_ID:
        raise InvalidInputError(f"{what} must be 1..{_MAX_ID} non-blank characters, got {value!r}")
    if "\x00" in value:
        raise InvalidInputError(f"{what} contains a NUL character")
    return check_text(value, what)


def check_depth(value: object, max_depth: int, what: str = "metadata", hint: str = "") -> None:
    """Refuse ``value`` when its dicts, lists and tuples nest more than ``max_depth`` levels
    (``value`` itself, when a container, is level 1).

    The walk uses no recursion, so a structure nested 100,000 deep (or one that contains
    itself) gets this :class:`InvalidInputError`, never a ``RecursionError``; check a value
    with it before ``json.dumps`` or any recursive walk.

    Examples:
        >>> check_depth({"a": [{"b": 1}]}, 3)
        >>> deep = {}
        >>> for _ in range(100_000):
        ...     deep = {"x": deep}
        >>> check_depth(deep, 32, "a Store value")
        Traceback (most recent call last):
        ...
        ucma_core.errors.InvalidInputError: a Store value is nested more than 32 levels deep
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            raise InvalidInputError(f"{what} is nested more than {max_depth} levels deep{hint}")
        stack.extend((child, depth + 1) for child in children)


def _shape(value: object, limits: LimitsConfig) -> None:
    """Check the nesting depth without recursion (a deep structure must not crash the check)."""
    check_depth(value, limits.max_metadata_depth, "metadata", " (MemoryConfig.limits.max_metadata_depth)")


def check_metadata(value: object, *, limits: LimitsConfig | None = None) -> dict[str, Any]:
    """A JSON object that survives a JSON round trip unchanged (so it comes back as given),
    within the size, key-count and depth limits."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"metadata must be a dict, not {type(value).__name__}")
    limits = limits or _DEFAULT_LIMITS
    if len(value) > limits.max_metadata_keys:
        raise InvalidInputError(
            f"metadata has {len(value):,} top-level keys, over the limit of {limits.max_metadata_keys:,} "
            "(each filterable key is kept in Chroma's schema for good; MemoryConfig.limits.max_metadata_keys)"
        )
    _shape(value, limits)
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InvalidInputError(f"metadata must be JSON-serialisable (str keys, finite numbers): {e}") from e
    except RecursionError as e:  # a structure that refers to itself
        raise InvalidInputError("metadata contains itself (a circular reference)") from e
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise InvalidInputError(
            f"metadata holds a string that is not valid Unicode (a lone surrogate): {e}"
        ) from e
    if size > limits.max_metadata_bytes:
        raise InvalidInputError(
            f"metadata is {size:,} bytes as JSON, over the limit of {limits.max_metadata_bytes:,} "
            "(MemoryConfig.limits.max_metadata_bytes); store large payloads elsewhere and keep a reference"
        )
    if json.loads(encoded) != value:
        raise InvalidInputError(
            "metadata must round-trip through JSON unchanged: use lists not tuples and str keys"
        )
    return value


def check_unit(value: object, what: str) -> float:
    """A finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{what} must be a number in [0, 1], not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError as e:
        raise InvalidInputError(f"{what} must be a finite number in [0, 1], got a huge int") from e
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidInputError(f"{what} must be a finite number in [0, 1], got {value!r}")
    return number


def to_epoch(value: object, what: str = "timestamp") -> float:
    """Epoch seconds from a ``datetime`` (naive means local time) or a finite number of
    seconds between the years 1 and 5138 (milliseconds are refused with a hint)."""
    if isinstance(value, datetime):
        try:
            return value.timestamp()
        except (OverflowError, ValueError, OSError) as e:
            raise InvalidInputError(f"{what} {value!r} cannot be converted to epoch seconds: {e}") from e
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{what} must be a datetime or epoch seconds, not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError as e:
        raise InvalidInputError(f"{what} is far out of range ({value!r})") from e
    if not math.isfinite(number):
        raise InvalidInputError(f"{what} must be finite, got {value!r}")
    if number > EPOCH_MAX:
        hint = (
            f" It looks like milliseconds (JavaScript's Date.now()): pass {number / 1000:.3f} seconds."
            if number < EPOCH_MAX * 1000
            else ""
        )
        raise InvalidInputError(f"{what} {value!r} is not epoch seconds (that is after the year 5138).{hint}")
    if number < EPOCH_MIN:
        raise InvalidInputError(f"{what} {value!r} is before the year 1")
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


def check_strings(
    value: object, what: str, *, max_len: int = _MAX_TAG, max_items: int | None = None
) -> tuple[str, ...]:
    """A tuple of non-blank strings from ``None``, a str or an iterable of str (order kept, no
    repeats), at most ``max_items`` of them."""
    if value is None:
        return ()
    if isinstance(value, (bytes, dict)):
        raise InvalidInputError(f"{what} must be a list of str, not {type(value).__name__}")
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    try:
        seen: dict[str, None] = {}
        for item in items:
            if not isinstance(item, str) or not item.strip() or len(item) > max_len:
                raise InvalidInputError(
                    f"every entry of {what} must be 1..{max_len} non-blank characters, got {item!r}"[:300]
                )
            if "\x00" in item:
                raise InvalidInputError(f"an entry of {what} contains a NUL character")
            seen[check_text(item.strip(), what)] = None
            if max_items is not None and len(seen) > max_items:
                raise InvalidInputError(
                    f"{what} has more than {max_items} entries (MemoryConfig.limits); each one is kept "
                    "as a key or matched on every write"
                )
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
    if isinstance(value, (bytes, dict)):
        raise InvalidInputError(f"{what} must be a list of str, not {type(value).__name__}")
    try:
        items: tuple[Any, ...] = tuple(cast(Iterable[Any], value))
    except TypeError as e:
        raise InvalidInputError(f"{what} must be a list of str, not {type(value).__name__}") from e
    return items
