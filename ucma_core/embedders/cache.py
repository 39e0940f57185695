"""An LRU cache in front of any embedder, and the checks every embedder's I/O passes.

:func:`check_texts`, :func:`check_vectors` and :func:`check_int` are the shared
contract checks: the built-in embedders run their input through the first, and
:class:`CachedEmbedder` runs whatever a user-supplied embedder returns through the
second, so a broken embedder fails loudly with its name instead of poisoning the
vector store.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ucma_core.errors import InvalidInputError, ProviderError
from ucma_core.protocols import Embedder
from ucma_core.storage.rowcache import RowCache

__all__ = ["DEFAULT_MAX_BYTES", "CachedEmbedder", "as_embedder", "check_int", "check_texts", "check_vectors"]

#: The default bound on the embedding cache's vector data (``MemoryConfig.embedding_cache_mib``).
DEFAULT_MAX_BYTES = 2**20


def check_texts(texts: object) -> list[str]:
    """Return ``texts`` as a list of strings, or raise.

    Args:
        texts: What the caller passed to ``embed``.

    Returns:
        The texts as a new list.

    Raises:
        InvalidInputError: ``texts`` is a single string (a common slip that would
            embed every character) or not a sequence of strings.

    Examples:
        >>> check_texts(("a", "b"))
        ['a', 'b']
    """
    if isinstance(texts, (str, bytes)):
        raise InvalidInputError("embed() takes a list of strings, got a single string; wrap it in a list")
    if not isinstance(texts, Sequence):
        raise InvalidInputError(f"embed() takes a list of strings, got {type(texts).__name__}")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise InvalidInputError(f"embed() takes strings only; item {i} is {type(text).__name__}")
    return out


def check_vectors(vectors: object, *, count: int, dimension: int, source: str) -> list[list[float]]:
    """Check what an embedder returned and convert it to plain float lists.

    Args:
        vectors: The embedder's answer (a list of lists, a 2-D numpy array...).
        count: How many vectors were asked for.
        dimension: The length every vector must have.
        source: The embedder's name, used in error messages.

    Returns:
        ``count`` lists of ``dimension`` finite Python floats.

    Raises:
        ProviderError: Wrong number of vectors, wrong length, non-numeric or
            non-finite values.

    Examples:
        >>> check_vectors([[1, 0.5]], count=1, dimension=2, source="demo")
        [[1.0, 0.5]]
    """
    try:
        got = len(vectors)  # type: ignore[arg-type]
    except TypeError as e:
        raise ProviderError(
            f"embedder {source!r} returned {type(vectors).__name__}, not a list of vectors"
        ) from e
    if got != count:
        raise ProviderError(f"embedder {source!r} returned {got} vectors for {count} texts")
    if count == 0:
        return []
    try:
        array = np.asarray(vectors)
    except ValueError as e:  # ragged rows
        raise ProviderError(
            f"embedder {source!r} returned vectors of different lengths (expected {dimension})"
        ) from e
    if array.ndim != 2 or array.shape[1] != dimension:
        lengths = sorted({_length(v) for v in vectors}, key=str)  # type: ignore[attr-defined]
        raise ProviderError(
            f"embedder {source!r} returned vectors of length {lengths}, expected {dimension} "
            "(the dimension it declares)"
        )
    if array.dtype.kind not in "iuf":
        raise ProviderError(f"embedder {source!r} returned non-numeric values (dtype {array.dtype})")
    if not np.isfinite(array).all():
        raise ProviderError(f"embedder {source!r} returned NaN or infinite values")
    result: list[list[float]] = array.astype(np.float64).tolist()
    return result


def check_int(name: str, value: object, low: int, high: int | None = None) -> None:
    """Raise unless ``value`` is an int (not a bool) in ``low..high``.

    Args:
        name: The argument's name, for the message.
        value: The value to check.
        low: Smallest allowed value.
        high: Largest allowed value, or ``None`` for no limit.

    Raises:
        InvalidInputError: ``value`` is not such an int.
    """
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    if not ok or (high is not None and value > high):  # type: ignore[operator]
        span = f"{low}..{high}" if high is not None else f">= {low}"
        raise InvalidInputError(f"{name} must be an int {span}, got {value!r}")


def _length(vector: object) -> int | str:
    try:
        return len(vector)  # type: ignore[arg-type]
    except TypeError:
        return type(vector).__name__


def as_embedder(obj: object) -> Embedder:
    """Return ``obj`` if it satisfies the :class:`~ucma_core.protocols.Embedder` protocol.

    Args:
        obj: Anything the user passed as an embedder.

    Returns:
        The same object, typed as an ``Embedder``.

    Raises:
        InvalidInputError: ``obj`` lacks a string ``name``, a positive integer
            ``dimension`` or a callable ``embed``.

    Examples:
        >>> from ucma_core.embedders.hashing import HashingEmbedder
        >>> as_embedder(HashingEmbedder(8)).name
        'hashing-8'
    """
    problems: list[str] = []
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        problems.append("a non-empty str 'name'")
    dimension = getattr(obj, "dimension", None)
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        problems.append("a positive int 'dimension'")
    if not callable(getattr(obj, "embed", None)):
        problems.append("a method 'embed(texts: list[str]) -> list[list[float]]'")
    if problems:
        raise InvalidInputError(
            f"{type(obj).__name__} is not an embedder: it needs {', '.join(problems)} "
            "(see ucma_core.protocols.Embedder)"
        )
    return obj  # type: ignore[return-value]


class CachedEmbedder:
    """Least-recently-used cache in front of another embedder.

    Only texts not in the cache reach the inner embedder, each once per call even
    if repeated; results come back in input order. Whatever the inner embedder
    returns is checked (count, length, finite numbers) before it is cached.
    ``hits`` counts texts answered without the inner embedder (including repeats
    within one call), ``misses`` counts texts sent to it; ``hits + misses`` is the
    number of texts embedded. Safe to share between threads.

    Args:
        inner: The embedder to wrap.
        max_size: How many distinct texts to keep; ``0`` turns caching off
            (repeats within one call are still sent once).
        max_bytes: ... and at most this many bytes of their vectors (8 bytes a number;
            ``None``: no bound in bytes), so long vectors (1,536 or 3,072 floats) do not
            make the cache many megabytes.

    Raises:
        InvalidInputError: ``inner`` is not an embedder, or ``max_size`` or ``max_bytes``
            is negative.

    Examples:
        >>> from ucma_core.embedders.hashing import HashingEmbedder
        >>> cached = CachedEmbedder(HashingEmbedder(16), max_size=2)
        >>> _ = cached.embed(["a", "b", "a"])
        >>> (cached.hits, cached.misses)
        (1, 2)
        >>> small = CachedEmbedder(HashingEmbedder(16), max_bytes=2 * 16 * 8)  # two vectors
        >>> _ = small.embed(["a", "b", "c"]); _ = small.embed(["a", "c"])
        >>> (len(small), small.hits, small.misses)
        (2, 1, 4)
    """

    def __init__(
        self, inner: Embedder, max_size: int = 1024, *, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> None:
        self._inner = as_embedder(inner)
        check_int("max_size", max_size, 0)
        if max_bytes is not None:
            check_int("max_bytes", max_bytes, 0)
        self._max_size = max_size
        #: 8 bytes a number (a tuple of floats costs 32), the exact floats returned, in rows of
        #: a few large blocks (one small array per text pinned several times its size).
        self._cache = RowCache(np.float64, max_size, max_bytes)
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def name(self) -> str:
        """The inner embedder's name."""
        return self._inner.name

    @property
    def dimension(self) -> int:
        """The inner embedder's dimension."""
        return self._inner.dimension

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder."""
        return self._inner

    @property
    def max_size(self) -> int:
        """How many distinct texts the cache keeps."""
        return self._max_size

    @property
    def hits(self) -> int:
        """Texts answered without calling the inner embedder."""
        return self._hits

    @property
    def misses(self) -> int:
        """Texts sent to the inner embedder."""
        return self._misses

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        """Drop every cached vector (the counters are kept)."""
        with self._lock:
            self._cache.clear()

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one vector per text, in order, calling the inner embedder for misses only.

        Args:
            texts: The texts to embed.

        Returns:
            One list of ``dimension`` floats per text.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings.
            ProviderError: The inner embedder failed or returned unusable vectors.
        """
        items = check_texts(texts)
        found: dict[str, list[float] | None] = {}
        missing: list[str] = []
        with self._lock:
            for text in items:
                if text in found:
                    continue
                vector = self._cache.get(text)
                if vector is None:
                    found[text] = None  # on its way
                    missing.append(text)
                else:
                    found[text] = vector.tolist()
            self._misses += len(missing)
            self._hits += len(items) - len(missing)
        if missing:
            name = self._inner.name
            raw = self._inner.embed(missing)
            fresh = check_vectors(raw, count=len(missing), dimension=self._inner.dimension, source=name)
            with self._lock:
                for text, row in zip(missing, fresh, strict=True):
                    found[text] = row
                    self._cache.put(text, row)
        return [list(found[text]) for text in items]  # type: ignore[arg-type]
