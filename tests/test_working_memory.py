"""Working memory: exact token budgets per zone, importance × recency eviction, staging, task slots."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ucma_core
from ucma_core import Memory, MemoryConfig
from ucma_core.config import WorkingMemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_core.tokens import TiktokenCounter, table_path
from ucma_core.working_memory import WorkingMemory

tiktoken = pytest.importorskip("tiktoken")


class WordCounter:
    """One token per whitespace-separated word: easy budgets to reason about."""

    def count(self, text: str) -> int:
        return len(text.split())


def _wm(clock, **budgets: int) -> WorkingMemory:
    cfg = WorkingMemoryConfig(**{"system_tokens": 10, "active_tokens": 10, "staging_tokens": 10, **budgets})
    return WorkingMemory(cfg, WordCounter(), clock)


TEXTS = [
    "The JWT expiry is 30 minutes.",
    "Ça va? 日本語のテキスト 12345 <|endoftext|>\n\n  x",
    "def f(x):\n    return x**2  # ok",
]


def test_tiktoken_counts_offline_and_exactly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    counter = TiktokenCounter()
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert "TIKTOKEN_CACHE_DIR" not in os.environ  # the counter leaves the environment alone
    table = table_path("cl100k_base")
    assert table is not None and table.parent == Path(ucma_core.__file__).parent / "data"
    # tiktoken's own reading of the same file, from a cache named as tiktoken names it
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shutil.copy(table, tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    reference = tiktoken.get_encoding("cl100k_base")
    for text in TEXTS:
        assert counter.count(text) == len(reference.encode(text, disallowed_special=()))


def test_the_default_table_ships_with_ucma_and_is_read_without_network_or_cache(tmp_path: Path) -> None:
    """A fresh process, with tiktoken's downloads refused and llama-index hidden, counts
    with the shipped table and writes nothing to tiktoken's cache."""
    script = textwrap.dedent(
        """
        import sys, tiktoken.load
        sys.modules["llama_index"] = None  # not installed
        def refuse(*args, **kwargs):
            raise AssertionError("tiktoken tried to read or fetch a table")
        tiktoken.load.read_file = refuse
        tiktoken.load.read_file_cached = refuse
        from ucma_core.tokens import TiktokenCounter
        print(TiktokenCounter().count("The JWT expiry is 30 minutes."))
        """
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(TiktokenCounter().count("The JWT expiry is 30 minutes."))
    assert list(cache.iterdir()) == []


def test_budgets_are_never_exceeded_with_the_real_tokenizer(clock) -> None:
    wm = WorkingMemory(
        WorkingMemoryConfig(system_tokens=20, active_tokens=30, staging_tokens=15), TiktokenCounter(), clock
    )
    texts = [f"note {i}: Ana booked a table for {i} people at the Luna cafe" for i in range(40)]
    for i, text in enumerate(texts):
        wm.add(text, zone="active", importance=(i % 7) / 7)
        wm.add(text, zone="staging", importance=(i % 5) / 5)
        usage = wm.usage()
        assert usage["active"]["used"] <= 30 and usage["staging"]["used"] <= 15
        assert usage["active"]["used"] == sum(wm.count_tokens(x.content) for x in wm.items("active"))


def test_eviction_removes_lowest_importance_then_least_recent(clock) -> None:
    wm = _wm(clock)
    low = wm.add("one two three", importance=0.1)
    high = wm.add("four five six", importance=0.9)
    clock.advance(seconds=7200)
    fresh = wm.add("seven eight nine", importance=0.1)
    assert low and high and fresh
    newcomer = wm.add("ten eleven", importance=0.5)  # 11 words > 10: someone must go
    assert newcomer is not None
    ids = {i.id for i in wm.items("active")}
    assert low.id not in ids and high.id in ids and fresh.id in ids
    assert wm.usage()["active"]["used"] == 8


def test_system_zone_is_never_evicted_and_oversized_items_are_refused(clock) -> None:
    wm = _wm(clock)
    assert wm.add("a b c d e f g h", zone="system") is not None
    assert wm.add("i j k", zone="system") is None
    assert len(wm.items("system")) == 1
    assert wm.add(" ".join(["w"] * 11), zone="active") is None
    with pytest.raises(InvalidInputError):
        wm.add("x", zone="attic")
    with pytest.raises(InvalidInputError):
        wm.add("")


def test_render_context_orders_zones_and_importance(clock) -> None:
    wm = _wm(clock)
    wm.add("be brief", zone="system")
    wm.add("minor detail", importance=0.2)
    wm.add("major detail", importance=0.8)
    wm.add("recalled memory", zone="staging")
    assert wm.render_context() == "be brief\n\nmajor detail\nminor detail\n\nrecalled memory"


def test_task_slots_are_capped_and_cleared_on_completion(clock) -> None:
    cfg = WorkingMemoryConfig(max_task_slots=3, active_tokens=100)
    wm = WorkingMemory(cfg, WordCounter(), clock)
    wm.set_slot("t1", "question", "where does Marta live", relevance=0.9)
    wm.set_slot("t1", "plan", "look up Marta facts", relevance=0.5)
    wm.set_slot("t1", "reasoning_step", "Marta is Ana's sister", relevance=0.3)
    wm.set_slot("t1", "retrieved_fact", "Marta lives in Porto", relevance=0.8)
    assert [s.slot for s in wm.slots("t1")] == ["question", "plan", "retrieved_fact"]
    assert wm.set_slot("t1", "evaluation", "weak", relevance=0.1) is None
    assert "[question] where does Marta live" in wm.render_context()
    done = wm.complete_task("t1")
    assert len(done) == 3 and wm.slots("t1") == []
    with pytest.raises(InvalidInputError):
        wm.set_slot("t1", "daydream", "x")


def test_remember_can_stage_results_and_promote(folder, clock) -> None:
    cfg = MemoryConfig(importance_threshold=0.0, working=WorkingMemoryConfig(staging_tokens=40))
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=cfg, token_counter=WordCounter()
    ) as m:
        a = m.observe("Ana prefers window seats on long flights")
        m.observe("Ana's passport expires in March next year")
        results = m.remember("Ana flights", k=2, stage=True)
        staged = m.working.items("staging")
        assert {i.memory_id for i in staged} == {r.id for r in results}
        promoted = m.working.promote(f"memory:{a}")
        assert promoted is not None and promoted.zone == "active"
        assert m.working.usage()["staging"]["used"] <= 40


