"""The one check that llama-index-core is installed, run before anything imports it."""

from __future__ import annotations

import importlib

from ucma_core.errors import DependencyMissingError

__all__ = ["require_llama_index"]

INSTALL_HINT = "pip install 'ucma[llamaindex]'"


def require_llama_index() -> None:
    """Import ``llama_index.core`` or raise one clear error naming the extra to install.

    Raises:
        DependencyMissingError: llama-index-core is not installed (or cannot be imported).
    """
    try:
        importlib.import_module("llama_index.core")
    except ImportError as e:
        raise DependencyMissingError(
            f"ucma_llamaindex needs llama-index-core, which is not installed: {INSTALL_HINT}"
        ) from e
