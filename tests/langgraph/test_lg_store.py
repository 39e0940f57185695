"""UCMAStore beyond the shared contract: TTL on the memory's clock, namespaces as UCMA
scopes, persistence, index configuration and the memory's own dynamics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.store.base import TTLConfig

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError
from ucma_langchain.langgraph import NamespaceRule, NamespaceScope, UCMAStore
from ucma_langchain.langgraph.store import STORE_SESSION


class Clock:
    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ticking() -> Clock:
    return Clock()


@pytest.fixture
def clocked(tmp_path: Path, ticking: Clock) -> Iterator[Memory]:
    with Memory(tmp_path / "clocked", embedder=HashingEmbedder(), clock=ticking) as m:
        yield m


# ---------------------------------------------------------------------- TTL
def test_item_expires_after_its_ttl(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    store.put(("cache",), "short", {"v": 1}, ttl=1.0)
    store.put(("cache",), "forever", {"v": 2})
    ticking.now += 59
    assert store.get(("cache",), "short", refresh_ttl=False) is not None
    ticking.now += 2
    assert store.get(("cache",), "short") is None
    assert [i.key for i in store.search(("cache",))] == ["forever"]
    assert len(clocked.list_memories(tags=["lg-store"])) == 1


def test_reads_refresh_the_ttl_unless_told_not_to(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    store.put(("cache",), "k", {"v": 1}, ttl=1.0)
    for _ in range(3):  # read every 40 s: never expires
        ticking.now += 40
        assert store.get(("cache",), "k") is not None
    ticking.now += 40
    assert [i.key for i in store.search(("cache",), query="v")] == ["k"]  # search refreshes too
    ticking.now += 40
    assert store.get(("cache",), "k", refresh_ttl=False) is not None
    ticking.now += 40
    assert store.get(("cache",), "k") is None


def test_default_ttl_and_refresh_on_read_from_ttl_config(clocked: Memory, ticking: Clock) -> None:
    config: TTLConfig = {"default_ttl": 2.0, "refresh_on_read": False}
    store = UCMAStore(clocked, ttl=config)
    store.put(("s",), "a", {"v": 1})
    store.put(("s",), "b", {"v": 2}, ttl=None)
    ticking.now += 100
    assert store.get(("s",), "a") is not None  # not refreshed (refresh_on_read=False)
    ticking.now += 30
    assert store.get(("s",), "a") is None
    assert store.get(("s",), "b") is not None


def test_sweep_deletes_expired_items_and_counts_them(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    for n in range(3):
        store.put(("s", str(n)), "k", {"v": n}, ttl=0.5)
    store.put(("s", "keep"), "k", {"v": 9})
    ticking.now += 31
    assert store.sweep_ttl() == 3
    assert store.list_namespaces() == [("s", "keep")]


def test_expired_items_stay_expired_after_reopening(tmp_path: Path, ticking: Clock) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=ticking) as mem:
        UCMAStore(mem).put(("s",), "k", {"v": 1}, ttl=1.0)
    ticking.now += 120
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=ticking) as mem:
        store = UCMAStore(mem)
        assert store.search(("s",)) == []
        assert store.list_namespaces() == []


# ---------------------------------------------------------------------- namespaces as scopes
@pytest.mark.parametrize(
    ("namespace", "scope"),
    [
        (("memories", "ana"), ("ana", None)),
        (("users", "ana", "prefs"), ("ana", None)),
        (("org", "users", "bo", "notes"), ("bo", None)),
        (("agents", "planner", "users", "ana"), ("ana", "planner")),
        (("docs",), (None, None)),
        (("users",), (None, None)),
        (("docs", "shared", "x"), ("shared", None)),
    ],
)
def test_default_namespace_rule(namespace: tuple[str, ...], scope: tuple[str | None, str | None]) -> None:
    assert NamespaceRule()(namespace) == NamespaceScope(*scope)


def test_items_are_memories_of_the_namespace_user(lg_mem: Memory, store: UCMAStore) -> None:
    store.put(("memories", "ana"), "tea", {"text": "Ana drinks green tea"})
    store.put(("memories", "bo"), "jazz", {"text": "Bo plays jazz"})
    store.put(("docs",), "manual", {"text": "The office manual"})

    assert [r.record.user_id for r in lg_mem.remember("green tea", user_id="ana")] == ["ana"]
    assert all(r.record.user_id != "ana" for r in lg_mem.remember("green tea", user_id="bo"))
    assert [r.record.user_id for r in lg_mem.remember("office manual")] == [None]
    assert sorted(lg_mem.list_scopes(), key=str) == sorted(
        [("ana", None, STORE_SESSION), ("bo", None, STORE_SESSION), (None, None, STORE_SESSION)], key=str
    )
    assert lg_mem.forget_user("ana") == 1
    assert store.get(("memories", "ana"), "tea") is None
    assert [ns for ns in store.list_namespaces()] == [("docs",), ("memories", "bo")]


def test_custom_rules(lg_mem: Memory) -> None:
    by_position = UCMAStore(lg_mem, namespace_rule=NamespaceRule(user_index=0))
    by_position.put(("ana", "memories"), "k", {"text": "user first"})
    assert [r.record.user_id for r in lg_mem.remember("user first", user_id="ana")] == ["ana"]

    tenant = UCMAStore(lg_mem, namespace_rule=lambda ns: (ns[-1], "bot"))
    tenant.put(("tenant", "zoe"), "k", {"text": "callable rule"})
    [hit] = lg_mem.remember("callable rule", user_id="zoe")
    assert (hit.record.user_id, hit.record.agent_id) == ("zoe", "bot")
    assert tenant.get(("tenant", "zoe"), "k") is not None


# ---------------------------------------------------------------------- persistence and values
def test_items_survive_reopening_with_their_times(tmp_path: Path) -> None:
    value = {"z": 1, "a": [1, 2.5, None, True], "nested": {"y": "é", "b": {}}}
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as mem:
        store = UCMAStore(mem)
        store.put(("users", "ana"), "profile", value)
        before = store.get(("users", "ana"), "profile")
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as mem:
        store = UCMAStore(mem)
        after = store.get(("users", "ana"), "profile")
        assert after is not None and before is not None
        assert json.dumps(after.value) == json.dumps(value)  # same keys, same order
        assert (after.created_at, after.updated_at) == (before.created_at, before.updated_at)
        assert [i.key for i in store.search(("users",), query="profile é")] == ["profile"]


def test_update_keeps_created_at(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    store.put(("a",), "k", {"v": 1})
    first = store.get(("a",), "k")
    ticking.now += 3600
    store.put(("a",), "k", {"v": 2})
    second = store.get(("a",), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at
    assert (second.updated_at - first.updated_at).total_seconds() == pytest.approx(3600, abs=1)
    assert len(clocked.list_memories()) == 1


def test_a_value_larger_than_a_memory_comes_back_whole(tmp_path: Path) -> None:
    config = MemoryConfig(max_content_chars=200)
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem:
        store = UCMAStore(mem)
        value = {"text": "word " * 500, "n": 1}
        store.put(("big",), "k", value)
        item = store.get(("big",), "k")
        assert item is not None and item.value == value
        [record] = mem.list_memories()
        assert len(record.content) == 200


def test_index_fields_choose_the_embedded_text(lg_mem: Memory) -> None:
    store = UCMAStore(lg_mem, index={"fields": ["title", "sections[*].heading"]})
    store.put(
        ("d",), "k", {"title": "Tea guide", "sections": [{"heading": "Green"}, {"heading": "Black"}], "x": 9}
    )
    [record] = lg_mem.list_memories()
    assert record.content == "Tea guide\nGreen\nBlack"
    store.put(("d",), "k2", {"body": "only body"}, index=["body"])
    assert [i.key for i in store.search(("d",), query="only body", limit=1)] == ["k2"]


def test_index_config_is_checked(lg_mem: Memory) -> None:
    with pytest.raises(ConfigurationError, match="embedder"):
        UCMAStore(lg_mem, index={"embed": lambda texts: [[0.0] for _ in texts]})  # type: ignore[typeddict-item]
    with pytest.raises(ConfigurationError, match="dims"):
        UCMAStore(lg_mem, index={"dims": 3})
    assert UCMAStore(lg_mem, index={"dims": lg_mem.embedder.dimension}).index_fields == ["$"]


# ---------------------------------------------------------------------- the memory's dynamics
def test_forgetting_never_deletes_store_items(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    store.put(("memories", "ana"), "k", {"text": "rarely read"})
    ticking.now += 5 * 365 * 86_400
    report = clocked.prune()
    assert report.forgotten == ()
    assert store.get(("memories", "ana"), "k") is not None


def test_lower_importance_lets_unused_items_fade(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked, importance=0.3)
    store.put(("memories", "ana"), "k", {"text": "rarely read"})
    ticking.now += 5 * 365 * 86_400
    assert len(clocked.prune().forgotten) == 1
    assert store.get(("memories", "ana"), "k") is None


def test_consolidation_keeps_every_store_item(clocked: Memory, ticking: Clock) -> None:
    store = UCMAStore(clocked)
    store.put(("memories", "ana"), "a", {"text": "Ana likes tea"})
    store.put(("memories", "ana", "copy"), "b", {"text": "Ana likes tea"})
    ticking.now += 30 * 86_400
    clocked.consolidate()
    assert {i.key for i in store.search(("memories",))} == {"a", "b"}


def test_store_reads_cover_every_user(lg_mem: Memory, store: UCMAStore) -> None:
    for user in ("ana", "bo", "carla"):
        store.put(("memories", user), "k", {"text": f"{user} likes tea"})
    assert len(store.search(("memories",), query="tea")) == 3
    assert len(lg_mem.remember("tea", user_id=ANY, k=10)) == 3
