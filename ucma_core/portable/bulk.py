"""Bulk observe: many items through ``observe_many``, a batch at a time, with progress."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ucma_core.errors import InvalidInputError
from ucma_core.progress import ProgressCallback, notify

__all__ = ["observe_all"]


class _Observer(Protocol):
    def observe_many(self, items: Iterable[str | Mapping[str, Any]], **defaults: Any) -> list[str | None]: ...


def observe_all(
    target: _Observer,
    items: Sequence[str | Mapping[str, Any]],
    *,
    batch_size: int = 500,
    progress: ProgressCallback | None = None,
    **defaults: Any,
) -> list[str | None]:
    """:meth:`~ucma_core.Memory.observe_many` over many items, ``batch_size`` at a time,
    reporting ``(done, total, "observe")`` after each batch.

    ``target`` is a :class:`~ucma_core.Memory` or a :class:`~ucma_core.ScopedMemory`.
    Each batch is validated and stored on its own: if one fails, the batches before
    it are stored (their ids were reported through ``progress``) and keyed items can
    simply be observed again.
    """
    if isinstance(items, (str, bytes, Mapping)):
        raise InvalidInputError("observe_all takes a list of items (str or dict)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be an int >= 1, got {batch_size!r}")
    ids: list[str | None] = []
    total = len(items)
    notify(progress, 0, total, "observe")
    for start in range(0, total, batch_size):
        ids.extend(target.observe_many(items[start : start + batch_size], **defaults))
        notify(progress, len(ids), total, "observe")
    return ids
