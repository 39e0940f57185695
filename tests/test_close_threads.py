"""A ``remember`` that raises half way leaves no read of candidate vectors running on the
store (one it started is waited for), and ``close()`` then leaves no thread of the memory
running."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection

from ucma_core import Memory, MemoryConfig
from ucma_core.config import FusionConfig
from ucma_core.embedders import HashingEmbedder

EVENT = "lantern parade"


class EventEmbedderFails(HashingEmbedder):
    """Embeds everything but the event a "before / after <event>" question anchors on;
    before raising, it lets the vector reads held by :func:`held_vector_reads` go on."""

    def __init__(self, release: threading.Event) -> None:
        super().__init__()
        self.release = release

    def embed(self, texts: list[str]) -> list[list[float]]:
        if any(EVENT in t for t in texts):
            self.release.set()
            raise RuntimeError("the embedding service went away")
        return super().embed(texts)


def ucma_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("ucma"))


def test_a_remember_that_raised_half_way_leaves_no_read_running_and_close_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ucma_threads() == []
    release, started, finished = threading.Event(), threading.Event(), threading.Event()
    # few dense candidates, so the keyword matches' vectors are read apart; no vector cache, so
    # the dense search is Chroma's filtered query and no read of vectors comes before the event
    config = MemoryConfig(fusion=FusionConfig(min_candidates=2, candidates_per_result=1), vector_cache_size=0)
    mem = Memory(tmp_path / "memory", embedder=EventEmbedderFails(release), config=config)
    for n in range(30):
        mem.observe(f"note {n}: we ate grilled sardines by the harbour with Rui", user_id="ana")
        mem.observe(f"note {n}: dinner plans and grocery lists for the week", user_id="ana")
    mem.flush()
    get = Collection.get

    def held_vector_reads(self: Collection, *args: Any, **kwargs: Any) -> Any:
        """Chroma's read of vectors only, held until the embedder is about to raise."""
        if kwargs.get("include") != ["embeddings"]:
            return get(self, *args, **kwargs)
        started.set()
        assert release.wait(600)
        try:
            return get(self, *args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(Collection, "get", held_vector_reads)
    with pytest.raises(RuntimeError, match="went away"):
        # the event is embedded half way (no memory names it by keyword)
        mem.remember(f"what did we eat with Rui after the {EVENT}?", k=1, user_id="ana")
    # a read of vectors that started was waited for (it ended) before the error reached the
    # caller; the one read of a remember starts after the event is embedded, so here none did
    assert finished.is_set() or not started.is_set()
    mem.close()
    assert ucma_threads() == []
