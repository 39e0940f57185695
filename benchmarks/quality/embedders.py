"""The embedders the quality benchmark compares with: the library's own."""

from __future__ import annotations

from typing import Any

__all__ = ["make_embedder"]


def make_embedder(kind: str) -> tuple[Any, str]:
    """``(embedder, label)`` for ``kind`` in ``{"hashing", "local"}`` (local needs ``ucma[local]``)."""
    from ucma_core.embedders import HashingEmbedder, LocalMiniLMEmbedder

    if kind == "hashing":
        return HashingEmbedder(384), "ucma_core.embedders.HashingEmbedder(384)"
    if kind == "local":
        return LocalMiniLMEmbedder(), "ucma_core.embedders.LocalMiniLMEmbedder()"
    raise ValueError(f"unknown embedder {kind!r}; use 'hashing' or 'local'")
