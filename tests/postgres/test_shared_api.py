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
