"""One open :class:`~ucma_core.Memory` per folder per process, for code that may run twice.

A memory folder is locked by the process that opens it, so a second ``Memory(folder)``
in the same process fails while the first is open. Code that a host runs more than once
per process — a module that LangGraph's server (``langgraph dev``, ``langgraph up``)
imports once for the graph and again for each ``checkpointer`` / ``store`` factory of
``langgraph.json``, a factory called once per worker thread, a notebook cell run again —
should get its memory from :func:`shared_memory`: the first call opens the folder, later
calls for the same folder get that same object while it is open. Memories opened here
are closed at interpreter exit, as every memory still open is (:mod:`~ucma_core.shutdown`;
an attached checkpointer stores what it queued first).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ucma_core.config import MemoryConfig
from ucma_core.errors import ConfigurationError, InvalidInputError
from ucma_core.memory import Memory
from ucma_core.protocols import Clock, Embedder, ImportanceScorer
from ucma_core.storage.postgres.url import is_postgres_url
from ucma_core.tokens import TokenCounter

__all__ = ["shared_memory"]

_lock = threading.Lock()
_open: dict[str, Memory] = {}


def _key(path: str | Path) -> str:
    """The folder's absolute, symlink-free path (a ``postgresql://`` URL as given)."""
    if is_postgres_url(path):
        return str(path)
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"path must be a str or a path, not {type(path).__name__}")
    text = os.fspath(path)
    if not text.strip():
        raise InvalidInputError("the memory folder path is empty; pass a folder")
    return str(Path(text).expanduser().resolve())


def _is_open(memory: Memory) -> bool:
    return not memory._closed  # the core's own flag: Memory.close() sets it


def shared_memory(
    path: str | Path,
    *,
    config: MemoryConfig | None = None,
    embedder: Embedder | None = None,
    provider: ImportanceScorer | None = None,
    clock: Clock | None = None,
    token_counter: TokenCounter | None = None,
) -> Memory:
    """The memory at ``path`` open in this process: opened by the first call, the same object
    for every later call naming the same folder (however spelt) until it is closed.

    The first call's arguments open it (as ``Memory(path, ...)``); a later call that passes a
    different ``config`` is refused rather than given a memory tuned otherwise. Closing the
    returned memory closes it for every caller; the next call opens it again. Memories still
    open at interpreter exit are closed then.

    Args:
        path: the memory folder, or a ``postgresql://`` URL.
        config: tuning for the first open (later calls: ``None`` or an equal config).
        embedder: the embedder for the first open (later calls' embedders are not used).
        provider: the importance scorer for the first open.
        clock: the clock for the first open.
        token_counter: the token counter for the first open.

    Returns:
        The shared :class:`~ucma_core.Memory`.

    Raises:
        ConfigurationError: the memory is already open here with another ``config``.
        MemoryLockedError: another process holds the folder.

    Examples:
        >>> import tempfile
        >>> from ucma_core import shared_memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> folder = tempfile.mkdtemp()
        >>> first = shared_memory(folder, embedder=HashingEmbedder())
        >>> first is shared_memory(folder + "/.", embedder=HashingEmbedder())
        True
        >>> first.close()
        >>> again = shared_memory(folder, embedder=HashingEmbedder())
        >>> again is first, again.path == first.path
        (False, True)
        >>> again.close()
    """
    key = _key(path)
    with _lock:
        memory = _open.get(key)
        if memory is not None and _is_open(memory):
            if config is not None and config != memory.config:
                raise ConfigurationError(
                    f"the memory at {key} is already open in this process with another "
                    "MemoryConfig; pass the same config (or none) to every shared_memory() call"
                )
            return memory
        memory = Memory(
            path,
            config=config,
            embedder=embedder,
            provider=provider,
            clock=clock,
            token_counter=token_counter,
        )
        _open[key] = memory
        return memory
