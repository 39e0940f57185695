"""``Memory.rekey`` on a memory folder: a new key secret in ``ucma.json``, and tag and
metadata filters find the same memories afterwards, also after reopening. (A memory in
PostgreSQL: ``tests/postgres/test_shared_rebuild.py``.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ucma_core import LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder


def _secret(folder: Path) -> str:
    return str(json.loads((folder / "ucma.json").read_text())["key_secret"])


def test_rekey_gives_the_folder_a_new_secret_and_keeps_every_filter(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        jam = mem.observe("Ana labelled the plum jam", user_id="ana", tags=["pantry"], metadata={"shelf": 2})
        mem.observe("Ana bought new jars", user_id="ana", tags=["shop"], metadata={"shelf": 3}, keep=True)
        before = _secret(folder)
        assert mem.rekey() == 2
        after = _secret(folder)
        assert after != before
        assert [m.id for m in mem.list_memories(user_id="ana", tags=["pantry"])] == [jam]
        hits = mem.remember("plum jam", user_id="ana", metadata_filter={"shelf": 2}, k=3)
        assert [h.id for h in hits] == [jam]
    with Memory(folder, embedder=HashingEmbedder()) as again:
        assert _secret(folder) == after and again.verify().ok
        assert [m.id for m in again.list_memories(user_id="ana", tags=["pantry"])] == [jam]


# ----------------------------------------------------------------------------- scripts that never close

pytestmark_posix = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
REPO = Path(__file__).resolve().parents[1]
SMALL_BATCHES = MemoryConfig(limits=LimitsConfig(chroma_batch_size=7))  # the copy takes several batches

# Observes 20 memories, re-keys, observes 5 more, and ends without close(). With "kill" as
# its second argument, it stops in the middle of the copy (after its first batch), tells
# the test so through a file, and waits there to be killed -9; with "switched", it does so
# after the switch to the new collection, before the old one is dropped.
SCRIPT = """
import sys, threading
from pathlib import Path
from ucma_core import LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

folder, how = Path(sys.argv[1]), sys.argv[2]
config = MemoryConfig(limits=LimitsConfig(chroma_batch_size=7))
mem = Memory(folder, embedder=HashingEmbedder(), config=config)
for n in range(20):
    mem.observe(f"jar {n} of plum jam", user_id="ana", tags=["pantry"], metadata={"shelf": n % 3}, keep=True)

def stop_midway(done, total, label):
    if how == "kill" and 0 < done < total:
        (folder.parent / "midway").write_text(f"{done}/{total}")
        threading.Event().wait()
    if how == "switched" and label == "dropping the old collection" and done == 0:
        (folder.parent / "midway").write_text(label)
        threading.Event().wait()

assert mem.rekey(progress=stop_midway) == 20
for n in range(20, 25):
    mem.observe(f"jar {n} of plum jam", user_id="ana", tags=["pantry"], metadata={"shelf": n % 3}, keep=True)
print("re-keyed")
"""


def _script(folder: Path, how: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(folder), how],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _jars(mem: Memory) -> set[str]:
    return {m.content for m in mem.list_memories(user_id="ana", tags=["pantry"])}


def _works_with_its_keys(folder: Path, jars: int) -> None:
    """Every memory there, found by tag and by metadata filter, and the folder can re-key again."""
    expected = {f"jar {n} of plum jam" for n in range(jars)}
    with Memory(folder, embedder=HashingEmbedder(), config=SMALL_BATCHES) as mem:
        assert mem.verify().ok
        assert _jars(mem) == expected
        on_shelf_1 = mem.remember("plum jam", user_id="ana", metadata_filter={"shelf": 1}, k=50)
        assert {h.record.content for h in on_shelf_1} == {f"jar {n} of plum jam" for n in range(1, jars, 3)}
        secret = _secret(folder)
        assert mem.rekey() == jars
        assert _secret(folder) != secret and _jars(mem) == expected
    with Memory(folder, embedder=HashingEmbedder()) as again:
        assert again.verify().ok and _jars(again) == expected


def test_a_script_that_rekeys_and_never_closes_loses_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    Memory(folder, embedder=HashingEmbedder()).close()
    before = _secret(folder)
    script = _script(folder, "exit")
    out, err = script.communicate(timeout=600)
    assert script.returncode == 0, err.decode()[-2000:]
    assert out.decode().strip() == "re-keyed"
    assert _secret(folder) != before  # the new key is what the next open uses
    _works_with_its_keys(folder, 25)  # the 5 written after the re-key too


@pytestmark_posix
def test_a_script_killed_in_the_middle_of_a_rekey_leaves_the_old_keys_and_every_memory(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memory"
    Memory(folder, embedder=HashingEmbedder()).close()
    before = _secret(folder)
    script = _script(folder, "kill")
    try:
        midway = tmp_path / "midway"
        while not midway.exists():  # the script waits there: no race with the kill
            assert script.poll() is None, "the script ended before the middle of the copy"
            time.sleep(0.05)
        done, total = map(int, midway.read_text().split("/"))
        assert 0 < done < total == 20
        os.kill(script.pid, signal.SIGKILL)
    finally:
        script.kill()
        script.communicate()
    assert script.returncode == -signal.SIGKILL
    assert _secret(folder) == before  # the switch is the commit, and it never came
    _works_with_its_keys(folder, 20)


def _collections(folder: Path) -> set[str]:
    """The collections in the folder's Chroma (read in another process: Chroma keeps one
    client per path and per process, with the settings of the first)."""
    code = (
        "import chromadb, json, sys; "
        "print(json.dumps([c.name for c in chromadb.PersistentClient(sys.argv[1]).list_collections()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(folder / "chroma")], capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytestmark_posix
def test_a_script_killed_between_the_switch_and_the_drop_keeps_the_new_keys_and_drops_the_old(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memory"
    Memory(folder, embedder=HashingEmbedder()).close()
    before = _secret(folder)
    old = json.loads((folder / "ucma.json").read_text())["collection"]
    script = _script(folder, "switched")
    try:
        midway = tmp_path / "midway"
        while not midway.exists():  # the script waits there: no race with the kill
            assert script.poll() is None, "the script ended before the switch: " + repr(script.stderr)
            time.sleep(0.05)
        os.kill(script.pid, signal.SIGKILL)
    finally:
        script.kill()
        script.communicate()
    assert script.returncode == -signal.SIGKILL
    assert _secret(folder) != before  # the switch is the commit, and it came
    new = json.loads((folder / "ucma.json").read_text())["collection"]
    assert new != old and _collections(folder) == {old, new}  # killed before the drop
    _works_with_its_keys(folder, 20)
    assert old not in _collections(folder)  # dropped by the next open
    assert len(_collections(folder)) == 1
