"""What users plug into UCMA. Contracts only: implementations live elsewhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "Embedder", "ImportanceScorer"]

#: A callable returning the current time in epoch seconds (default ``time.time``).
Clock = Callable[[], float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into fixed-size vectors.

    ``name`` identifies the model (it is recorded in the memory folder, so a folder
    is never searched with vectors from another model) and ``dimension`` is the
    length of every vector ``embed`` returns.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one vector per text, in order."""
        ...


@runtime_checkable
class ImportanceScorer(Protocol):
    """Scores how much an observation matters, 0 (noise) to 1 (must keep)."""

    def score_importance(self, content: str, *, source: str) -> float:
        """Return importance in [0, 1] for ``content`` observed from ``source``."""
        ...