# ---------------------------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------------------------


def test_items_carry_a_scope_and_reads_never_show_another_users(clock) -> None:
    from ucma_core import ANY

    wm = _wm(clock, system_tokens=50, active_tokens=50, staging_tokens=50)
    wm.add("Answer briefly.", zone="system")
    wm.add("Ana plans a trip to Porto", user_id="ana", session_id="a1")
    wm.add("Ben is allergic to nuts", user_id="ben")
    wm.add("Ana prefers trains", user_id="ana", session_id="a2")
    assert wm.render_context(user_id="ana") == (
        "Answer briefly.\n\nAna plans a trip to Porto\nAna prefers trains"
    )
    assert "Ana" not in wm.render_context(user_id="ben")
    assert "Ben" not in wm.render_context(user_id="ana", session_id="a1")
    assert wm.render_context(user_id="ana", session_id="a1").endswith("Ana plans a trip to Porto")
    assert wm.render_context(user_id=None) == "Answer briefly."  # only unscoped items
    assert len(wm.items(user_id=ANY)) == len(wm.items()) == 4
    assert [i.user_id for i in wm.items("active", user_id="ben")] == ["ben"]
    assert wm.forget_user("ana") == 2
    assert "Ana" not in wm.render_context()


def test_recalled_memories_are_staged_in_their_own_scope(folder, clock) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        mem.observe("Ana's passport number is in the drawer", user_id="ana", importance=0.9)
        mem.observe("Ben's passport is at the embassy", user_id="ben", importance=0.9)
        mem.remember("passport", user_id="ana", stage=True)
        mem.remember("passport", user_id="ben", stage=True)
        assert "Ben" not in mem.working.render_context(user_id="ana")
        assert "Ana" not in mem.working.render_context(user_id="ben")
        staged = {i.user_id for i in mem.working.items("staging")}
        assert staged == {"ana", "ben"}
        mem.forget_user("ana")
        assert "Ana" not in mem.working.render_context()


def test_items_moved_to_long_term_keep_their_user_and_go_with_forget_user(folder, clock) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        mem.working.add("Ana decided to book the night train", importance=0.95, user_id="ana", session_id="s")
        mem.working.add("Shared note for everyone", importance=0.95)
        report = mem.consolidate(phases=["transitions"])
        assert report.phases["transitions"]["moved_to_long_term"] == 2
        moved = mem.list_memories(user_id="ana", tags=["working_memory"])
        assert [(m.content, m.user_id, m.session_id) for m in moved] == [
            ("Ana decided to book the night train", "ana", "s")
        ]
        assert mem.forget_user("ana") == 1
        assert mem.list_memories(user_id="ana") == []
        assert [m.content for m in mem.list_memories(user_id=None, tags=["working_memory"])] == [
            "Shared note for everyone"
        ]
