"""Embedders: turn texts into vectors.

``HashingEmbedder`` is deterministic and offline (tests, demos);
``LocalMiniLMEmbedder`` runs all-MiniLM-L6-v2 locally (``ucma[local]``);
``OpenAIEmbedder`` calls the OpenAI API (``ucma[openai]``); ``CachedEmbedder``
puts an LRU cache in front of any of them. Importing this package imports none
of the optional dependencies.
"""

from ucma_core.embedders.cache import CachedEmbedder, as_embedder
from ucma_core.embedders.hashing import HashingEmbedder
from ucma_core.embedders.local import LocalMiniLMEmbedder
from ucma_core.embedders.openai import OpenAIEmbedder

__all__ = [
    "CachedEmbedder",
    "HashingEmbedder",
    "LocalMiniLMEmbedder",
    "OpenAIEmbedder",
    "as_embedder",
]
