"""``Memory.snapshot()`` (a consistent read of everything) and ``Memory.restore()`` (records
under their own ids, with vectors, marks, entities and edges; all or nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ClosedMemoryError, InvalidInputError, ProviderError
from ucma_core.portable.lines import record_to_json
from ucma_core.transfer import RestoreReport


def build(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    for day in range(3):
        mem.observe_many(
            [f"Day {day}: I went hiking in the Alps with Ben.", f"Day {day}: I live in Lisbon."],
            user_id="ana",
            session_id=f"s{day}",
        )
        clock.advance(days=1)
    mem.observe("Remember the blue pot", user_id="ana", key="msg-1", keep=True)
    mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
    clock.advance(days=10)
    mem.consolidate()
    mem.remember("hiking", user_id="ana")  # some retention state to carry over


def dump(mem: Memory) -> dict[str, Any]:
    with mem.snapshot() as snap:
        ids = snap.memory_ids()
        records = snap.records(ids)
        entities = {e: snap.entity(e) for e in snap.entity_ids()}
        return {
            "records": records,
            "vectors": {i: list(v) for i, v in snap.vectors(ids).items()},
            "marks": {r.id: m for r in records if (m := snap.marks(r))},
            "entities": entities,
            "edges": snap.edges(),
        }


@pytest.fixture
def source(tmp_path: Path, clock) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(tmp_path / "source", embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        build(mem, clock)
        return dump(mem)


def test_restore_rebuilds_the_same_memory(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    assert source["marks"] and source["entities"] and source["edges"]
    with Memory(tmp_path / "copy", embedder=HashingEmbedder(), clock=clock) as copy:
        report = copy.restore(**source)
        assert report == RestoreReport(
            memories=len(source["records"]),
            entities=len(source["entities"]),
            edges=len(source["edges"]),
        )
        again = dump(copy)
        assert [record_to_json(r) for r in again["records"]] == [record_to_json(r) for r in source["records"]]
        assert again["marks"] == source["marks"] and again["entities"] == source["entities"]
        assert set(again["edges"]) == set(source["edges"])
        assert again["vectors"].keys() == source["vectors"].keys()
        assert copy.verify().ok
        # restoring again stores nothing new
        twice = copy.restore(source["records"], vectors=source["vectors"])
        assert (twice.memories, twice.skipped) == (0, len(source["records"]))
        assert len(dump(copy)["records"]) == len(source["records"])


def test_records_without_a_vector_are_embedded(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "other", embedder=HashingEmbedder(64), clock=clock) as other:
        report = other.restore(source["records"])
        assert report.memories == report.embedded == len(source["records"])
        hits = other.remember("where does Ana live?", user_id="ana", k=3)
        assert any("Lisbon" in h.content for h in hits)


def test_a_bad_batch_stores_nothing(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    records = source["records"]
    first = records[0].id
    bad_inputs: list[dict[str, Any]] = [
        {"vectors": {first: [0.0] * 3}},  # wrong dimension
        {"vectors": {first: [float("nan")] * 256}},
        {"vectors": {"not-a-record": [0.0] * 256}},
        {"marks": {first: {"content": "hijacked"}}},  # a mark may not set the record's own fields
        {"marks": {first: {"kind": "entity"}}},
        {"entities": {"ana": {"name": "Ana"}}},  # entity ids start with entity:
        {"edges": [(first, first, "related_to", 1.0)]},
        {"edges": [(first, records[1].id, "related_to", 1.5)]},
        {"edges": [(first, records[1].id, "no_such_type", 1.0)]},
    ]
    with Memory(tmp_path / "copy", embedder=HashingEmbedder(), clock=clock) as copy:
        for bad in bad_inputs:
            with pytest.raises(InvalidInputError):
                copy.restore(records, **bad)
        with pytest.raises(InvalidInputError, match="twice"):
            copy.restore([records[0], records[0]])
        with pytest.raises(InvalidInputError):
            copy.restore("not records")  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            copy.restore([{"id": "x"}])  # type: ignore[list-item]
        assert copy.stats()["memories"] == 0 and copy.stats()["graph_nodes"] == 0


class FailingEmbedder:
    name = "hashing-256"
    dimension = 256

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise ProviderError("the embedding service went away")


def test_an_embedding_failure_stores_nothing(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "copy", embedder=FailingEmbedder(), clock=clock) as copy:
        some = dict(list(source["vectors"].items())[:2])  # the others need embedding
        with pytest.raises(ProviderError):
            copy.restore(source["records"], vectors=some, edges=source["edges"])
        assert copy.stats()["memories"] == 0 and copy.verify().ok


def test_keys_already_taken_are_not_restored(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    keyed = [r for r in source["records"] if r.key == "msg-1"]
    assert len(keyed) == 1
    with Memory(tmp_path / "copy", embedder=HashingEmbedder(), clock=clock) as copy:
        mine = copy.observe("My own message", user_id="ana", key="msg-1", keep=True)
        report = copy.restore(keyed)
        assert (report.memories, report.key_conflicts) == (0, 1)
        assert copy.get_by_key("msg-1", user_id="ana").id == mine  # type: ignore[union-attr]


def test_a_snapshot_is_read_inside_its_block_only(mem: Memory) -> None:
    mem.observe("The boiler was serviced on Monday.", keep=True)
    with mem.snapshot() as snap:
        assert len(snap.memory_ids()) == 1
    with pytest.raises(ClosedMemoryError):
        snap.memory_ids()
    mem.close()
    with pytest.raises(ClosedMemoryError), mem.snapshot():
        pass


async def test_async_restore_matches(source: dict[str, Any], tmp_path: Path, clock) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "sync", embedder=HashingEmbedder(), clock=clock) as a:
        expected = a.restore(**source)
    async with Memory(tmp_path / "async", embedder=HashingEmbedder(), clock=clock) as b:
        assert await b.arestore(**source) == expected
