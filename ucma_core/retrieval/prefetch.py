"""A read of candidates' vectors started early in a search, waited for exactly once.

:meth:`~ucma_core.retrieval.search.Retriever.search` starts reading, in one read, the vectors
of every candidate dense search missed (keyword, entity, hop, context and graph ones) on the
vector store's worker while it adds context and graph evidence.
:class:`Prefetch` holds that read: the search takes its answer with :meth:`Prefetch.read`,
and :meth:`Prefetch.settle` (in a ``finally``) waits for it when a stage in between
raised, so no read is left running on a store about to close.

Examples:
    >>> import numpy as np
    >>> early = Prefetch({"m1"}, lambda: {"m1": np.ones(2, dtype=np.float32)})
    >>> sorted(early.read())
    ['m1']
    >>> early.settle()  # already read: nothing to wait for
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

from ucma_core.errors import StorageError

__all__ = ["Prefetch"]


class Prefetch:
    """The vectors of ``asked`` being read; ``wait`` returns them (it must be called once)."""

    def __init__(self, asked: set[str], wait: Callable[[], dict[str, np.ndarray]]) -> None:
        self.asked = asked
        self._wait: Callable[[], dict[str, np.ndarray]] | None = wait

    def read(self) -> dict[str, np.ndarray]:
        """The vectors read (waits for the read to finish)."""
        wait, self._wait = self._wait, None
        if wait is None:
            raise RuntimeError("the prefetched vectors were already read or settled")
        return wait()

    def settle(self) -> None:
        """Wait for the read unless :meth:`read` took it. A storage error of the read is dropped:
        this runs while the error of the stage that raised is on its way to the caller."""
        wait, self._wait = self._wait, None
        if wait is not None:
            with contextlib.suppress(StorageError):
                wait()
