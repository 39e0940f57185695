"""Scope isolation: reads never cross users unless asked; forget_user removes everything of theirs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.config import FusionConfig
from ucma_core.embedders import HashingEmbedder

USERS = ["ana", "bob", "cy", None]
WORDS = ["garden", "bike", "jazz", "tea", "Porto", "deadline", "python", "dog", "flight", "piano"]

# diversification off, so every in-scope memory can come back and be counted
NO_DEDUP = MemoryConfig(
    importance_threshold=0.0, fusion=FusionConfig(mmr_lambda=1.0, duplicate_similarity=1.0)
)
observation = st.tuples(st.sampled_from(USERS), st.lists(st.sampled_from(WORDS), min_size=2, max_size=6))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(observation, min_size=1, max_size=25),
    st.sampled_from(USERS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_remember_never_returns_another_users_memories(items, reader, query_words) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory(Path(tmp), embedder=HashingEmbedder(64), config=NO_DEDUP) as mem,
    ):
        owner = {}
        for user, words in items:
            memory_id = mem.observe(" ".join(words), user_id=user)
            owner[memory_id] = user
        mem.assert_fact(" ".join(query_words), "relates to", "garden", user_id="bob")
        hits = mem.remember(" ".join(query_words), k=50, user_id=reader)
        assert all(h.record.user_id == reader for h in hits)
        mine = sum(1 for u in owner.values() if u == reader) + (reader == "bob")
        assert len(hits) == min(50, mine)
        everyone = mem.remember(" ".join(query_words), k=50, user_id=ANY)
        assert len(everyone) == min(50, len(owner) + 1)


def files_with(folder: Path, text: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and text in p.read_bytes()
    )


def test_forget_user_removes_every_trace(mem: Memory) -> None:
    e = mem.observe("Ana's secret recipe uses saffron", user_id="ana", importance=0.9)
    mem.assert_fact("Ana", "loves", "saffron", user_id="ana", source_ids=[e])
    mem.add_procedure("make paella", ["toast rice", "add saffron"], user_id="ana")
    mem.learn("Ana likes saffron dishes", user_id="ana")
    mem.intend("suggest saffron dishes", ["dinner"], user_id="ana")
    keep = mem.observe("Bob's recipe uses paprika", user_id="bob", importance=0.9)
    assert mem.forget_user("ana") == 5
    folder = Path(mem.path)
    assert files_with(folder, b"saffron") == []  # no text of hers in any file once it returns
    assert mem.remember("saffron recipe", user_id="ana") == []
    assert mem.facts_about("Ana", user_id="ana") == []
    assert mem.intentions(user_id="ana") == []
    assert mem.get(e) is None
    assert all(user != "ana" for user, _, _ in mem.list_scopes())
    assert mem.related_entities("Ana", user_id="ana") == {} and mem.verify().ok
    assert all(entry.user_id != "ana" for entry in mem.sensory.recent())
    assert [h.id for h in mem.remember("recipe", user_id="bob")] == [keep]
    assert files_with(folder, b"saffron") == []  # nor after the queries that follow
    mem.close()
    assert files_with(folder, b"saffron") == []


def test_forget_user_leaves_no_trace_through_later_queries_writes_and_opens(folder: Path) -> None:
    """Chroma builds a vector index it has not saved from buffers never zeroed, each time a
    client first reads the collection; this process held her text, so every such build
    could write it into the folder again. Checked after each query, after a write, and
    after a new open in the same process."""
    mem = Memory(folder, embedder=HashingEmbedder())
    for n in range(6):
        mem.observe(f"Ana's recipe {n}: " + "saffron and rice " * 150, user_id="ana", importance=0.9)
    keep = mem.observe("Bob's recipe uses paprika", user_id="bob", importance=0.9)
    for n in range(20):  # her text passes through many buffers of this process
        assert mem.remember(f"saffron rice {n} " + "saffron " * 100, user_id="ana") != []
    assert mem.forget_user("ana") == 6
    assert files_with(folder, b"saffron") == []
    index = {p: p.read_bytes() for p in (folder / "chroma").glob("*/*.bin")}
    assert index  # Bob's record is indexed
    for query, user in [("saffron recipe", "ana"), ("recipe", "bob"), ("saffron", "bob"), ("rice", "ana")]:
        mem.remember(query, user_id=user)
        assert files_with(folder, b"saffron") == [], query
    tea = mem.observe("Bob likes tea", user_id="bob", importance=0.9)
    mem.flush()
    assert mem.remember("tea", user_id="bob")[0].id == tea
    assert files_with(folder, b"saffron") == []
    mem.close()
    index = {p: p.read_bytes() for p in (folder / "chroma").glob("*/*.bin")}
    with Memory(folder, embedder=HashingEmbedder()) as again:
        assert {h.id for h in again.remember("recipe tea", user_id="bob")} == {keep, tea}
        assert files_with(folder, b"saffron") == []
        # nothing built the index again from unzeroed buffers: its files are as close() saved them
        assert {p: p.read_bytes() for p in (folder / "chroma").glob("*/*.bin")} == index
    assert files_with(folder, b"saffron") == []


def test_agent_and_session_narrow_reads(mem: Memory) -> None:
    a = mem.observe("planning the Lisbon offsite", user_id="ana", agent_id="planner", importance=0.9)
    b = mem.observe("planning the Lisbon offsite budget", user_id="ana", agent_id="finance", importance=0.9)
    assert {h.id for h in mem.remember("Lisbon offsite", user_id="ana")} == {a, b}
    assert [h.id for h in mem.remember("Lisbon offsite", user_id="ana", agent_id="finance")] == [b]
