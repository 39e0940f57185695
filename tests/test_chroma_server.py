"""Server mode: a real ``chroma run`` server on loopback, used through ``ChromaConfig(host=...)``.

Each test gets its own server (own data directory and port), started with the ``chroma``
CLI that ships with the chromadb package (:func:`tests.servers.start_chroma`, shared with
the PostgreSQL tests and the benchmarks) and terminated when the test ends. Only
127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import HOST, start_chroma, stop_chroma
from ucma_core import ANY, ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

pytestmark = pytest.mark.slow


class ChromaServer:
    def __init__(self, port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.port = port
        self.proc = proc
        self.log = log

    def config(self) -> MemoryConfig:
        return MemoryConfig(chroma=ChromaConfig(host=HOST, port=self.port))


@pytest.fixture
def chroma_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChromaServer]:
    for var in ("NO_PROXY", "no_proxy"):  # chromadb's HTTP client must not route loopback via a proxy
        monkeypatch.setenv(var, f"{HOST},localhost")
    log = tmp_path / "chroma-server.log"
    port, proc = start_chroma(tmp_path / "chroma-data", log)
    try:
        yield ChromaServer(port, proc, log)
    finally:
        stop_chroma(proc)


def test_observe_remember_assert_fact_and_forget_through_a_server(
    tmp_path: Path, chroma_server: ChromaServer
) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder(), config=chroma_server.config()) as mem:
        ana = mem.observe(
            "Ana prefers concise answers about packaging",
            user_id="ana",
            importance=1.0,
            metadata={"k": [1, "é"]},
            tags=["pref"],
        )
        bob = mem.observe("Bob is planting tomatoes this spring", user_id="bob", importance=1.0)
        assert ana is not None and bob is not None
        fact = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
        again = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
        assert again.id == fact.id and again.confidence > fact.confidence

        hits = mem.remember("concise answers packaging", user_id="ana", k=5)
        assert hits and hits[0].id == ana
        assert hits[0].metadata == {"k": [1, "é"]}
        assert bob not in [h.id for h in hits]  # scope is enforced by the server-side filter
        assert [
            h.id for h in mem.remember("where does Ana live", user_id="ana", memory_types=["semantic"])
        ] == [fact.id]
        assert [h.id for h in mem.remember("packaging", user_id="ana", tags=["pref"])] == [ana]

        assert mem.forget(bob) is True
        assert mem.get(bob) is None
        assert mem.remember("tomatoes spring", user_id="bob") == []
        assert mem.forget(bob) is False
        stats = mem.stats()
        assert stats["memories"] == mem.verify().chroma_records == 2
    assert not (folder / "chroma").exists(), "server mode must not create an embedded Chroma"


def test_reopen_on_the_same_server_finds_everything(tmp_path: Path, chroma_server: ChromaServer) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder(), config=chroma_server.config()) as mem:
        episode = mem.observe("the server keeps the vectors", user_id="u", importance=1.0)
        fact = mem.assert_fact("server", "stores", "vectors", user_id="u")
        mem.remember("server vectors", user_id="u", k=2)
        before = {i: mem.get(i) for i in (episode, fact.id)}
        gone = mem.observe("this one will be forgotten", user_id="u", importance=1.0)
        assert gone is not None and mem.forget(gone)

    with Memory(folder, embedder=HashingEmbedder(), config=chroma_server.config()) as mem:
        assert {i: mem.get(i) for i in before} == before
        assert mem.get(gone) is None  # type: ignore[arg-type]
        assert episode in [r.id for r in mem.remember("server keeps vectors", user_id="u", k=3)]
        assert [f.id for f in mem.facts_about("server", user_id="u")] == [fact.id]
        assert mem.stats()["memories"] == mem.verify().chroma_records == 2
        assert mem.forget_user("u") == 2
        assert mem.stats()["memories"] == mem.verify().chroma_records == 0


def test_two_folders_on_one_server_do_not_see_each_other(tmp_path: Path, chroma_server: ChromaServer) -> None:
    config = chroma_server.config()
    folder_a, folder_b = tmp_path / "a", tmp_path / "b"
    with Memory(folder_a, embedder=HashingEmbedder(), config=config) as a:
        in_a = a.observe("alpha lives only in folder a", user_id="u", importance=1.0)
    with Memory(folder_b, embedder=HashingEmbedder(), config=config) as b:
        in_b = b.observe("beta lives only in folder b", user_id="u", importance=1.0)
        assert b.get(in_a) is None, "folder b sees folder a's memory"  # type: ignore[arg-type]
        assert in_a not in [r.id for r in b.remember("alpha lives only in folder a", user_id=ANY, k=10)]
        assert b.stats()["memories"] == 1
    with Memory(folder_a, embedder=HashingEmbedder(), config=config) as a:
        assert a.get(in_b) is None, "folder a sees folder b's memory"  # type: ignore[arg-type]
        assert [r.id for r in a.remember("lives only in folder", user_id=ANY, k=10)] == [in_a]
        assert a.stats()["memories"] == 1

    collections = [
        json.loads((f / "ucma.json").read_text("utf-8"))["collection"] for f in (folder_a, folder_b)
    ]
    assert collections[0] != collections[1], "each folder needs its own Chroma collection"
    # Both open at once, writing side by side.
    with (
        Memory(folder_a, embedder=HashingEmbedder(), config=config) as a,
        Memory(folder_b, embedder=HashingEmbedder(), config=config) as b,
    ):
        a2 = a.observe("gamma also in a", user_id="u", importance=1.0)
        b2 = b.observe("gamma also in b", user_id="u", importance=1.0)
        assert {r.id for r in a.remember("gamma also", user_id="u", k=10)} <= {in_a, a2}
        assert {r.id for r in b.remember("gamma also", user_id="u", k=10)} <= {in_b, b2}
