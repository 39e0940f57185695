"""Every error UCMA raises, in one hierarchy.

::

    UCMAError
    ├── InvalidInputError (ValueError)        bad argument from the caller
    │   └── UnknownMemoryTypeError             a memory type name we do not know
    ├── MemoryNotFoundError (LookupError)      an id that is not in this memory
    ├── ConfigurationError (ValueError)        a config or folder that cannot be used as asked
    │   └── EmbedderMismatchError              folder created with another embedder
    ├── StorageError (OSError)                 the memory folder cannot be read or written
    │   ├── MemoryLockedError                  another process holds the folder's lock
    │   ├── SchemaVersionError                 folder written by an incompatible version
    │   └── CorruptStoreError                  a file in the folder cannot be parsed
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
    "EmbedderMismatchError",
    "InvalidInputError",
    "MemoryLockedError",
    "MemoryNotFoundError",
    "ProviderError",
    "SchemaVersionError",
    "StorageError",
    "UCMAError",
    "UnknownMemoryTypeError",
]


class UCMAError(Exception):
    """Root of every error raised by UCMA."""


class InvalidInputError(UCMAError, ValueError):
    """An argument was malformed: empty or oversized content, a NaN, a wrong type."""


class UnknownMemoryTypeError(InvalidInputError):
    """A memory type name that is not one of ``MemoryType``'s values."""


class MemoryNotFoundError(UCMAError, LookupError):
    """The memory id is not stored in this memory (or not in the caller's scope)."""


class ConfigurationError(UCMAError, ValueError):
    """The configuration, or the folder it points to, cannot be used as asked."""


class EmbedderMismatchError(ConfigurationError):
    """The folder was created with an embedder of another name or dimension."""


class StorageError(UCMAError, OSError):
    """The memory folder could not be read or written."""


class MemoryLockedError(StorageError):
    """Another process holds the write lock on this memory folder."""


class SchemaVersionError(StorageError):
    """The folder was written by a UCMA version whose on-disk format we cannot read."""


class CorruptStoreError(StorageError):
    """A file in the memory folder could not be parsed."""


class ProviderError(UCMAError, RuntimeError):
    """An embedder or model provider failed or answered something unusable."""


class DependencyMissingError(ProviderError, ImportError):
    """An optional dependency (an extra such as ``ucma[local]``) is not installed."""


class ClosedMemoryError(UCMAError, RuntimeError):
    """The memory was used after ``close()``."""
