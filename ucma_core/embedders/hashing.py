"""A deterministic, offline embedder built on signed feature hashing.

No model and no network: each text becomes a bag of features (lower-cased words,
adjacent word pairs, and character trigrams of each word at a lower weight),
each feature is hashed with BLAKE2b into one of ``dimension`` buckets with a
sign, and the result is L2-normalised. Texts that share words therefore have a
higher cosine similarity than texts that do not. The same text gives the same
vector in every process and on every platform, which is what tests and offline
demos need; it carries no meaning beyond word overlap.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

import numpy as np

from ucma_core.embedders.cache import check_int, check_texts
from ucma_core.errors import InvalidInputError

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.7
_TRIGRAM_WEIGHT = 0.2
#: The feature used for a text with no words, so no vector is ever all zeros.
_EMPTY_FEATURE = "\x00empty"
_FEATURE_CACHE_SIZE = 1 << 16


class HashingEmbedder:
    """Deterministic bag-of-words embedder for tests and fully offline use.

    Args:
        dimension: Number of hash buckets, the length of every vector.
        name: The name recorded in memory folders; defaults to
            ``f"hashing-{dimension}"``.

    Raises:
        InvalidInputError: ``dimension`` is not a positive int or ``name`` is empty.

    Examples:
        >>> embedder = HashingEmbedder(64)
        >>> cat, kitten, tax = embedder.embed(["the cat sat", "a cat sat down", "tax forms due"])
        >>> dot = lambda a, b: sum(x * y for x, y in zip(a, b))
        >>> dot(cat, kitten) > dot(cat, tax)
        True
        >>> round(dot(cat, cat), 6)
        1.0
    """

    def __init__(self, dimension: int = 256, *, name: str | None = None) -> None:
        check_int("dimension", dimension, 1)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise InvalidInputError("name must be a non-empty string")
        self._dimension = dimension
        self._name = name if name is not None else f"hashing-{dimension}"
        # Per instance, so nothing is shared between embedders; lru_cache is thread-safe.
        self._feature = functools.lru_cache(maxsize=_FEATURE_CACHE_SIZE)(self._hash_feature)
        self._word_features = functools.lru_cache(maxsize=_FEATURE_CACHE_SIZE)(self._features_of_word)

    @property
    def name(self) -> str:
        """Identifier recorded in memory folders."""
        return self._name

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._dimension}, name={self._name!r})"

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one unit vector per text, in order.

        Args:
            texts: The texts to embed; empty strings are allowed.

        Returns:
            One list of ``dimension`` floats with L2 norm 1 per text.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings.
        """
        items = check_texts(texts)
        if not items:
            return []
        dim = self._dimension
        buckets: list[int] = []
        weights: list[float] = []
        for row, text in enumerate(items):
            start = len(buckets)
            self._collect(text, buckets, weights)
            if row:
                offset = row * dim
                buckets[start:] = [bucket + offset for bucket in buckets[start:]]
        matrix = np.bincount(buckets, weights=weights, minlength=len(items) * dim).reshape(len(items), dim)
        norms = np.linalg.norm(matrix, axis=1)
        empty = norms == 0.0
        if empty.any():
            # No words, or every feature cancelled out: a fixed, deterministic unit vector.
            bucket, sign = self._feature(_EMPTY_FEATURE)
            matrix[empty, bucket] = sign
            norms[empty] = 1.0
        result: list[list[float]] = (matrix / norms[:, None]).tolist()
        return result

    def _collect(self, text: str, buckets: list[int], weights: list[float]) -> None:
        """Append the buckets and signed weights of every feature of ``text``."""
        previous = ""
        for word in _WORD.findall(unicodedata.normalize("NFKC", text).lower()):
            word_buckets, word_weights = self._word_features(word)
            buckets.extend(word_buckets)
            weights.extend(word_weights)
            if previous:
                bucket, sign = self._feature(f"b:{previous} {word}")
                buckets.append(bucket)
                weights.append(sign * _BIGRAM_WEIGHT)
            previous = word

    def _features_of_word(self, word: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """Buckets and signed weights of a word: itself plus its character trigrams."""
        features = [("w:" + word, _UNIGRAM_WEIGHT)]
        padded = f"<{word}>"
        features.extend(("c:" + padded[j : j + 3], _TRIGRAM_WEIGHT) for j in range(len(padded) - 2))
        hashed = [(*self._hash_feature(feature), weight) for feature, weight in features]
        return tuple(b for b, _, _ in hashed), tuple(sign * weight for _, sign, weight in hashed)

    def _hash_feature(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return (value >> 1) % self._dimension, (1.0 if value & 1 else -1.0)
