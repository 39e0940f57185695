"""Damaged and missing files: opening either loses nothing (derived data is rebuilt, a lost
snapshot is replaced by the previous one) or refuses with a clear error naming what is
missing — never a silent wipe — and ``Memory.repair`` then brings back every memory whose
text is still somewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.scenarios import DAMAGE, RECOVERABLE, damage_template, damage_trial, open_memory
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, InvalidInputError, RepairNeededError


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return damage_template(tmp_path_factory.mktemp("damage"))


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damaged_or_missing_file_never_wipes_silently(case: str, template: Path, tmp_path: Path) -> None:
    out = damage_trial(case, tmp_path, template)
    assert out.clean, (out, out.detail)
    assert out.clear_errors == (0 if case in RECOVERABLE else 1), out.detail


def test_a_refused_open_says_what_is_missing_and_a_dry_run_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder) as mem:
        kept = mem.observe("a memory that must not be wiped", user_id="u")
    import shutil

    shutil.rmtree(folder / "chroma")
    with pytest.raises(RepairNeededError) as refused:
        open_memory(folder)
    error = refused.value
    assert "chroma/" in str(error) and "Memory.repair" in str(error)
    assert error.problems and error.plan and "restore 1 record" in error.plan[0]
    dry = Memory.repair(folder, embedder=HashingEmbedder(), dry_run=True)
    assert not dry.applied and dry.problems == error.problems
    assert not (folder / "chroma").exists(), "a dry run changed the folder"
    report = Memory.repair(folder, embedder=HashingEmbedder())
    assert report.applied and report.restored_from_keywords == (kept,) and report.dropped == ()
    with open_memory(folder) as mem:
        assert mem.get(kept).content == "a memory that must not be wiped"  # type: ignore[union-attr]
        assert mem.verify().ok
    assert Memory.repair(folder, embedder=HashingEmbedder(), dry_run=True).needed is False


def test_a_folder_that_is_not_a_memory_is_not_written_into(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("someone else's file")
    with pytest.raises(ConfigurationError, match="not a UCMA memory folder"):
        Memory(tmp_path, embedder=HashingEmbedder())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(InvalidInputError, match="empty"):
        Memory("", embedder=HashingEmbedder())


def test_a_graph_node_whose_text_is_gone_everywhere_is_dropped_only_by_repair(tmp_path: Path) -> None:
    import json

    import chromadb

    from ucma_core.storage.keywords import KeywordIndex
    from ucma_core.storage.vectors import chroma_settings

    folder = tmp_path / "memory"
    with open_memory(folder) as mem:
        gone = mem.observe("this memory's text will be lost everywhere", user_id="u")
        kept = mem.observe("this one stays", user_id="u")
    collection = json.loads((folder / "ucma.json").read_text())["collection"]
    client = chromadb.PersistentClient(path=str(folder / "chroma"), settings=chroma_settings())
    client.get_collection(collection).delete(ids=[gone])
    client.close()
    index = KeywordIndex(folder)
    index.delete([gone])
    index.close()
    with pytest.raises(RepairNeededError, match="missing from Chroma"):
        open_memory(folder)
    report = Memory.repair(folder, embedder=HashingEmbedder())
    assert report.dropped == (gone,)
    with open_memory(folder) as mem:
        assert mem.get(gone) is None and mem.get(kept) is not None and mem.verify().ok
