"""The public API on a memory opened by ``postgresql://`` URL (vectors in a Chroma server)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError, StorageError


def test_a_url_opens_a_database_memory_and_creates_no_folder(
    servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = servers.url()
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        assert mem.observe("Ana prefers tea in the morning", user_id="ana") is not None
    assert os.listdir(tmp_path) == []
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as again:
        hits = again.remember("what does Ana drink", user_id="ana", k=3)
        assert [h.content for h in hits][:1] == ["Ana prefers tea in the morning"]


def test_a_url_without_a_chroma_server_or_with_a_bad_memory_name_is_refused(servers: Servers) -> None:
    with pytest.raises(StorageError, match="Chroma server"):
        Memory(servers.url(), embedder=HashingEmbedder())
    with pytest.raises(InvalidInputError, match="memory name"):
        Memory(servers.url("Bad-Name"), embedder=HashingEmbedder(), config=servers.config())


def test_observe_remember_get_forget_and_scopes(servers: Servers) -> None:
    with Memory(servers.url(), embedder=HashingEmbedder(), config=servers.config()) as mem:
        ana = mem.observe("Ana is allergic to peanuts", user_id="ana", session_id="s1")
        ana2 = mem.observe("Ana flies to Lisbon on Friday", user_id="ana", session_id="s2")
        bob = mem.observe("Bob is allergic to cats", user_id="bob", session_id="s1")
        many = mem.observe_many(
            ["Ana likes listening to jazz records on Sundays", "Ana reads science fiction novels at night"],
            user_id="ana",
            session_id="s1",
        )
        assert ana and ana2 and bob and all(many)

        hits = mem.remember("allergic", user_id="ana", k=10)
        ids = [h.id for h in hits]
        assert ana in ids and bob not in ids
        assert [h.id for h in mem.remember("allergic", user_id="bob", k=10)] == [bob]

        record = mem.get(ana)
        assert record is not None and record.content == "Ana is allergic to peanuts"
        assert {r.id for r in mem.list_memories(user_id="ana")} == {ana, ana2, *many}
        assert [e.id for e in mem.history(user_id="ana", session_id="s1")] == [ana, *many]

        assert mem.forget(ana2) is True
        assert mem.get(ana2) is None
        assert mem.forget_session("s1", user_id="ana") == 3
        assert mem.list_memories(user_id="ana") == []
        assert mem.forget_user("bob") == 1
        assert mem.list_memories(user_id="bob") == []
        report = mem.verify()
        assert report.ok, report


def test_the_memory_says_where_it_lives(servers: Servers, tmp_path: Path) -> None:
    url = servers.url("where_test")
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        assert mem.postgres is not None
        assert mem.postgres.schema == "ucma_where_test" and mem.postgres.memory == "where_test"
        assert "password" not in str(mem.path)
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as folder:
        assert folder.postgres is None


def test_without_psycopg_the_core_imports_and_a_url_names_the_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from ucma_core import ChromaConfig, Memory, MemoryConfig\n"
        "from ucma_core.embedders import HashingEmbedder\n"
        "from ucma_core.errors import DependencyMissingError\n"
        f"Memory({str(tmp_path / 'm')!r}, embedder=HashingEmbedder()).close()\n"
        "try:\n"
        "    config = MemoryConfig(chroma=ChromaConfig(host='127.0.0.1', port=1))\n"
        "    Memory('postgresql://u@127.0.0.1:1/db', embedder=HashingEmbedder(), config=config)\n"
        "except DependencyMissingError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "pip install 'ucma[postgres]'" in out.stdout


def test_keys_and_forgetting_reach_every_open_memory_object(servers: Servers) -> None:
    url = servers.url()
    with (
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as a,
        Memory(url, embedder=HashingEmbedder(), config=servers.config()) as b,
    ):
        first = a.upsert("address", "Ana's shipping address is 12 Harbour Road", user_id="ana")
        again = b.upsert("address", "Ana's shipping address is 9 Lighthouse Lane", user_id="ana")
        assert again == first  # b knew a's key: the memory was replaced, not duplicated
        record = a.get(first)
        assert record is not None and record.content == "Ana's shipping address is 9 Lighthouse Lane"
        assert [h.id for h in a.remember("Lighthouse Lane address", user_id="ana", k=3)] == [first]
        assert b.forget(first) is True
        assert a.get(first) is None and a.list_memories(user_id="ana") == []
        assert a.upsert("address", "Ana's shipping address is 3 Quay Street", user_id="ana") != first
        assert a.verify().ok and b.verify().ok
