"""The merge phase folds a duplicate's use into the survivor and deletes the duplicate in one
transaction (issue #12): a crash anywhere in it never leaves the duplicate alive with its
use already counted, so the next cycle never counts it twice; a crash once the deletion has
started finishes the whole merge on the next open, the folded use included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

REPO = Path(__file__).resolve().parents[1]

CRASHING_MERGE = """
import os, sys
from pathlib import Path
from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.journal import Journal
from ucma_core.storage.vectors import VectorStore

point = sys.argv[2]
append, delete = Journal.append, VectorStore.delete

def crashing_append(self, ops, *args, **kwargs):
    ops = list(ops)
    if point == "before the delete intent" and any(o.get("op") in ("b", "i") and o.get("del") for o in ops):
        os._exit(77)
    return append(self, ops, *args, **kwargs)

def crashing_delete(self, ids, *args, **kwargs):
    delete(self, ids, *args, **kwargs)
    if point == "after the Chroma delete" and ids:
        os._exit(77)

Journal.append, VectorStore.delete = crashing_append, crashing_delete
mem = Memory(Path(sys.argv[1]), embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))
mem.consolidate(phases=["merge"])
os._exit(0)
"""


def _open(folder: Path) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))


def _twins(folder: Path) -> tuple[str, str]:
    with _open(folder) as mem:
        first = mem.observe("ok thanks, that settles the invoice", user_id="ana", timestamp=1_700_000_000.0)
        second = mem.observe("ok thanks, that settles the invoice", user_id="ana", timestamp=1_700_000_060.0)
    assert first and second
    return first, second


def _merged_once(folder: Path, survivor: str, duplicate: str) -> None:
    with _open(folder) as mem:
        report = mem.consolidate(phases=["merge"])  # the next cycle, after a crash or not
        assert report.errors == []
        assert mem.get(duplicate) is None
        kept = mem.get(survivor)
        assert kept is not None and kept.access_count <= 1  # the duplicate's use counted once at most
        assert mem.verify().ok


def test_a_merge_absorbs_and_deletes_the_duplicate(tmp_path: Path) -> None:
    survivor, duplicate = _twins(tmp_path / "memory")
    with _open(tmp_path / "memory") as mem:
        assert mem.consolidate(phases=["merge"]).phases["merge"]["merged"] == 1
        assert mem.get(duplicate) is None
        assert mem.get(survivor).access_count == 1  # type: ignore[union-attr]
    _merged_once(tmp_path / "memory", survivor, duplicate)


@pytest.mark.parametrize("point", ["before the delete intent", "after the Chroma delete"])
def test_a_crash_in_a_merge_never_counts_a_duplicate_twice(tmp_path: Path, point: str) -> None:
    folder = tmp_path / "memory"
    survivor, duplicate = _twins(folder)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_MERGE, str(folder), point], env=env, capture_output=True, timeout=300
    )
    assert done.returncode == 77, done.stderr.decode()[-2000:]
    with _open(folder) as mem:
        kept = mem.get(survivor)
        assert kept is not None
        # nothing of the merge happened, or the deletion did: never a live duplicate already absorbed
        assert kept.access_count == 0 or mem.get(duplicate) is None
        if point == "after the Chroma delete":  # a deletion that started is finished, and with it
            assert mem.get(duplicate) is None  # the use it folded into the survivor
            assert kept.access_count == 1
    _merged_once(folder, survivor, duplicate)
