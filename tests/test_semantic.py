"""Facts: deterministic ids, reinforcement, provenance, entity index, traversal, supersession."""

from __future__ import annotations

from ucma_core import Fact, Memory, MemoryType
from ucma_core.storage.graph import EdgeType


def test_reasserting_reinforces_instead_of_duplicating(mem: Memory) -> None:
    e1 = mem.observe("Ana works at Initech", user_id="ana", importance=0.8)
    e2 = mem.observe("Ana said again she works at Initech", user_id="ana", importance=0.8)
    f1 = mem.assert_fact("Ana", "works at", "Initech", confidence=0.6, user_id="ana", source_ids=[e1])
    f2 = mem.assert_fact(" ana ", "Works  At", "initech", confidence=0.6, user_id="ana", source_ids=[e2])
    assert f1.id == f2.id
    assert f2.confidence > f1.confidence
    assert set(f2.source_ids) == {e1, e2}
    assert f2.access_count == 1
    assert mem.stats()["by_type"]["semantic"] == 1
    derived = {v for _, v, _, _ in mem.edges(f1.id, edge_type=EdgeType.DERIVED_FROM, direction="out")}
    assert derived == {e1, e2}


def test_same_triple_in_two_user_scopes_are_two_facts(mem: Memory) -> None:
    a = mem.assert_fact("sky", "is", "blue", user_id="ana")
    b = mem.assert_fact("sky", "is", "blue", user_id="bob")
    assert a.id != b.id
    mem.forget_user("ana")
    assert mem.get(b.id) is not None


def test_entity_index_finds_facts_from_either_end(mem: Memory) -> None:
    works = mem.assert_fact("Ana", "works at", "Initech", user_id="ana")
    boss = mem.assert_fact("Bill", "manages", "Ana", user_id="ana")
    mem.assert_fact("Initech", "is in", "Austin", user_id="ana")
    about_ana = {f.id for f in mem.facts_about("ana", user_id="ana")}
    assert about_ana == {works.id, boss.id}
    assert [f.id for f in mem.facts_about("Ana", user_id="ana", role="subject")] == [works.id]
    assert [f.id for f in mem.facts_about("Ana", user_id="ana", role="object")] == [boss.id]
    assert mem.facts_about("Ana", user_id="bob") == []


def test_graph_traversal_walks_entity_fact_entity(mem: Memory) -> None:
    mem.assert_fact("Ana", "sister of", "Marta", user_id="ana")
    mem.assert_fact("Marta", "lives in", "Porto", user_id="ana")
    mem.assert_fact("Porto", "is in", "Portugal", user_id="ana")
    assert mem.related_entities("Ana", user_id="ana", hops=1) == {"Marta": 1}
    assert mem.related_entities("Ana", user_id="ana", hops=2) == {"Marta": 1, "Porto": 2}
    assert mem.related_entities("Portugal", user_id="ana", hops=3) == {"Porto": 1, "Marta": 2, "Ana": 3}


def test_exclusive_fact_supersedes_with_validity_times_and_keeps_history(mem: Memory, clock) -> None:
    old = mem.assert_fact("Ana", "lives in", "Berlin", user_id="ana", exclusive=True)
    clock.advance(days=30)
    new = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana", exclusive=True)
    stored_old = mem.get(old.id)
    assert isinstance(stored_old, Fact)
    assert stored_old.valid_to == clock.now and stored_old.superseded_by == new.id
    assert new.valid_to is None and new.valid_from == clock.now
    current = mem.facts_about("Ana", user_id="ana")
    assert [f.object for f in current] == ["Lisbon"]
    history = mem.facts_about("Ana", user_id="ana", include_superseded=True)
    assert {f.object for f in history} == {"Berlin", "Lisbon"}
    hits = mem.remember("where does Ana live", user_id="ana", memory_types=["semantic"])
    assert [h.record.object for h in hits] == ["Lisbon"]  # type: ignore[attr-defined]
    kinds = {k for _, v, k, _ in mem.edges(new.id, direction="out") if v == old.id}
    assert kinds == {"supersedes", "contradicts"}


def test_non_exclusive_facts_coexist(mem: Memory) -> None:
    mem.assert_fact("Ana", "likes", "jazz", user_id="ana")
    mem.assert_fact("Ana", "likes", "tea", user_id="ana")
    assert {f.object for f in mem.facts_about("Ana", user_id="ana")} == {"jazz", "tea"}


def test_forgetting_a_fact_drops_orphan_entities(mem: Memory) -> None:
    f = mem.assert_fact("Zed", "owns", "a boat", user_id="ana")
    assert mem.stats()["entities"] == 2
    assert mem.forget(f.id) is True
    assert mem.stats()["entities"] == 0
    assert mem.get(f.id) is None
    assert mem.forget(f.id) is False


def test_facts_come_back_from_remember_as_semantic(mem: Memory) -> None:
    mem.assert_fact("Ana", "is allergic to", "peanuts", user_id="ana", confidence=0.95)
    hits = mem.remember("what is Ana allergic to?", user_id="ana")
    assert hits[0].memory_type is MemoryType.SEMANTIC
    assert hits[0].content == "Ana is allergic to peanuts"
