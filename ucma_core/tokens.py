"""Counting tokens for working-memory budgets, offline.

:class:`TiktokenCounter` counts with tiktoken. tiktoken downloads its BPE tables on
first use, which fails offline; so the counter looks for the table where tiktoken
already has it (``TIKTOKEN_CACHE_DIR`` or its own cache) and otherwise in the copy
that ``llama-index-core`` ships (installed by ``ucma[local]``), and never goes to
the network. Any object with ``count(text) -> int`` can replace it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ucma_core.errors import DependencyMissingError

__all__ = ["TiktokenCounter", "TokenCounter"]

_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
_ENV_LOCK = threading.Lock()


@runtime_checkable
class TokenCounter(Protocol):
    def count(self, text: str) -> int: ...


def _cache_dirs() -> list[Path]:
    dirs = []
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    dirs.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    spec = importlib.util.find_spec("llama_index")
    for root in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(Path(root) / "core" / "_static" / "tiktoken_cache")
    return dirs


@cache
def _encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError as e:
        raise DependencyMissingError("token counting needs tiktoken: pip install 'ucma[local]'") from e
    url = _URLS.get(name)
    if url is None:
        return tiktoken.get_encoding(name)
    key = hashlib.sha1(url.encode()).hexdigest()
    for folder in _cache_dirs():
        if (folder / key).is_file():
            with _ENV_LOCK:
                saved = os.environ.get("TIKTOKEN_CACHE_DIR")
                os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
                try:
                    return tiktoken.get_encoding(name)
                finally:
                    if saved is None:
                        del os.environ["TIKTOKEN_CACHE_DIR"]
                    else:
                        os.environ["TIKTOKEN_CACHE_DIR"] = saved
    raise DependencyMissingError(
        f"the {name} token table is not available offline; install 'ucma[local]' (it ships the table "
        "through llama-index-core) or point TIKTOKEN_CACHE_DIR at a folder holding it"
    )


class TiktokenCounter:
    """Exact token counts with a tiktoken encoding (default ``cl100k_base``).

    Example:
        >>> TiktokenCounter().count("hello world")  # doctest: +SKIP
        2
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding = encoding
        self._enc: Any = None

    def count(self, text: str) -> int:
        if self._enc is None:
            self._enc = _encoding(self.encoding)
        return len(self._enc.encode(text, disallowed_special=()))
