"""Tag, participant and metadata keys in Chroma are keyed hashes under a per-folder secret
(issue #12): Chroma's files hold no plain hash of a name that a dictionary of likely
names could be checked against, filters keep working, and a folder from before the
secret is re-keyed when it is opened — all or nothing across a crash."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.codec import UNSALTED, ChromaKeys, metadata_key, participant_key, rekey, tag_key

REPO = Path(__file__).resolve().parents[1]
TAG, PERSON, META = "qzvtag", "Qzvperson", "qzvteam"


def _open(folder: Path, clock: object) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), clock=clock)  # type: ignore[arg-type]


def _fill(folder: Path, clock: object) -> tuple[str, str]:
    with _open(folder, clock) as mem:
        tagged = mem.observe(
            "the quarterly review with the design team",
            keep=True,
            tags=[TAG],
            participants=[PERSON],
            metadata={META: "red"},
        )
        other = mem.observe("the quarterly review of the garden plans", keep=True, metadata={META: "blue"})
    return tagged, other


def _filters_work(folder: Path, clock: object, tagged: str, other: str) -> None:
    with _open(folder, clock) as mem:
        assert [r.id for r in mem.list_memories(tags=[TAG])] == [tagged]
        assert [r.id for r in mem.list_memories(metadata_filter={META: "red"})] == [tagged]
        assert [h.id for h in mem.remember("quarterly review", metadata_filter={META: "blue"})] == [other]
        assert [h.id for h in mem.remember("quarterly review", tags=[TAG])] == [tagged]
        hits = mem.remember(f"What did {PERSON} say about the quarterly review?", k=2)
        assert hits[0].id == tagged and hits[0].signals.get("speaker") == 1.0
        assert mem.verify().ok


def _manifest(folder: Path) -> dict[str, object]:
    return dict(json.loads((folder / "ucma.json").read_text()))


def _plain_keys() -> list[str]:
    return [tag_key(TAG), participant_key(PERSON), metadata_key(META)]


def _folder_keys(folder: Path) -> list[str]:
    keys = ChromaKeys.from_hex(str(_manifest(folder)["key_secret"]))
    return [keys.tag(TAG), keys.participant(PERSON), keys.metadata(META)]


def _chroma_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((folder / "chroma").rglob("*")) if p.is_file())


def test_a_new_folder_keeps_no_plain_hash_of_a_name_in_chroma(folder: Path, clock) -> None:
    tagged, other = _fill(folder, clock)
    secret = str(_manifest(folder)["key_secret"])
    assert len(bytes.fromhex(secret)) == 32 and "keyed-hashes" in _manifest(folder)["features"]  # type: ignore[operator]
    data = _chroma_bytes(folder)
    assert [k for k in _folder_keys(folder) if k.encode() not in data] == []  # stored under the secret
    assert [k for k in _plain_keys() if k.encode() in data] == []
    _filters_work(folder, clock, tagged, other)  # after a reopen


def test_each_folder_has_its_own_secret(tmp_path: Path, clock) -> None:
    _fill(tmp_path / "a", clock)
    _fill(tmp_path / "b", clock)
    assert _manifest(tmp_path / "a")["key_secret"] != _manifest(tmp_path / "b")["key_secret"]
    assert set(_folder_keys(tmp_path / "a")).isdisjoint(_folder_keys(tmp_path / "b"))


def _make_old(folder: Path) -> None:
    """Rewrite a closed folder into the layout of one written before the key secret existed:
    plain SHA-256 keys in Chroma and in the keyword index's copies, no secret in the manifest."""
    import chromadb
    from chromadb.config import Settings

    manifest = _manifest(folder)
    del manifest["key_secret"]
    manifest["features"] = ["metadata-keys", "intents"]
    client = chromadb.PersistentClient(
        path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_collection(str(manifest["collection"]))
    found = collection.get(include=["documents", "metadatas"])
    for memory_id, document, meta in zip(found["ids"], found["documents"], found["metadatas"], strict=True):
        plain = rekey(memory_id, document or "", dict(meta or {}), UNSALTED)
        collection.update(ids=[memory_id], metadatas=[{**{k: None for k in meta if k not in plain}, **plain}])
    client.close()
    con = sqlite3.connect(folder / "keywords.sqlite3")
    rows = con.execute(
        "SELECT r.id, m.content, r.stored FROM rowids r JOIN memories m ON m.rowid = r.fts"
    ).fetchall()
    with con:
        for memory_id, content, stored in rows:
            plain = rekey(memory_id, content, json.loads(stored), UNSALTED)
            con.execute("UPDATE rowids SET stored = ? WHERE id = ?", (json.dumps(plain), memory_id))
        con.execute("UPDATE meta SET value = ? WHERE key = 'manifest'", (json.dumps(manifest),))
    con.close()
    (folder / "ucma.json").write_text(json.dumps(manifest))
    assert [k for k in _plain_keys() if k.encode() not in _chroma_bytes(folder)] == []


def _own_collections(folder: Path) -> list[str]:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    try:
        return sorted(c.name for c in client.list_collections())
    finally:
        client.close()


def _rekeyed(folder: Path, clock: object, tagged: str, other: str) -> None:
    _filters_work(folder, clock, tagged, other)  # the open re-keys (or finishes re-keying)
    manifest = _manifest(folder)
    assert "keyed-hashes" in manifest["features"] and manifest["key_secret"]  # type: ignore[operator]
    data = _chroma_bytes(folder)
    assert [k for k in _plain_keys() if k.encode() in data] == []
    assert [k for k in _folder_keys(folder) if k.encode() not in data] == []
    assert _own_collections(folder) == [manifest["collection"]]


def test_a_folder_from_before_the_secret_is_rekeyed_on_open(folder: Path, clock) -> None:
    tagged, other = _fill(folder, clock)
    _make_old(folder)
    _rekeyed(folder, clock, tagged, other)
    first = _manifest(folder)["key_secret"]
    _filters_work(folder, clock, tagged, other)
    assert _manifest(folder)["key_secret"] == first  # re-keyed once, not on every open


CRASHING_OPEN = """
import os, sys
from pathlib import Path
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.keywords import KeywordIndex
from ucma_core.storage.manifest import Manifest
from ucma_core.storage.vectors import VectorStore

owner, method = {
    "after the copy": (VectorStore, "copy_to"),
    "after the manifest switch": (Manifest, "save"),
    "after the old collection drop": (VectorStore, "drop"),
    "after the keyword rewrite": (KeywordIndex, "rewrite_stored"),
}[sys.argv[2]]
original = getattr(owner, method)

def crashing(*args, **kwargs):
    original(*args, **kwargs)
    os._exit(77)

setattr(owner, method, crashing)
Memory(Path(sys.argv[1]), embedder=HashingEmbedder())
os._exit(0)
"""


@pytest.mark.parametrize(
    "point",
    [
        "after the copy",
        "after the manifest switch",
        "after the old collection drop",
        "after the keyword rewrite",
    ],
)
def test_a_crash_while_rekeying_leaves_the_old_folder_or_the_new_one(folder: Path, clock, point: str) -> None:
    tagged, other = _fill(folder, clock)
    _make_old(folder)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_OPEN, str(folder), point], env=env, capture_output=True, timeout=300
    )
    assert done.returncode == 77, done.stderr.decode()[-2000:]
    committed = "key_secret" in _manifest(folder)
    assert committed == (point != "after the copy")
    _rekeyed(folder, clock, tagged, other)


def test_the_chroma_batch_size_is_a_checked_limit() -> None:
    from ucma_core import LimitsConfig
    from ucma_core.errors import ConfigurationError

    assert LimitsConfig(chroma_batch_size=7).chroma_batch_size == 7
    with pytest.raises(ConfigurationError, match="chroma_batch_size"):
        LimitsConfig(chroma_batch_size=0)
