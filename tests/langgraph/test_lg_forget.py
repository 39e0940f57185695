"""Forgetting reaches the checkpoints: after forget_user (or delete_thread with
forget_memories=True) no file of the folder holds the text, and the next run on the same
thread id stores only the new turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from tests._cli_run import ucma
from tests.langgraph.lg_outbox_steps import echo_graph
from ucma_core import LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DiskFullError
from ucma_langchain.langgraph import UCMACheckpointer
from ucma_langchain.langgraph.checkpointer import ATTACHMENT

SECRET = "Quetzalcoatl-7731"  # one word: Ana's secret, in her messages only
OTHER = "Zanzibar-4410"  # Ben's


def cfg(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def files_with(folder: Path, text: str) -> list[str]:
    """Every file of the folder whose bytes hold ``text`` (UTF-8 or UTF-16)."""
    needles = [text.encode(), text.encode("utf-16-le")]
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and any(n in p.read_bytes() for n in needles)
    )


def chat(saver: UCMACheckpointer) -> Any:
    graph = echo_graph(saver)
    for n in range(3):
        graph.invoke({"messages": [HumanMessage(f"my code is {SECRET} ({n})")]}, cfg("ana-1", "ana"))
        graph.invoke({"messages": [HumanMessage(f"the word is {SECRET} ({n})")]}, cfg("ana-2", "ana"))
        graph.invoke({"messages": [HumanMessage(f"ben says {OTHER} ({n})")]}, cfg("ben-1", "ben"))
    saver.flush()
    return graph


def sessions(mem: Memory, user: str, thread: str) -> list[str]:
    return [e.content for e in mem.history(session_id=thread, user_id=user)]


def test_forget_user_leaves_no_text_in_any_file_and_a_new_run_stores_only_the_new_turn(
    tmp_path: Path,
) -> None:
    mem = Memory(tmp_path, embedder=HashingEmbedder())
    saver = UCMACheckpointer(mem)
    graph = chat(saver)
    saver.copy_thread("ana-1", "copied")  # a copy holds her text too
    assert "checkpoints.sqlite3-wal" in files_with(tmp_path, SECRET)  # the test can fail
    assert mem.forget_user("ana") == 12
    assert saver.get_tuple(cfg("copied", "ana")) is None
    assert graph.get_state(cfg("ana-1", "ana")).values == {}
    assert len(graph.get_state(cfg("ben-1", "ben")).values["messages"]) == 6  # Ben keeps his thread
    graph.invoke({"messages": [HumanMessage("a fresh start")]}, cfg("ana-1", "ana"))
    mem.close()
    assert files_with(tmp_path, SECRET) == []
    assert files_with(tmp_path, OTHER) != []
    with Memory(tmp_path, embedder=HashingEmbedder()) as again:
        assert sessions(again, "ana", "ana-1") == ["a fresh start", "echo: a fresh start"]
        assert sessions(again, "ana", "ana-2") == []
        assert len(sessions(again, "ben", "ben-1")) == 6


def test_forget_user_while_no_checkpointer_is_open_is_applied_when_one_opens(tmp_path: Path) -> None:
    """``ucma forget-user`` with no app running and no ``ucma.attachments`` entry point
    installed: the forget waits in the manifest, ``verify`` says so, and the next
    ``UCMACheckpointer(mem)`` applies it before anything else."""
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        chat(UCMACheckpointer(mem))
    manifest = json.loads((tmp_path / "ucma.json").read_text())
    assert manifest["attachments"][ATTACHMENT]["files"] == ["checkpoints.sqlite3"]
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        assert mem.attachments == {ATTACHMENT: (tmp_path / "checkpoints.sqlite3",)}
    done = ucma("forget-user", tmp_path, "ana", "--embedder", "hashing", "--json")
    assert done.code == 0 and done.json()["memories"] == 12, done.err
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        if done.json()["pending"] == []:  # the entry point is installed (pip install -e .): applied at once
            # the forget had Chroma save its index, so this open loads it rather than building it
            # again from this process's unzeroed buffers, which held her text
            assert mem.verify().ok and mem.pending_forgets == {}
            assert mem.remember("code word", user_id="ben") != []
            assert files_with(tmp_path, SECRET) == []
        else:
            assert mem.pending_forgets == {ATTACHMENT: [{"user_id": "ana"}]}
            assert any("forget(s) wait" in p for p in mem.verify().problems)
            saver = UCMACheckpointer(mem)
            assert saver.get_tuple(cfg("ana-1", "ana")) is None
            assert mem.verify().ok and mem.pending_forgets == {}
    assert files_with(tmp_path, SECRET) == []


def test_delete_thread_with_its_memories_scrubs_every_file(tmp_path: Path) -> None:
    mem = Memory(tmp_path, embedder=HashingEmbedder())
    saver = UCMACheckpointer(mem)
    graph = chat(saver)
    saver.delete_thread("ana-2", forget_memories=True)
    assert sessions(mem, "ana", "ana-2") == [] and len(sessions(mem, "ana", "ana-1")) == 6
    graph.invoke({"messages": [HumanMessage("again")]}, cfg("ana-2", "ana"))
    mem.close()
    leaked = [f for f in files_with(tmp_path, "the word is") if f]
    assert leaked == []
    with Memory(tmp_path, embedder=HashingEmbedder()) as again:
        assert sessions(again, "ana", "ana-2") == ["again", "echo: again"]
        assert sessions(again, "ana", "ana-1")[0] == f"my code is {SECRET} (0)"


def test_forget_session_reaches_the_threads_of_the_session(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        saver = UCMACheckpointer(mem)
        graph = chat(saver)
        assert mem.forget_session("ana-1", user_id="ana", scrub=True) == 6
        assert graph.get_state(cfg("ana-1", "ana")).values == {}
        assert len(graph.get_state(cfg("ana-2", "ana")).values["messages"]) == 6


def test_disk_full_under_the_checkpointer_is_a_ucma_error(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        chat(UCMACheckpointer(mem))
    full = MemoryConfig(limits=LimitsConfig(min_free_bytes=2**62))
    with Memory(tmp_path, embedder=HashingEmbedder(), config=full) as mem:
        saver = UCMACheckpointer(mem)
        graph = echo_graph(saver)
        before = graph.get_state(cfg("ben-1", "ben")).values["messages"]
        with pytest.raises(DiskFullError, match="disk full"):
            graph.invoke({"messages": [HumanMessage("no room")]}, cfg("ben-1", "ben"))
        assert graph.get_state(cfg("ben-1", "ben")).values["messages"] == before
