"""Every error UCMA raises, in one hierarchy.

::

    UCMAError
    ├── InvalidInputError (ValueError)        bad argument from the caller
    │   ├── UnknownMemoryTypeError             a memory type name we do not know
    │   └── UserNotStatedError                 an adapter got no user and was not told "no user"
    ├── MemoryNotFoundError (LookupError)      an id that is not in this memory
    ├── ConfigurationError (ValueError)        a config or folder that cannot be used as asked
    │   └── EmbedderMismatchError              folder created with another embedder
    ├── StorageError (OSError)                 the memory folder cannot be read or written
    │   ├── DiskFullError                      no space left: nothing was stored, retry once freed
    │   ├── MemoryLockedError                  another open Memory holds the folder's lock
    │   ├── SchemaVersionError                 folder written by an incompatible version
    │   ├── CorruptStoreError                  a file in the folder cannot be parsed
    │   └── RepairNeededError                  opening as is would lose data: restore or repair
    ├── ProviderError (RuntimeError)           an embedder or model provider failed
    │   └── DependencyMissingError (ImportError) an optional extra is not installed
    └── ClosedMemoryError (RuntimeError)       the Memory was used after close()

Callers can catch ``UCMAError`` for everything, or the builtin base that fits
(``ValueError`` for bad input, ``LookupError`` for a missing id, ``OSError`` for
storage trouble).
"""

from __future__ import annotations

__all__ = [
    "ClosedMemoryError",
    "ConfigurationError",
    "CorruptStoreError",
    "DependencyMissingError",
    "DiskFullError",
    "EmbedderMismatchError",
    "InvalidInputError",
    "MemoryLockedError",
    "MemoryNotFoundError",
    "ProviderError",
    "RepairNeededError",
    "SchemaVersionError",
    "StorageError",
    "UCMAError",
    "UnknownMemoryTypeError",
    "UserNotStatedError",
]


class UCMAError(Exception):
    """Root of every error raised by UCMA."""


class InvalidInputError(UCMAError, ValueError):
    """An argument was malformed: empty or oversized content, a NaN, a wrong type."""


class UnknownMemoryTypeError(InvalidInputError):
    """A memory type name that is not one of ``MemoryType``'s values."""


class UserNotStatedError(InvalidInputError):
    """A framework adapter received no ``user_id`` from anywhere and was not built with
    ``user_id=None`` (the explicit "this app has no users" choice)."""


class MemoryNotFoundError(UCMAError, LookupError):
    """The memory id is not stored in this memory (or not in the caller's scope)."""


class ConfigurationError(UCMAError, ValueError):
    """The configuration, or the folder it points to, cannot be used as asked."""


class EmbedderMismatchError(ConfigurationError):
    """The folder was created with an embedder of another name or dimension."""


class StorageError(UCMAError, OSError):
    """The memory folder could not be read or written."""


class MemoryLockedError(StorageError):
    """Another open :class:`~ucma_core.Memory` holds the write lock on this memory folder: one in
    this same process (the message says to close it) or in another process (with its pid)."""


class SchemaVersionError(StorageError):
    """The folder was written by a UCMA version whose on-disk format we cannot read."""


class CorruptStoreError(StorageError):
    """A file in the memory folder could not be parsed."""


class DiskFullError(StorageError):
    """The volume holding the memory folder (or Chroma) has no space left.

    The call that raised it stored nothing; the memory works again, without a
    restart, once space is freed.
    """


class RepairNeededError(StorageError):
    """Opening the folder as it is would lose memories (a file or the Chroma collection is
    missing or does not belong to it).

    Nothing was changed. ``problems`` lists what is wrong and ``plan`` what
    :meth:`ucma_core.Memory.repair` would do (including what it would drop).
    """

    def __init__(self, message: str, *, problems: tuple[str, ...] = (), plan: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems
        self.plan = plan


class ProviderError(UCMAError, RuntimeError):
    """An embedder or model provider failed or answered something unusable."""


class DependencyMissingError(ProviderError, ImportError):
    """An optional dependency (an extra such as ``ucma[local]``) is not installed."""


class ClosedMemoryError(UCMAError, RuntimeError):
    """The memory was used after ``close()``."""
