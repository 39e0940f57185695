"""The shared part of an embedder that delegates to another library's embedding model.

The LangChain and LlamaIndex adapters each wrap their framework's embedding object; what
they share lives here once: checking ``name`` and ``dimension``, measuring the dimension
on first use, checking the texts, and turning whatever the other library raises into a
:class:`~ucma_core.errors.ProviderError`. A subclass only says how to embed a batch.

Examples:
    >>> class Upper(BridgedEmbedder):
    ...     library = "toy"
    ...     def _embed_batch(self, texts):
    ...         return [[float(len(t)), 1.0] for t in texts]
    >>> emb = Upper(name="toy:upper")
    >>> emb.dimension, emb.embed(["ab", "c"])
    (2, [[2.0, 1.0], [1.0, 1.0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ucma_core.embedders.cache import check_texts
from ucma_core.errors import InvalidInputError, ProviderError, UCMAError

__all__ = ["BridgedEmbedder"]

#: The text embedded once to learn a model's vector length.
PROBE = "dimension probe"


class BridgedEmbedder:
    """Base of an embedder that calls another library's model (see the module docstring).

    Args:
        name: the name recorded in the memory folder (non-empty).
        dimension: the vector length; when ``None`` it is measured once, on first use, by
            embedding one short text.

    Raises:
        InvalidInputError: a bad ``name`` or ``dimension``.
    """

    #: How errors name the wrapped model's library ("LangChain embeddings"…).
    library: ClassVar[str] = "embedding model"

    def __init__(self, *, name: str, dimension: int | None = None) -> None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError(f"name must be a non-empty str, got {name!r}")
        if dimension is not None and (
            isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1
        ):
            raise InvalidInputError(f"dimension must be a positive int, got {dimension!r}")
        self._name = name
        self._dimension = dimension

    @property
    def name(self) -> str:
        """The embedder's name, recorded in the memory folder."""
        return self._name

    @property
    def dimension(self) -> int:
        """The length of every vector (measured on first use if not given)."""
        if self._dimension is None:
            probe = self.embed([PROBE])
            self._dimension = len(probe[0]) if probe else 0
            if self._dimension < 1:
                raise ProviderError(f"embedder {self._name!r} returned an empty vector")
        return self._dimension

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings.
            ProviderError: the wrapped model failed.
        """
        batch = check_texts(texts)
        if not batch:
            return []
        try:
            return [list(vector) for vector in self._embed_batch(batch)]
        except UCMAError:
            raise
        except Exception as e:  # a model bridge: whatever the other library raises is a provider failure
            raise ProviderError(f"{self.library} {self._name!r} failed: {e}") from e

    def _embed_batch(self, texts: list[str]) -> Sequence[Sequence[float]]:
        """The wrapped model's vectors for ``texts`` (a non-empty list of strings)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"
