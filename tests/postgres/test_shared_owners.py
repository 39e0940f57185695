"""What a shared memory keeps about its owners besides the memories, seen by every worker:
the messages it did not store (``Memory.skipped()``, a table) and the attachments list
(one attached in another worker after this one opened is reached by its ``forget_user``)."""

from __future__ import annotations

import pytest

from tests.postgres._lg_worker import echo_graph
from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.skipped import Skipped
from ucma_langchain.langgraph import UCMACheckpointer

pytestmark = pytest.mark.slow


def _open(servers: Servers, url: str) -> Memory:
    return Memory(url, embedder=HashingEmbedder(), config=servers.config())


def _skip(user: str, message: str) -> Skipped:
    return Skipped(
        at=1.0,
        user_id=user,
        agent_id=None,
        session_id="s1",
        message_id=message,
        role="user",
        chars=9,
        reason="metadata too deep",
    )


def test_skipped_messages_are_shared_by_every_worker_and_forgotten_with_their_user(servers: Servers) -> None:
    url = servers.url()
    with _open(servers, url) as a, _open(servers, url) as b:
        a.record_skipped([_skip("ana", "m1"), _skip("bob", "m2")])
        b.record_skipped([_skip("ana", "m1")])  # the same message again (a replay): kept once
        assert [s.message_id for s in b.skipped()] == ["m1", "m2"]
        assert [s.message_id for s in b.skipped(user_id="bob")] == ["m2"]
        assert b.stats()["skipped"] == 2 and len(a.verify().skipped) == 2
        b.forget_user("ana")
        assert [s.user_id for s in a.skipped()] == ["bob"]
    with _open(servers, url) as again:  # durable: not kept in the process
        assert [s.message_id for s in again.skipped()] == ["m2"]


def test_forget_user_reaches_an_attachment_another_worker_added_after_this_one_opened(
    servers: Servers,
) -> None:
    url = servers.url()
    run = {"configurable": {"thread_id": "a1", "user_id": "ana"}}
    with _open(servers, url) as early, _open(servers, url) as other:
        assert early.attachments == {}
        saver = UCMACheckpointer(other)  # attached in the other worker, after `early` opened
        echo_graph(saver).invoke({"messages": [("user", "my passport number is Quillfeather")]}, run)
        assert saver.flush(30)
        dump = servers.pg_dump(url)
        assert "Quillfeather" in dump or b"Quillfeather".hex() in dump
        early.forget_user("ana")  # no reopen: it reads the attachments list the other changed
        assert "langgraph-checkpoints" in early.attachments
        assert echo_graph(saver).get_state(run).values == {}
        saver.close()
    dump = servers.pg_dump(url)
    assert "Quillfeather" not in dump and b"Quillfeather".hex() not in dump
