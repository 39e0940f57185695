"""LangGraph's checkpointer on a memory in PostgreSQL: threads in LangGraph's own
``PostgresSaver`` tables in the memory's schema, every message stored once, across
restarts and worker processes, and forgotten with its user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.postgres._lg_worker import echo_graph
from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer

ROOT = Path(__file__).parents[2]


def _holds(dump: str, text: str) -> bool:
    """Whether a ``pg_dump`` holds ``text`` as text or inside a ``bytea`` (hex; LangGraph keeps
    messages as msgpack blobs)."""
    return text in dump or text.encode().hex() in dump


def _open(servers: Servers, url: str) -> Memory:
    return Memory(url, embedder=HashingEmbedder(), config=servers.config())


def test_workers_opening_checkpointers_at_once_on_a_new_memory_all_open(servers: Servers) -> None:
    """LangGraph's migrations create indexes ``CONCURRENTLY``: a worker waiting inside
    ``pg_advisory_lock`` for another's setup deadlocked with it (one of four failed, every round)."""
    url = servers.url()
    with _open(servers, url):  # the memory exists; its checkpoint tables do not yet
        pass
    memories = [_open(servers, url) for _ in range(4)]
    start = threading.Barrier(len(memories))
    failed: list[BaseException] = []

    def attach(mem: Memory) -> None:
        start.wait()
        try:
            UCMACheckpointer(mem)
        except BaseException as e:
            failed.append(e)

    workers = [threading.Thread(target=attach, args=(mem,)) for mem in memories]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
    for mem in memories:
        mem.close()
    assert not failed, failed


def test_threads_survive_a_restart_and_each_message_is_stored_once(servers: Servers) -> None:
    url = servers.url()
    run = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
    with _open(servers, url) as mem:
        saver = UCMACheckpointer(mem)
        app = echo_graph(saver)
        app.invoke({"messages": [("user", "my cat is called Miso")]}, run)
        app.invoke({"messages": [("user", "I moved to Lisbon in May")]}, run)
        first = [m.text for m in app.get_state(run).values["messages"]]
    with _open(servers, url) as mem:  # closing the memory closed the checkpointer
        saver = UCMACheckpointer(mem)
        app = echo_graph(saver)
        assert [m.text for m in app.get_state(run).values["messages"]] == first
        app.invoke({"messages": [("user", "back again")]}, run)
        assert saver.flush(30) and saver.backlog == 0
        turns = [e.content for e in mem.history(session_id="t1", user_id="ana")]
        saver.close()
    assert turns == [
        "my cat is called Miso",
        "echo: my cat is called Miso",
        "I moved to Lisbon in May",
        "echo: I moved to Lisbon in May",
        "back again",
        "echo: back again",
    ]
    assert "checkpoint_blobs" in servers.pg_dump(url)  # LangGraph's own tables, in this database


def test_a_path_is_refused_on_a_database_memory(servers: Servers, tmp_path: Path) -> None:
    from ucma_core.errors import InvalidInputError

    with _open(servers, servers.url()) as mem, pytest.raises(InvalidInputError, match="leave path out"):
        UCMACheckpointer(mem, path=tmp_path / "c.sqlite3")


@pytest.mark.slow
def test_two_worker_processes_run_threads_on_one_memory(servers: Servers) -> None:
    url = servers.url()
    with _open(servers, url):  # create the memory before the workers race to
        pass
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.postgres._lg_worker",
                url,
                str(servers.chroma_port),
                name,
                "2",
                "3",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("ana", "bob")
    ]
    seen: dict[str, list[str]] = {}
    for proc in workers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        seen.update(json.loads(out.strip().splitlines()[-1]))
    assert sorted(seen) == ["ana-0", "ana-1", "bob-0", "bob-1"]
    with _open(servers, url) as mem:
        saver = UCMACheckpointer(mem)
        app = echo_graph(saver)
        for thread, texts in seen.items():
            user = thread.split("-")[0]
            run = {"configurable": {"thread_id": thread, "user_id": user}}
            assert [m.text for m in app.get_state(run).values["messages"]] == texts
            assert len(texts) == 6
            stored = [e.content for e in mem.history(session_id=thread, user_id=user)]
            assert stored == texts  # every message once, in order
        assert saver.backlog == 0
        saver.close()


