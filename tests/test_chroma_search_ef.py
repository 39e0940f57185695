"""``ChromaConfig.search_ef``: at least the number of records makes Chroma's vector search
exact, so two memories built from the same records rank alike (Chroma builds its index
in parallel, and an approximate search can then differ from one build to the next)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError

WORDS = "garden river ferry island cello sister flat spring landlord knee car bike tea jazz".split()


def _rankings(folder: Path, texts: list[str], queries: list[str]) -> list[list[str]]:
    config = MemoryConfig(importance_threshold=0.0, chroma=ChromaConfig(search_ef=len(texts)))
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        mem.observe_many([{"content": t, "metadata": {"n": n}} for n, t in enumerate(texts)], user_id="ana")
        mem.flush()
        return [[str(h.metadata["n"]) for h in mem.remember(q, k=10, user_id="ana")] for q in queries]


def test_an_exact_search_ranks_the_same_in_two_memories_built_alike(tmp_path: Path) -> None:
    rng = random.Random(3)
    texts = [" ".join(rng.choices(WORDS, k=8)) + f" note {n}" for n in range(600)]
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(25)]
    first = _rankings(tmp_path / "a", texts, queries)
    assert all(len(r) == 10 for r in first)
    assert _rankings(tmp_path / "b", texts, queries) == first


def test_search_ef_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="search_ef"):
        ChromaConfig(search_ef=0)
