"""Memory.upsert_many: upsert in bulk, for stored data (UCMAStore.batch writes through it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError


@pytest.fixture
def mem(tmp_path: Path):  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as m:
        yield m


def test_new_and_existing_keys_in_one_call(mem: Memory) -> None:
    (old,) = mem.upsert_many([{"key": "k1", "content": "Ana drinks green tea", "user_id": "ana"}])
    ids = mem.upsert_many(
        [
            {"key": "k1", "content": "Ana drinks black coffee", "user_id": "ana"},
            {"key": "k2", "content": "Ana lives in Lisbon", "user_id": "ana"},
            {"key": "k1", "content": "Bo has a dog", "user_id": "bo"},  # another scope: its own key
        ]
    )
    assert ids[0] == old
    assert len(set(ids)) == 3
    replaced = mem.get_by_key("k1", user_id="ana")
    assert replaced is not None and replaced.content == "Ana drinks black coffee"
    assert mem.remember("coffee", user_id="ana")[0].id == old  # re-embedded
    assert len(mem.list_memories(user_id="ana")) == 2


def test_a_repeated_key_the_later_item_wins(mem: Memory) -> None:
    ids = mem.upsert_many([{"key": "k", "content": "first"}, {"key": "k", "content": "second"}])
    assert ids[0] == ids[1]
    assert mem.get(ids[0]).content == "second"  # type: ignore[union-attr]
    assert len(mem.list_memories()) == 1


def test_stored_data_is_not_input(mem: Memory) -> None:
    """No sensory buffer entry and no intention fired, as for upsert (observe_many does both)."""
    intention = mem.intend("ask about the trip", trigger="Lisbon").id
    mem.upsert_many([{"key": f"k{n}", "content": f"Trip {n} to Lisbon"} for n in range(5)])
    assert len(mem.sensory) == 0
    assert [i.id for i in mem.intentions(status="pending")] == [intention]
    mem.observe_many(["We land in Lisbon on Monday"], keep=True)
    assert len(mem.sensory) == 1
    assert not mem.intentions(status="pending")


def test_one_bad_item_stores_nothing(mem: Memory) -> None:
    good = {"key": "k", "content": "fine"}
    for bad in (
        {"content": "no key"},
        {"key": "k2", "content": 5},
        {"key": "k3", "content": "x", "keep": False},
    ):
        with pytest.raises(InvalidInputError):
            mem.upsert_many([good, bad])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="list of dicts"):
        mem.upsert_many(good)
    assert mem.list_memories() == []


def test_a_view_binds_its_scope(mem: Memory) -> None:
    ana = mem.scope(user_id="ana", session_id="s1")
    (memory_id,) = ana.upsert_many([{"key": "k", "content": "Ana likes figs"}])
    stored = mem.get_by_key("k", user_id="ana")
    assert stored is not None and stored.id == memory_id and stored.session_id == "s1"
    with pytest.raises(InvalidInputError, match="bound"):
        ana.upsert_many([{"key": "k", "content": "x", "user_id": "bo"}])


async def test_async_partner(mem: Memory) -> None:
    ids = await mem.aupsert_many([{"key": "k", "content": "Ana likes figs"}])
    assert await mem.scope().aupsert_many([{"key": "k", "content": "Ana likes pears"}]) == ids
