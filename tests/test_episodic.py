"""Episodes: observe, importance gate, sensory buffer, sessions, time ranges, tiers."""

from __future__ import annotations

from datetime import datetime, timezone

from ucma_core import Episode, Memory, MemoryType, Tier
from ucma_core.storage.graph import EdgeType


def test_observe_then_remember_returns_the_episode_with_its_fields(mem: Memory, clock) -> None:
    memory_id = mem.observe(
        "I'm Ana and I prefer concise answers.",
        source="user",
        user_id="ana",
        session_id="s1",
        metadata={"turn": 1, "tags": ["a"]},
    )
    assert memory_id is not None
    hits = mem.remember("how does Ana like her answers?", user_id="ana")
    top = hits[0]
    assert top.id == memory_id
    assert top.content == "I'm Ana and I prefer concise answers."
    assert top.memory_type is MemoryType.EPISODIC
    assert top.timestamp == clock.now
    assert top.metadata == {"turn": 1, "tags": ["a"]}
    assert 0.0 < top.score <= 1.0
    record = mem.get(memory_id)
    assert isinstance(record, Episode)
    assert record.tier is Tier.SHORT_TERM and record.session_id == "s1" and record.source == "user"


def test_unimportant_content_stays_only_in_the_sensory_buffer(mem: Memory) -> None:
    assert mem.observe("ok thanks", user_id="ana") is None
    assert mem.stats()["by_type"]["episodic"] == 0
    entries = mem.sensory.recent()
    assert [e.content for e in entries] == ["ok thanks"]
    assert entries[0].memory_id is None


def test_explicit_importance_overrides_the_scorer(mem: Memory) -> None:
    assert mem.observe("ok", importance=0.9) is not None
    assert mem.observe("Ana's passport number is 12345", importance=0.0) is None


def test_sensory_buffer_expires_by_ttl_and_capacity(folder, clock) -> None:
    from ucma_core import MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    cfg = MemoryConfig(sensory_capacity=3, sensory_ttl_seconds=60)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=cfg) as m:
        for i in range(5):
            m.observe(f"note number {i} about the Berlin trip", importance=0.9)
        assert [e.content for e in m.sensory.recent()] == [
            f"note number {i} about the Berlin trip" for i in (2, 3, 4)
        ]
        clock.advance(seconds=61)
        assert m.sensory.recent() == []
        assert m.stats()["by_type"]["episodic"] == 5


def test_explicit_timestamp_is_kept_for_imported_history(mem: Memory) -> None:
    when = datetime(2024, 5, 3, 12, 0, tzinfo=timezone.utc)
    memory_id = mem.observe("We moved to Lisbon in May", timestamp=when, importance=0.8)
    assert memory_id is not None
    record = mem.get(memory_id)
    assert record is not None and record.timestamp == when.timestamp()
    other = mem.observe("Trip to Porto", timestamp=1_700_000_000, importance=0.8)
    assert mem.get(other).timestamp == 1_700_000_000.0  # type: ignore[union-attr]


def test_session_chain_is_in_time_order_even_when_imported_out_of_order(keep_all: Memory) -> None:
    a = keep_all.observe("first", session_id="s", timestamp=100.0)
    c = keep_all.observe("third", session_id="s", timestamp=300.0)
    b = keep_all.observe("second", session_id="s", timestamp=200.0)
    keep_all.observe("elsewhere", session_id="other", timestamp=150.0)
    assert [e.id for e in keep_all.history(session_id="s")] == [a, b, c]
    follows = {(u, v) for u, v, _, _ in keep_all.edges(b, edge_type=EdgeType.FOLLOWED_BY)}
    assert follows == {(a, b), (b, c)}
    assert keep_all.edges(a, edge_type=EdgeType.FOLLOWED_BY, direction="out") == [(a, b, "followed_by", 1.0)]
    keep_all.forget(b)
    assert keep_all.edges(a, edge_type=EdgeType.FOLLOWED_BY, direction="out") == [(a, c, "followed_by", 1.0)]
    assert [e.id for e in keep_all.history(session_id="s")] == [a, c]


def test_time_range_queries_use_the_index_and_filter_remember(keep_all: Memory) -> None:
    ids = [
        keep_all.observe(f"daily standup notes {d}", timestamp=1_000_000 + d * 86_400.0) for d in range(10)
    ]
    window = (1_000_000 + 2 * 86_400, 1_000_000 + 4 * 86_400)
    assert [r.id for r in keep_all.list_memories(time_range=window, newest_first=False)] == ids[2:5]
    hits = keep_all.remember(
        "standup notes", k=10, time_range=(1_000_000 + 2 * 86_400, 1_000_000 + 4 * 86_400)
    )
    assert {h.id for h in hits} == set(ids[2:5])


def test_new_session_changes_the_default_session(mem: Memory) -> None:
    first = mem.session_id
    a = mem.observe("Ana booked flights to Tokyo for March", importance=0.9)
    second = mem.new_session()
    b = mem.observe("Ana asked about hotels in Kyoto", importance=0.9)
    assert first != second
    assert mem.get(a).session_id == first  # type: ignore[union-attr]
    assert mem.get(b).session_id == second  # type: ignore[union-attr]
    assert [h.id for h in mem.remember("Tokyo Kyoto trip", session_id=second)] == [b]


def test_observe_many_stores_a_batch_and_applies_defaults(mem: Memory) -> None:
    ids = mem.observe_many(
        [
            "Ana's sister Marta lives in Porto",
            {"content": "ok", "source": "assistant"},
            {"content": "Ana's dog is called Bolt", "metadata": {"turn": 3}},
        ],
        user_id="ana",
    )
    assert ids[0] is not None and ids[1] is None and ids[2] is not None
    assert mem.get(ids[2]).metadata == {"turn": 3}  # type: ignore[union-attr]
    assert all(mem.get(i).user_id == "ana" for i in ids if i)  # type: ignore[union-attr]


def test_tags_and_participants_filter(keep_all: Memory) -> None:
    a = keep_all.observe("release planning with Carla", tags=["work"], participants=["Carla", "Ana"])
    keep_all.observe("release of the new album", tags=["music"])
    assert [h.id for h in keep_all.remember("release", tags=["work"])] == [a]
    assert keep_all.get(a).participants == ("Carla", "Ana")  # type: ignore[union-attr]