@pytest.mark.slow
def test_messages_of_a_killed_worker_are_stored_once_by_the_next_one(servers: Servers) -> None:
    url = servers.url()
    with _open(servers, url):
        pass
    env = {
        **os.environ,
        "UCMA_TEST_HOLD": "1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.postgres._lg_worker", url, str(servers.chroma_port), "ana", "1", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        texts = json.loads(line)["ana-0"]
    finally:
        proc.kill()  # SIGKILL: no close, the mirror's queue is lost
        proc.wait(timeout=30)
    assert len(texts) == 4
    with _open(servers, url) as mem:
        assert mem.history(session_id="ana-0", user_id="ana") == []  # the kill lost the queue
        saver = UCMACheckpointer(mem)  # replays the outbox
        assert saver.flush(30) and saver.backlog == 0
        assert [e.content for e in mem.history(session_id="ana-0", user_id="ana")] == texts
        saver.close()
    with _open(servers, url) as mem:  # a second replay finds nothing left: each message once
        saver = UCMACheckpointer(mem)
        assert saver.flush(30) and saver.backlog == 0
        assert [e.content for e in mem.history(session_id="ana-0", user_id="ana")] == texts
        saver.close()


def test_forget_user_deletes_their_threads_from_the_database(servers: Servers) -> None:
    url = servers.url()
    with _open(servers, url) as mem:
        saver = UCMACheckpointer(mem)
        app = echo_graph(saver)
        ana = {"configurable": {"thread_id": "a1", "user_id": "ana"}}
        bob = {"configurable": {"thread_id": "b1", "user_id": "bob"}}
        app.invoke({"messages": [("user", "my passport number is Quillfeather")]}, ana)
        app.invoke({"messages": [("user", "my dog is called Bolt")]}, bob)
        assert saver.flush(30)
        assert _holds(servers.pg_dump(url), "Quillfeather")
        mem.forget_user("ana")
        assert app.get_state(ana).values == {}
        assert app.get_state(bob).values["messages"][0].text == "my dog is called Bolt"
        saver.close()
    dump = servers.pg_dump(url)
    assert not _holds(dump, "Quillfeather")
    assert _holds(dump, "Bolt")


def test_forget_user_reaches_the_threads_while_no_checkpointer_is_open(servers: Servers) -> None:
    url = servers.url()
    run = {"configurable": {"thread_id": "a1", "user_id": "ana"}}
    with _open(servers, url) as mem:
        app = echo_graph(UCMACheckpointer(mem))
        app.invoke({"messages": [("user", "my passport number is Quillfeather")]}, run)
    with _open(servers, url) as mem:  # another worker, no checkpointer open
        mem.forget_user("ana")
    assert not _holds(servers.pg_dump(url), "Quillfeather")


def test_delete_thread_with_its_memories(servers: Servers) -> None:
    url = servers.url()
    with _open(servers, url) as mem:
        saver = UCMACheckpointer(mem)
        app = echo_graph(saver)
        gone = {"configurable": {"thread_id": "t-gone", "user_id": "ana"}}
        kept = {"configurable": {"thread_id": "t-kept", "user_id": "ana"}}
        app.invoke({"messages": [("user", "the vault code is Marrowfinch")]}, gone)
        app.invoke({"messages": [("user", "my favourite colour is Tealwhistle")]}, kept)
        assert saver.flush(30)
        saver.delete_thread("t-gone", forget_memories=True)
        assert app.get_state(gone).values == {}
        assert mem.history(session_id="t-gone", user_id="ana") == []
        assert mem.history(session_id="t-kept", user_id="ana")[0].content == (
            "my favourite colour is Tealwhistle"
        )
        saver.close()
    dump = servers.pg_dump(url)
    assert not _holds(dump, "Marrowfinch")
    assert _holds(dump, "Tealwhistle")
