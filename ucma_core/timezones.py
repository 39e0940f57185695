"""Time zones by name, for calendar reasoning (the router's "in May", rendered dates)."""

from __future__ import annotations

from datetime import timezone, tzinfo

__all__ = ["zone"]


def zone(name: str | None) -> tzinfo:
    """The time zone called ``name`` (an IANA name such as ``"Europe/Lisbon"``); ``None``
    or ``"UTC"`` is UTC. Raises ``KeyError`` / ``ValueError`` for an unknown name.

    Examples:
        >>> zone(None)
        datetime.timezone.utc
    """
    if not name or name.upper() == "UTC":
        return timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)
