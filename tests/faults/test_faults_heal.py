"""A vector index that heals itself, opens that release everything, and lock errors that say who.

A kill during a write can leave Chroma's HNSW files disagreeing with each other; the
folder must still open (the index set aside and rebuilt from the records' text), every
record must still be found by ``remember``, a failed open must leave nothing behind in
the process, and a truncated graph snapshot with no previous one must be repairable.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.faults.scenarios import (
    REPO,
    _env,
    base_config,
    damage_template,
    large_kill_trial,
    large_template,
    open_memory,
)
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import CorruptStoreError, MemoryLockedError, RepairNeededError
from ucma_core.storage.heal import HEADER, SizeGuard, byte_bound


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return damage_template(tmp_path_factory.mktemp("heal"))


def _copy(template: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "memory"
    shutil.copytree(template / "memory", folder)
    return folder, json.loads((template / "state.json").read_text())["contents"]


def _segment(folder: Path) -> Path:
    (segment,) = [p for p in (folder / "chroma").iterdir() if p.is_dir()]
    return segment


def test_a_damaged_index_is_set_aside_rebuilt_and_every_record_is_found(
    template: Path, tmp_path: Path
) -> None:
    folder, contents = _copy(template, tmp_path)
    pickle = _segment(folder) / "index_metadata.pickle"
    os.truncate(pickle, pickle.stat().st_size // 3)  # what a kill during Chroma's persist leaves
    report = Memory.repair(folder, embedder=HashingEmbedder(), config=base_config())
    assert report.rebuilt_index and "index_metadata.pickle" in report.rebuilt_index[0]
    assert any("computed again" in note for note in report.notes)
    aside = folder / "chroma.damaged-index-1"
    assert aside.is_dir() and any(aside.iterdir()), "the damaged index must be kept, not deleted"
    with open_memory(folder) as mem:
        assert mem.verify().ok and not mem.verify().notes  # the next open finds nothing to heal
        for memory_id, text in sorted(contents.items())[::7]:
            hits = mem.remember(text, user_id="u", k=3)
            assert memory_id in [h.id for h in hits], f"{text!r} not found after the rebuild"


def test_repair_reports_progress_while_it_re_embeds(template: Path, tmp_path: Path) -> None:
    folder, contents = _copy(template, tmp_path)
    header = _segment(folder) / "header.bin"
    header.write_bytes(random.Random(1).randbytes(100))
    seen: list[tuple[int, int, str]] = []
    report = Memory.repair(
        folder,
        embedder=HashingEmbedder(),
        config=base_config(),
        progress=lambda d, t, lbl: seen.append((d, t, lbl)),
    )
    assert report.rebuilt_index and "header.bin" in report.rebuilt_index[0]
    assert seen and seen[-1][0] == seen[-1][1] >= len(contents)
    assert all(label == "re-embedding the vector index" for _, _, label in seen)


def test_a_failed_open_releases_everything_so_a_retry_in_this_process_works(
    template: Path, tmp_path: Path
) -> None:
    folder, contents = _copy(template, tmp_path)
    db = folder / "chroma" / "chroma.sqlite3"
    good = db.read_bytes()
    db.write_bytes(random.Random(2).randbytes(64 * 1024))
    for _ in range(2):  # the same refusal each time: nothing of the first attempt is cached
        with pytest.raises(RepairNeededError, match="cannot be read"):
            open_memory(folder)
    db.write_bytes(good)  # the user restores the file from a backup and retries in the same process
    with open_memory(folder) as mem:
        some = sorted(contents)[:20]
        assert all(mem.get(i) is not None for i in some)
        assert mem.remember(contents[some[0]], user_id="u", k=1)[0].id == some[0]


def test_a_second_open_in_this_process_says_to_close_the_first(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memory") as mem:
        with pytest.raises(MemoryLockedError, match="already open in this process") as info:
            open_memory(tmp_path / "memory")
        assert "close" in str(info.value) and "another process" not in str(info.value)
        assert mem.observe("still usable", user_id="u") is not None
    with open_memory(tmp_path / "memory") as mem:  # closed: free again
        assert mem.verify().ok


HOLDER = (
    "import sys, time\n"
    "from tests.faults.scenarios import open_memory\n"
    "from pathlib import Path\n"
    "mem = open_memory(Path(sys.argv[1]))\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"
    "mem.close()\n"
)


def test_an_open_in_another_process_is_named_with_its_pid(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        env=_env(),
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with pytest.raises(MemoryLockedError, match=f"another process \\(pid {proc.pid}\\)"):
            open_memory(folder)
    finally:
        proc.communicate("\n", timeout=60)
    with open_memory(folder) as mem:
        assert mem.verify().ok


def test_the_size_guard_stops_a_file_that_grows_without_bound(tmp_path: Path) -> None:
    segment = tmp_path / "chroma" / "3c5f6c36-0d8e-4f47-9e7c-0d4b1c2e9a10"
    segment.mkdir(parents=True)
    grown = segment / "link_lists.bin"
    grown.write_bytes(b"")
    tripped: list[tuple[Path, int]] = []
    stop = threading.Event()

    def grow() -> None:  # a runaway writer: the apparent size balloons (a sparse file)
        size = 0
        while not stop.is_set() and size < 1 << 40:
            size += 1 << 30
            os.truncate(grown, size)
            time.sleep(0.01)

    with SizeGuard(tmp_path / "chroma", 8 << 30, on_trip=lambda p, s: (tripped.append((p, s)), stop.set())):
        writer = threading.Thread(target=grow)
        writer.start()
        writer.join(timeout=30)
    assert tripped and tripped[0][0] == grown and tripped[0][1] > 8 << 30
    assert grown.stat().st_size < 1 << 40, "the guard must trip long before the writer ends"


def test_a_truncated_snapshot_without_a_previous_one_is_repaired_from_chroma(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with open_memory(folder, base_config(snapshot_every=1)) as mem:
        ids = mem.observe_many([f"snapshot note {i} about gardens" for i in range(40)], user_id="u")
    for name in ("graph.snapshot.prev.json", "graph.journal.prev.jsonl"):
        (folder / name).unlink(missing_ok=True)
    snapshot = folder / "graph.snapshot.json"
    os.truncate(snapshot, snapshot.stat().st_size // 2)
    with pytest.raises(CorruptStoreError, match=r"Memory\.repair"):
        open_memory(folder)
    report = Memory.repair(folder, embedder=HashingEmbedder(), config=base_config())
    assert report.problems and any("snapshot" in p for p in report.problems)
    assert report.dropped == () and len(report.restored_from_chroma) >= 20
    assert any("could not recover" in a for a in report.actions), "what was lost must be reported"
    with open_memory(folder) as mem:
        assert all(mem.get(i) is not None for i in ids) and mem.verify().ok
        assert mem.remember("snapshot note 5 about gardens", user_id="u", k=1)[0].id == ids[5]


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_kills_during_observe_many_at_15k_records_leave_a_folder_that_opens_whole(tmp_path: Path) -> None:
    """UCMA_HEAL_KILLS sets the number of kills (nightly: 20 or more; default 1 keeps CI cheap)."""
    kills = int(os.environ.get("UCMA_HEAL_KILLS", "1"))
    records = int(os.environ.get("UCMA_HEAL_RECORDS", "15000"))
    template = large_template(tmp_path / "build", records)
    rng = random.Random(int(os.environ.get("UCMA_FAULT_SEED", "20")))
    for n in range(kills):
        out = large_kill_trial(template, tmp_path / f"t{n}", rng)
        assert out.clean, (out, out.detail)
        shutil.rmtree(tmp_path / f"t{n}")


def test_a_header_claiming_a_vast_capacity_is_set_aside_before_chroma_grows_a_file(
    template: Path, tmp_path: Path
) -> None:
    folder, contents = _copy(template, tmp_path)
    header = _segment(folder) / "header.bin"
    fields = list(HEADER.unpack(header.read_bytes()))
    fields[2] = 10**12  # the capacity a torn header can claim: Chroma would size its files for it
    header.write_bytes(HEADER.pack(*fields))
    limit = byte_bound(len(contents), 256)
    with SizeGuard(folder / "chroma", limit) as guard, open_memory(folder) as mem:
        assert any("claims room for" in note for note in mem.verify().notes)
        some = sorted(contents)[0]
        assert mem.remember(contents[some], user_id="u", k=1)[0].id == some
    assert guard.tripped is None and guard.largest < limit
