"""Memories still open when the interpreter exits are closed then, as ``close()`` closes them.

A script or a notebook that ends without ``close()`` is the normal case, so the exit does
what :meth:`Memory.close <ucma_core.Memory.close>` does. Every memory that opened is
tracked here, weakly (a memory the program dropped is not kept alive for the exit), and
one ``atexit`` hook closes those still open, newest first. For each one:

1. its background consolidation (``start_consolidation``'s thread, a background
   :class:`~ucma_core.conversation.Cadence` cycle) is asked to stop, between two steps
   (see :mod:`ucma_core.background`);
2. its attachments store what they hold (a :class:`~ucma_core.conversation.WriteBehind`
   queue, the LangGraph checkpointer's outbox), given at most :data:`STORE_WAIT` seconds
   each, and are closed;
3. the exit waits at most :data:`LOCK_WAIT` seconds for the background consolidation to
   stop;
4. under its lock, the folder is closed: the access marks ``remember`` queued are written
   (a ``postgresql://`` memory commits the reader marks this worker kept), the vectors
   waiting for group commit go to Chroma, Chroma's vector index is saved and the bytes it
   wrote from unzeroed buffers are cleared, the graph is folded into a snapshot, and the
   folder's lock is released.

Bounds: when the interpreter runs ``atexit`` hooks it has already joined every thread that
is not a daemon, but a daemon thread may still be inside a call, holding the memory's lock.
The exit waits at most :data:`LOCK_WAIT` seconds for that lock, then leaves that memory as
a crash would (nothing acknowledged is lost, the journal holds it; the access marks still
queued are, which is logged). A memory in PostgreSQL also waits, as ``close()`` does, for
another worker process that holds the memory's write lock. The hook never raises: an error
is logged and the next memory is still closed. A child made by ``os.fork()`` closes none of
its parent's memories at its exit (they hold the parent's folder lock).

Order: ``atexit`` runs the hooks last registered first. This hook is registered when
``ucma_core`` is imported, after the :mod:`logging` module's own hook (so its warnings are
still written); a hook a program registers after importing ``ucma_core`` runs before it and
can still use its memories. It is UCMA's only ``atexit`` hook: write-behind queues, access
marks, group commit and the shared memories of :func:`~ucma_core.shared_memory` are all
part of ``close()`` and need none of their own.

Examples:
    >>> import tempfile
    >>> from ucma_core import Memory
    >>> from ucma_core.embedders import HashingEmbedder
    >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
    >>> mem in open_memories()  # the exit would close it
    True
    >>> mem.close()
    >>> mem in open_memories()
    False
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ucma_core.memory_base import MemoryBase

__all__ = ["LOCK_WAIT", "STORE_WAIT", "close_at_exit", "closed", "open_memories", "opened"]

#: Seconds the exit waits for a memory's lock held by a thread still running.
LOCK_WAIT = 5.0
#: Seconds the exit gives each attachment to store what it holds (embedding queued turns).
STORE_WAIT = 120.0

logger = logging.getLogger(__name__)

_guard = threading.Lock()
#: Every memory open in this process, weakly, keyed by the order it was opened in.
_open: weakref.WeakValueDictionary[int, MemoryBase] = weakref.WeakValueDictionary()
#: The key each tracked memory has in :data:`_open`.
_keys: weakref.WeakKeyDictionary[MemoryBase, int] = weakref.WeakKeyDictionary()
_numbers = itertools.count()


def opened(memory: MemoryBase) -> None:
    """``memory`` opened: close it at interpreter exit unless it is closed before."""
    with _guard:
        if memory not in _keys:
            key = next(_numbers)
            _keys[memory] = key
            _open[key] = memory


def closed(memory: MemoryBase) -> None:
    """``memory`` closed: the exit leaves it alone."""
    with _guard:
        key = _keys.pop(memory, None)
        if key is not None:
            _open.pop(key, None)


def open_memories() -> list[MemoryBase]:
    """The memories the exit would close, oldest first (it closes them newest first)."""
    with _guard:
        return [memory for _, memory in sorted(_open.items())]


def _in_forked_child() -> None:
    """A forked child's exit must not close its parent's memories: closing releases the
    folder's lock, which the child shares with the parent (``flock`` on an inherited file)."""
    global _guard
    _guard = threading.Lock()  # the parent's may have been held by another thread at the fork
    _open.clear()
    _keys.clear()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_in_forked_child)


@atexit.register
def close_at_exit() -> None:
    """Close every memory still open, newest first (see the module); never raises."""
    for memory in reversed(open_memories()):
        try:
            _close(memory)
        except Exception as e:  # the exit goes on, and the next memory is still closed
            logger.warning("UCMA could not close the memory at %s at exit: %s", memory.path, e, exc_info=True)
        finally:
            closed(memory)


def _close(memory: MemoryBase) -> None:
    """:meth:`MemoryBase.close` with bounded waits (see the module)."""
    if memory._closed:
        return
    memory._background.close()  # running cycles wind down while attachments store what they hold
    lock = memory._lock
    attached = list(reversed(memory._attached.values()))
    if attached:  # a writer's worker takes the lock: wait for it only if it can be had
        if not lock.acquire(timeout=LOCK_WAIT):
            _busy(memory)
            return
        lock.release()
    for attachment in attached:
        try:
            stored = attachment.flush(STORE_WAIT)
        except Exception as e:  # recorded by the attachment; its close still runs
            logger.warning("UCMA: %s of the memory at %s failed at exit: %s", attachment.name, memory.path, e)
            stored = True
        if not stored:
            logger.warning(
                "UCMA left the memory at %s open at exit: %s did not store what it holds within %.0f s "
                "(what it keeps in an outbox is stored when it is next opened)",
                memory.path,
                attachment.name,
                STORE_WAIT,
            )
            return
    for error in memory._close_attachments():
        logger.warning(
            "UCMA: closing an attachment of the memory at %s at exit failed: %s", memory.path, error
        )
    memory.stop_consolidation(LOCK_WAIT)
    if not lock.acquire(timeout=LOCK_WAIT):
        _busy(memory)
        return
    try:
        memory._close_folder()
    finally:
        lock.release()


def _busy(memory: MemoryBase) -> None:
    logger.warning(
        "UCMA left the memory at %s as a crash would at exit: a thread still running held it for %.0f s "
        "(nothing stored is lost; the access marks it queued are)",
        memory.path,
        LOCK_WAIT,
    )
