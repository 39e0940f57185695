"""Where a shared memory lives: a ``postgresql://`` URL.

``Memory("postgresql://user@host:5432/db")`` opens a memory kept in that database;
every other path is a memory folder. The URL's ``memory`` query parameter names the
memory inside the database (a PostgreSQL schema ``ucma_<memory>``; default
``default``), so one database can hold several memories. Everything else in the URL is
handed to libpq unchanged (``sslmode=…``, ``connect_timeout=…``).

>>> t = PostgresTarget.parse("postgresql://app:secret@db:5432/mem?memory=support&sslmode=require")
>>> t.schema, t.display
('ucma_support', 'postgresql://app@db:5432/mem?memory=support')
>>> t.conninfo
'postgresql://app:secret@db:5432/mem?sslmode=require'
>>> is_postgres_url("postgres://db/mem"), is_postgres_url("./memory")
(True, False)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

from ucma_core.errors import InvalidInputError

__all__ = ["PostgresTarget", "is_postgres_url"]

_SCHEMES = ("postgresql://", "postgres://")
_NAME = re.compile(r"^[a-z0-9_]{1,40}$")


def is_postgres_url(path: object) -> bool:
    """Whether ``path`` is a ``postgresql://`` (or ``postgres://``) URL rather than a folder."""
    return isinstance(path, str) and path.strip().lower().startswith(_SCHEMES)


@dataclass(frozen=True)
class PostgresTarget:
    """A parsed ``postgresql://`` URL: what to connect to and which memory in it."""

    #: The libpq connection string (the URL without ``memory=``; holds the password if given).
    conninfo: str
    #: The memory's name inside the database.
    memory: str
    #: The URL without its password, for messages.
    display: str

    @property
    def schema(self) -> str:
        """The PostgreSQL schema holding this memory's tables."""
        return f"ucma_{self.memory}"

    @classmethod
    def parse(cls, url: str) -> PostgresTarget:
        """Parse ``url``; a bad memory name raises :class:`InvalidInputError`."""
        text = os.fspath(url).strip()
        parts = urlsplit(text)
        if parts.scheme.lower() not in ("postgresql", "postgres"):
            raise InvalidInputError(f"{url!r} is not a postgresql:// URL")
        if not parts.path.strip("/"):
            raise InvalidInputError(
                f"the URL {cls._redact(parts)} names no database; write postgresql://user@host:port/database"
            )
        query = parse_qsl(parts.query, keep_blank_values=True)
        memory = "default"
        rest: list[tuple[str, str]] = []
        for key, value in query:
            if key == "memory":
                memory = value
            else:
                rest.append((key, value))
        if not _NAME.match(memory):
            raise InvalidInputError(
                f"memory name {memory!r} in the URL must be 1-40 characters of a-z, 0-9 and _"
            )
        conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), ""))
        shown = urlsplit(cls._redact(parts))
        display = urlunsplit((shown.scheme, shown.netloc, shown.path, f"memory={memory}", ""))
        return cls(conninfo=conninfo, memory=memory, display=display)

    @staticmethod
    def _redact(parts: SplitResult) -> str:
        host = parts.hostname or ""
        netloc = (f"{parts.username}@" if parts.username else "") + host
        if parts.port:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
