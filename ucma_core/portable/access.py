"""The one place the portable package reaches past :class:`~ucma_core.Memory`'s public API.

The core has no public call that reads a memory's vector and graph bookkeeping or
stores a record under a given id; export and import need both. Until it has one
(proposed: ``Memory.restore``), they go through :func:`folder`, which hands out the
open folder's :class:`~ucma_core.stores.folder.FolderStores` under the memory's lock.
Everything done with the stores goes through their own public methods.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ucma_core.memory import Memory
    from ucma_core.stores.folder import FolderStores

__all__ = ["folder"]


@contextmanager
def folder(memory: Memory) -> Iterator[FolderStores]:
    """The open folder's stores, under the memory's lock.

    This is the only place this module reaches past :class:`~ucma_core.Memory`'s public
    API: the core has no public call that reads a memory's vector and graph bookkeeping
    or stores a record under a given id (proposed to the core as ``Memory.restore``).
    What is done with the stores goes through their own public methods.
    """
    with memory._lock:
        memory._check_open()
        yield memory._stores
