"""A folder's vector index is saved at close, so no later open writes it again.

Chroma saves a collection's HNSW index only every 1,000 changes. Until then each new
client builds it again and writes its files whole from buffers never zeroed, so they can
take text this process handled for another folder. ``close()`` saves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder


def files_with(folder: Path, text: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and text in p.read_bytes()
    )


def index_files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in (folder / "chroma").glob("*/*.bin")}


def handle_saffron_elsewhere(folder: Path) -> None:
    """Her text passes through many buffers of this process, in another folder."""
    with Memory(folder, embedder=HashingEmbedder()) as other:
        other.observe_many(
            [f"Ana's recipe {n}: " + "saffron and rice " * 50 for n in range(150)],
            user_id="ana",
            importance=0.9,
        )
        other.flush()
        for n in range(10):
            assert other.remember(f"saffron rice {n} " + "saffron " * 100, user_id="ana") != []


def test_a_small_folder_reopened_and_queried_keeps_the_index_close_saved(tmp_path: Path) -> None:
    folder = tmp_path / "bob"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        notes = [
            mem.observe(f"Bob's note {n} about tea and biscuits", user_id="bob", importance=0.9)
            for n in range(20)
        ]
    index = index_files(folder)
    assert index  # fewer than 1,000 records, saved all the same
    handle_saffron_elsewhere(tmp_path / "ana")
    with Memory(folder, embedder=HashingEmbedder()) as again:
        hits = again.remember("tea biscuits", k=20, user_id="bob")
        assert {h.id for h in hits} == set(notes)
        # the index was loaded, not built again from unzeroed buffers
        assert index_files(folder) == index
        assert files_with(folder, b"saffron") == []
    assert files_with(folder, b"saffron") == []


def test_writes_after_a_forget_that_emptied_the_folder_are_saved_at_close(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        for n in range(5):
            mem.observe(f"Ana's recipe {n}: " + "saffron and rice " * 50, user_id="ana", importance=0.9)
        assert mem.forget_user("ana") == 5
        # an empty collection has no index to save: nothing of hers is on disk
        assert files_with(folder, b"saffron") == []
        assert all(not any(data) for data in index_files(folder).values())
        tea = mem.observe("Bob likes tea", user_id="bob", importance=0.9)
    index = index_files(folder)
    assert index
    with Memory(folder, embedder=HashingEmbedder()) as again:
        assert [h.id for h in again.remember("tea", user_id="bob")] == [tea]
        assert index_files(folder) == index
        assert files_with(folder, b"saffron") == []


def test_a_folder_named_by_a_relative_path_is_saved_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Memory("memory", embedder=HashingEmbedder()) as mem:
        tea = mem.observe("Bob likes tea", user_id="bob", importance=0.9)
    index = index_files(tmp_path / "memory")
    with Memory("memory", embedder=HashingEmbedder()) as again:
        assert [h.id for h in again.remember("tea", user_id="bob")] == [tea]
        assert index_files(tmp_path / "memory") == index
