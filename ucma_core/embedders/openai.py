"""Embeddings from the OpenAI API (or any server that speaks it) through the ``openai`` SDK.

The SDK is imported only when the first request is made, so importing this
module costs nothing when ``ucma[openai]`` is not installed. With no ``api_key``
the SDK reads ``OPENAI_API_KEY`` itself, at that moment.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ucma_core.embedders.cache import check_int, check_texts, check_vectors
from ucma_core.errors import ConfigurationError, ProviderError
from ucma_core.openai_client import OpenAIClientOwner, import_openai

__all__ = ["KNOWN_DIMENSIONS", "OpenAIEmbedder"]


#: Native output sizes of OpenAI's embedding models.
KNOWN_DIMENSIONS: Mapping[str, int] = MappingProxyType(
    {
        "text-embedding-3-small": 1536,
        "text-embedding-3-large": 3072,
        "text-embedding-ada-002": 1536,
    }
)


class OpenAIEmbedder(OpenAIClientOwner):
    """Embeds texts with an OpenAI embedding model.

    Args:
        model: The embedding model.
        dimension: Vector length. Defaults to the model's native size; for the
            ``text-embedding-3`` models a smaller value is sent as ``dimensions``.
            Required for models not in :data:`KNOWN_DIMENSIONS` (e.g. on an
            OpenAI-compatible server).
        client: A ready ``openai.OpenAI`` (or ``AzureOpenAI``) client. When given,
            ``api_key``, ``base_url``, ``timeout`` and ``max_retries`` are not used.
        api_key: API key; by default the SDK reads ``OPENAI_API_KEY``.
        base_url: API root, for proxies and OpenAI-compatible servers.
        timeout: Seconds per HTTP request.
        max_retries: Retries the SDK makes on connection errors, 429 and 5xx.
        batch_size: Texts per request (the API accepts at most 2048).

    Nothing is imported or connected until the first ``embed`` call.

    Raises:
        ConfigurationError: Unknown model without ``dimension``, a dimension the
            model cannot produce, or ``client`` together with ``api_key``/``base_url``.
        InvalidInputError: A numeric argument is out of range.

    Examples:
        >>> embedder = OpenAIEmbedder("text-embedding-3-small", dimension=256)
        >>> embedder.name
        'openai:text-embedding-3-small:256'
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimension: int | None = None,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        batch_size: int = 256,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError("model must be a non-empty string such as 'text-embedding-3-small'")
        self._model = model
        self._dimension, self._send_dimensions = _resolve_dimension(model, dimension)
        check_int("batch_size", batch_size, 1, 2048)
        OpenAIClientOwner.__init__(
            self, client=client, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        """Identifier recorded in memory folders: ``openai:<model>:<dimension>``."""
        return f"openai:{self._model}:{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    @property
    def model(self) -> str:
        """The embedding model asked for."""
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self._model!r}, dimension={self._dimension})"

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one vector per text, in order, in batches of ``batch_size``.

        Args:
            texts: The texts to embed.

        Returns:
            One list of ``dimension`` floats per text.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings.
            DependencyMissingError: The ``openai`` package is not installed.
            ConfigurationError: No API key was given or found.
            ProviderError: The API failed (after the SDK's retries) or answered
                something unusable.
        """
        items = check_texts(texts)
        if not items:
            return []
        openai = import_openai("OpenAIEmbedder")
        client = self._get_client(openai)
        vectors: list[list[float]] = []
        for start in range(0, len(items), self._batch_size):
            vectors.extend(self._embed_batch(openai, client, items[start : start + self._batch_size]))
        return vectors

    def _embed_batch(self, openai: Any, client: Any, batch: list[str]) -> list[list[float]]:
        request: dict[str, Any] = {"model": self._model, "input": batch, "encoding_format": "float"}
        if self._send_dimensions:
            request["dimensions"] = self._dimension
        try:
            response = client.embeddings.create(**request)
        except openai.OpenAIError as e:
            raise ProviderError(
                f"OpenAI embeddings request ({self._model}, {len(batch)} texts) failed: {e}"
            ) from e
        except ValueError as e:  # a body that is not JSON
            raise ProviderError(f"OpenAI embeddings response for {self._model} is not valid JSON: {e}") from e
        try:
            data = sorted(response.data, key=lambda item: item.index)
            indexes = [item.index for item in data]
            raw = [item.embedding for item in data]
        except (AttributeError, TypeError) as e:
            raise ProviderError(f"OpenAI embeddings response for {self._model} is malformed: {e}") from e
        if indexes != list(range(len(batch))):
            raise ProviderError(
                f"OpenAI embeddings response for {self._model} has indexes {indexes[:10]}, "
                f"expected 0..{len(batch) - 1}"
            )
        return check_vectors(raw, count=len(batch), dimension=self._dimension, source=self.name)


def _resolve_dimension(model: str, dimension: int | None) -> tuple[int, bool]:
    """The vector length, and whether it must be sent as the API's ``dimensions``."""
    native = KNOWN_DIMENSIONS.get(model)
    if dimension is None:
        if native is None:
            raise ConfigurationError(
                f"unknown embedding model {model!r}: pass dimension= (known: {', '.join(KNOWN_DIMENSIONS)})"
            )
        return native, False
    check_int("dimension", dimension, 1, None)
    if native is None or dimension == native:
        return dimension, False
    if not model.startswith("text-embedding-3"):
        raise ConfigurationError(f"{model} always returns {native} dimensions; it cannot give {dimension}")
    if dimension > native:
        raise ConfigurationError(f"{model} gives at most {native} dimensions, not {dimension}")
    return dimension, True
