"""Server mode: an empty, deleted or foreign collection on a Chroma server is refused on open
like a missing ``chroma/`` folder, ``Memory.repair`` restores the records from the keyword
index's copy, and ``forget_user`` leaves nothing of the user in the server's collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_chroma_server import HOST, ChromaServer, chroma_server
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import RepairNeededError

__all__ = ["chroma_server"]  # the fixture, used by name

pytestmark = pytest.mark.slow


def _client(server: ChromaServer):  # type: ignore[no-untyped-def]
    import chromadb

    from ucma_core.storage.vectors import chroma_settings

    return chromadb.HttpClient(host=HOST, port=server.port, settings=chroma_settings())


def test_a_lost_or_foreign_server_collection_is_refused_then_repaired(
    tmp_path: Path, chroma_server: ChromaServer
) -> None:
    config = chroma_server.config()
    folder, other = tmp_path / "memory", tmp_path / "other"
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        ids = [mem.observe(f"server note {i}", user_id="u", importance=1.0) for i in range(5)]
        fact = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="u").id
    with Memory(other, embedder=HashingEmbedder(), config=config) as mem:
        mem.observe("someone else's memory", importance=1.0)

    # The manifest is pointed at the other folder's collection: refused, not mixed up.
    manifest = json.loads((folder / "ucma.json").read_text())
    own = manifest["collection"]
    manifest["collection"] = json.loads((other / "ucma.json").read_text())["collection"]
    (folder / "ucma.json").write_text(json.dumps(manifest))
    with pytest.raises(RepairNeededError, match="belongs to another memory folder"):
        Memory(folder, embedder=HashingEmbedder(), config=config)
    manifest["collection"] = own
    (folder / "ucma.json").write_text(json.dumps(manifest))

    # The server loses the collection: refused, and the repair brings every record back.
    _client(chroma_server).delete_collection(own)
    with pytest.raises(RepairNeededError, match="does not exist"):
        Memory(folder, embedder=HashingEmbedder(), config=config)
    report = Memory.repair(folder, embedder=HashingEmbedder(), config=config)
    assert sorted(report.restored_from_keywords) == sorted([*ids, fact]) and report.dropped == ()
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        assert [mem.get(i).content for i in ids] == [f"server note {i}" for i in range(5)]  # type: ignore[union-attr]
        assert mem.remember("server note 3", user_id="u", k=1)[0].id == ids[3]
        assert mem.verify().ok


def test_forget_user_leaves_nothing_of_the_user_in_the_server_collection(
    tmp_path: Path, chroma_server: ChromaServer
) -> None:
    config = chroma_server.config()
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        mem.observe_many(
            [f"zqvictim secret {i}" for i in range(20)], user_id="victim", tags=["zqvictimtag"], keep=True
        )
        kept = mem.observe("keeper note", user_id="keeper", importance=1.0)
        assert mem.forget_user("victim") == 20
        assert mem.get(kept) is not None
    collection = json.loads((folder / "ucma.json").read_text())["collection"]
    client = _client(chroma_server)
    names = [c.name for c in client.list_collections()]
    assert names == [collection]  # the old collection (with its schema keys) was dropped
    rows = client.get_collection(collection).get(include=["documents", "metadatas"])
    assert rows["documents"] == ["keeper note"]
    assert "zqvictim" not in json.dumps(rows) and "zqvictim" not in json.dumps(
        client.get_collection(collection).metadata
    )
