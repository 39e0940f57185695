"""Counting tokens for working-memory budgets, offline.

:class:`TiktokenCounter` counts with tiktoken. tiktoken downloads its BPE tables on
first use, which fails offline, so the table UCMA counts with by default,
``cl100k_base``, ships inside this package (``ucma_core/data``, OpenAI's published
file, checked against its SHA-256 when read). Another encoding is read from
tiktoken's cache (``TIKTOKEN_CACHE_DIR`` or its default) or from the copy
``llama-index-core`` ships, if present; only when no local copy exists does tiktoken
fetch it. Reading a table changes neither the environment nor any cache. Any object
with ``count(text) -> int`` can replace the counter.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ucma_core.errors import DependencyMissingError, StorageError

__all__ = ["TiktokenCounter", "TokenCounter", "table_path"]

_DATA = Path(__file__).parent / "data"

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

_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
#: name -> (split pattern, special tokens), as tiktoken's ``tiktoken_ext.openai_public`` builds them
_SPECS: dict[str, tuple[str, dict[str, int]]] = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": (
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}


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
    """The local copy of encoding ``name``'s BPE table, if there is one: the copy shipped
    with UCMA first, else one in tiktoken's cache.

    Examples:
        >>> table_path("cl100k_base").name
        'cl100k_base.tiktoken'
    """
    shipped = _DATA / f"{name}.tiktoken"
    if shipped.is_file():
        return shipped
    if name not in _TABLES:
        return None
    key = hashlib.sha1(_TABLES[name][0].encode()).hexdigest()
    return next((folder / key for folder in _cache_dirs() if (folder / key).is_file()), None)


def _ranks(path: Path, expected_hash: str) -> dict[bytes, int]:
    """The mergeable ranks in a ``.tiktoken`` file (``base64-token rank`` per line), after
    checking its SHA-256; read as tiktoken's ``load_tiktoken_bpe`` does, without its cache copy."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != expected_hash:
        raise StorageError(
            f"the token table {path} does not match its published SHA-256 (damaged copy); "
            "delete it (tiktoken fetches a fresh one) or reinstall ucma"
        )
    return {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }


@cache
def _encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError as e:
        raise DependencyMissingError("token counting needs tiktoken: pip install 'tiktoken>=0.7'") from e
    path = table_path(name) if name in _SPECS else None
    if path is None:  # another encoding, or no local copy: tiktoken fetches it (fails clearly offline)
        try:
            return tiktoken.get_encoding(name)
        except Exception as e:  # tiktoken raises requests' and its own errors here
            raise DependencyMissingError(
                f"the {name} token table is not available offline and could not be fetched ({e}); "
                "point TIKTOKEN_CACHE_DIR at a folder holding it, or count with the default "
                "cl100k_base (shipped with ucma)"
            ) from e
    pattern, special = _SPECS[name]
    return tiktoken.Encoding(
        name=name, pat_str=pattern, mergeable_ranks=_ranks(path, _TABLES[name][1]), special_tokens=special
    )


class TiktokenCounter:
    """Exact token counts with a tiktoken encoding (default ``cl100k_base``, shipped with UCMA).

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
