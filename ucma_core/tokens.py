"""Counting tokens for working-memory budgets, offline.

:class:`TiktokenCounter` counts with tiktoken. tiktoken downloads its BPE tables on
first use, which fails offline; so the counter reads the table from a file it finds
locally — tiktoken's own cache (``TIKTOKEN_CACHE_DIR`` or its default) or the copy
that ``llama-index-core`` ships (installed by ``ucma[local]``) — checks its SHA-256
against the published one and does not change the process environment. Only when no
local copy exists does tiktoken fetch the table itself. Any object with
``count(text) -> int`` can replace it.
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

#: name -> (where tiktoken downloads the table from, its published SHA-256); tiktoken's
#: cache names the local copy after the SHA-1 of that address.
_TABLES = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
_BUILD_LOCK = threading.Lock()


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


def table_path(name: str) -> Path | None:
    """The local copy of encoding ``name``'s BPE table, if there is one."""
    url, _ = _TABLES[name]
    key = hashlib.sha1(url.encode()).hexdigest()
    return next((folder / key for folder in _cache_dirs() if (folder / key).is_file()), None)


@cache
def _encoding(name: str) -> Any:
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public
        from tiktoken.load import load_tiktoken_bpe
    except ImportError as e:
        raise DependencyMissingError("token counting needs tiktoken: pip install 'ucma[local]'") from e
    if name not in _TABLES:
        return tiktoken.get_encoding(name)
    path = table_path(name)
    if path is None:  # no local copy: tiktoken fetches it (and fails clearly when offline)
        try:
            return tiktoken.get_encoding(name)
        except Exception as e:  # tiktoken raises requests' and its own errors here
            raise DependencyMissingError(
                f"the {name} token table is not available offline and could not be fetched ({e}); "
                "install 'ucma[local]' (it ships the table) or point TIKTOKEN_CACHE_DIR at a folder "
                "holding it"
            ) from e
    ranks = load_tiktoken_bpe(str(path), expected_hash=_TABLES[name][1])
    # tiktoken's constructor for ``name`` knows the split pattern and special tokens; hand it
    # the ranks read above instead of letting it fetch the table
    with _BUILD_LOCK:
        loader = public.load_tiktoken_bpe
        public.load_tiktoken_bpe = lambda *_args, **_kwargs: ranks
        try:
            spec = public.ENCODING_CONSTRUCTORS[name]()
        finally:
            public.load_tiktoken_bpe = loader
    return tiktoken.Encoding(**spec)


class TiktokenCounter:
    """Exact token counts with a tiktoken encoding (default ``cl100k_base``).

    Examples:
        >>> TiktokenCounter().count("hello world")
        2
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding = encoding
        self._enc: Any = None

    def count(self, text: str) -> int:
        if self._enc is None:
            self._enc = _encoding(self.encoding)
        return len(self._enc.encode(text, disallowed_special=()))
