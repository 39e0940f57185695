"""A full disk and a Chroma that stops answering: every failed call raises a clear
``StorageError`` saying "disk full" (or that Chroma did not answer), stores nothing, holds
no lock, and the memory works again once the cause is gone — without a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.scenarios import disk_full_trial, hang_trial, tmpfs_available, tmpfs_trial
from ucma_core import Memory, MemoryConfig
from ucma_core.config import LimitsConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DiskFullError


@pytest.mark.parametrize("where", ["journal", "keyword index", "Chroma", "Chroma replace"])
def test_a_full_disk_in_any_store_raises_stores_nothing_and_recovers(where: str, tmp_path: Path) -> None:
    out = disk_full_trial(where, tmp_path)
    assert out.clean and out.clear_errors >= 1, (out, out.detail)


def test_a_hung_chroma_call_is_abandoned_and_the_lock_released(tmp_path: Path) -> None:
    out = hang_trial(tmp_path, timeout=1.0)
    assert out.clean and out.clear_errors == 1, (out, out.detail)


def test_writes_stop_before_the_disk_is_completely_full(tmp_path: Path) -> None:
    config = MemoryConfig(importance_threshold=0.0, limits=LimitsConfig(min_free_bytes=10**18))
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem:
        with pytest.raises(DiskFullError, match="disk full"):
            mem.observe("too little space left for this", user_id="u")
        assert mem.verify().chroma_records == 0
        assert mem.forget_user("u") == 0  # deleting frees space, so it is never refused


@pytest.mark.skipif(not tmpfs_available(), reason="mounting a tmpfs needs root on Linux")
def test_a_real_full_disk_on_a_small_tmpfs(tmp_path: Path) -> None:
    out = tmpfs_trial(tmp_path, size="4m", guard=0)
    assert out.clean and out.clear_errors >= 1, (out, out.detail)
    guarded = tmpfs_trial(tmp_path / "guarded", size="4m", guard=512 * 1024)
    assert guarded.clean and guarded.clear_errors >= 1, (guarded, guarded.detail)


def test_the_keyword_index_write_ahead_log_stays_small(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0)) as mem:
        for i in range(60):
            mem.observe(f"note {i} " + "lorem ipsum dolor sit amet " * 20, user_id="u")
        wal = folder / "keywords.sqlite3-wal"
        assert not wal.exists() or wal.stat().st_size < 600 * 1024
