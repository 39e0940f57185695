"""The graph's typed node records behave like the attribute dicts they replace.

A record must read, write, undo and persist exactly as a plain ``dict`` of the same fields
would: the model in these tests is a dict, and every step compares the two.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.graph import MemoryGraph
from ucma_core.storage.journal import Journal
from ucma_core.storage.nodes import EntityNode, EpisodeNode, FactNode, NodeRecord, make_node

EPISODE = {
    "kind": "memory",
    "memory_type": "episodic",
    "user_id": "ana",
    "agent_id": None,
    "session_id": "s1",
    "timestamp": 100.0,
    "importance": 0.5,
    "source": "user",
    "stability": 1.0,
    "last_access": 100.0,
    "access_count": 0,
    "source_ids": [],
    "tier": "short_term",
    "summary": None,
    "consolidated_into": None,
    "participants": ["Ana"],
}

NAMES = st.sampled_from(
    [
        "importance",
        "stability",
        "access_count",
        "retrieved_at",
        "retrieval_stability",
        "tier",
        "summary",
        "pinned",
        "about",
        "revised_by",
        "colour",
    ]
)
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(0, 10),
    st.text(max_size=5),
    st.lists(st.text(max_size=3)),
)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _as_dict(record: NodeRecord) -> dict[str, Any]:
    return {k: _plain(v) for k, v in record.items()}


def test_record_class_follows_kind_and_type() -> None:
    assert isinstance(make_node(EPISODE), EpisodeNode)
    assert isinstance(make_node({**EPISODE, "memory_type": "semantic"}), FactNode)
    assert isinstance(make_node({"kind": "entity", "name": "Ana"}), EntityNode)
    odd = make_node({"kind": "something-new", "x": 1})
    assert odd["kind"] == "something-new" and odd["x"] == 1 and dict(odd) == {"kind": "something-new", "x": 1}


def test_record_reads_like_its_dict() -> None:
    record = make_node(EPISODE)
    assert _as_dict(record) == EPISODE
    assert record.timestamp == 100.0 and record.user_id == "ana" and record.participants == ("Ana",)
    assert record.get("pinned") is None and "pinned" not in record and "summary" in record
    with pytest.raises(KeyError):
        record["pinned"]
    assert record == EPISODE and record != {**EPISODE, "tier": "long_term"}
    assert record.to_dict() == EPISODE


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(NAMES, VALUES, max_size=3), max_size=6))
def test_updates_and_restores_match_a_dict(steps: list[dict[str, Any]]) -> None:
    record, model = make_node(EPISODE), dict(EPISODE)
    missing = object()
    undo: list[dict[str, Any]] = []
    for change in steps:
        undo.append({k: record.get(k, missing) for k in change})
        record.update(change)
        model.update(change)
        assert _as_dict(record) == {k: _plain(v) for k, v in model.items()}
    for previous in reversed(undo):
        record.restore(previous, missing)
        for k, v in previous.items():
            if v is missing:
                model.pop(k, None)
            else:
                model[k] = v
        assert set(record) == set(model)
    assert _as_dict(record) == EPISODE


def test_an_aborted_transaction_puts_fields_and_edges_back() -> None:
    graph = MemoryGraph()
    graph.put_node("a", dict(EPISODE))
    graph.put_node("b", {**EPISODE, "session_id": "s2"})
    graph.add_edge("a", "b", "followed_by", 0.5)
    before_a, before_edges = dict(graph.node("a") or {}), graph.edges_of("a")
    with pytest.raises(RuntimeError), graph.batch():
        graph.put_node("a", {"importance": 0.9, "pinned": True, "memory_type": "semantic", "subject": "x"})
        graph.add_edge("a", "b", "related_to", 1.0)
        graph.remove_node("b")
        raise RuntimeError("crash in the middle")
    assert dict(graph.node("a") or {}) == before_a
    assert isinstance(graph.node("a"), EpisodeNode)
    assert sorted(graph.edges_of("a")) == sorted(before_edges)
    assert graph.node("b") == {**EPISODE, "session_id": "s2"}
    graph.remove_node("b")  # one map holds the nodes and their records: both go
    assert graph.node("b") is None and "b" not in graph and len(graph) == 1
    assert [node_id for node_id, _ in graph.nodes()] == ["a"] and graph.edges_of("a") == []


def test_retrieval_marks_make_no_extra_dictionary(tmp_path: Path) -> None:
    # every retrieval marks the memories it returns: a dictionary each would cost ~250 bytes
    journal = Journal(tmp_path)
    journal.load(lambda entries, ops: None, lambda: None)
    journal.open_for_append()
    graph = MemoryGraph(journal)
    graph.put_node("a", dict(EPISODE))
    graph.put_node("a", {"access_count": 1, "retrieved_at": 150.0, "retrieval_stability": 0.25})
    record = graph.node("a")
    assert record is not None and record.extra is None
    assert (record["retrieved_at"], record.get("retrieval_stability")) == (150.0, 0.25)
    journal.close()
    again = MemoryGraph()
    Journal(tmp_path).load(lambda entries, ops: again.load(entries, ops), again.clear)
    assert again.node("a") == {
        **EPISODE,
        "access_count": 1,
        "retrieved_at": 150.0,
        "retrieval_stability": 0.25,
    }


def test_ident_gives_the_graphs_own_id_string() -> None:
    graph = MemoryGraph()
    graph.put_node("node-1", dict(EPISODE))
    (own,) = [node_id for node_id, _ in graph.nodes()]
    asked = "".join(["node-", "1"])  # equal, another object (as read from a store)
    assert asked is not own and graph.ident(asked) is own
    other = "".join(["node-", "2"])
    assert graph.ident(other) is other  # not a node: kept as given


def test_snapshot_round_trip_keeps_every_field(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.load(lambda entries, ops: None, lambda: None)
    journal.open_for_append()
    graph = MemoryGraph(journal)
    graph.put_node("a", dict(EPISODE))
    graph.put_node("b", {**EPISODE, "pinned": True, "about": ["user"]})
    graph.put_node("e", {"kind": "entity", "name": "Ana", "user_id": "ana", "agent_id": None})
    graph.add_edge("a", "e", "mentions", 0.7)
    graph.add_edge("a", "e", "related_to", 0.9)
    graph.add_edge("b", "a", "followed_by", 1.0)
    graph.compact()
    graph.put_node("a", {"access_count": 3})
    journal.close()

    again = MemoryGraph()
    Journal(tmp_path).load(lambda entries, ops: again.load(entries, ops), again.clear)
    for node_id, record in graph.nodes():
        assert again.node(node_id) == record
    assert sorted(again.edges_of("e")) == sorted(graph.edges_of("e"))
    out = {t: w for _, _, t, w in again.edges_of("a", direction="out")}
    assert out == {"mentions": 0.7, "related_to": 0.9}


def test_memory_marks_survive_reopen(tmp_path: Path) -> None:
    now = [1_750_000_000.0]
    with Memory(tmp_path, embedder=HashingEmbedder(), clock=lambda: now[0]) as mem:
        kept = mem.observe("The spare key is under the blue pot", user_id="ana", importance=0.3)
        faded = mem.observe("The bus was a little late today", user_id="ana", importance=0.3)
        assert kept is not None and faded is not None
        assert mem.pin(kept)
    now[0] += 365 * 86_400
    with Memory(tmp_path, embedder=HashingEmbedder(), clock=lambda: now[0]) as mem:
        report = mem.prune()
        assert report.protected == {"pinned": 1}
        assert mem.get(kept) is not None and mem.get(faded) is None
        assert mem.verify().ok


EdgeStep = tuple[str, tuple[str, str], str, float]
EDGE_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "remove", "abort"]),
        st.sampled_from([("a", "b"), ("b", "c"), ("c", "a"), ("a", "c")]),
        st.sampled_from(["followed_by", "related_to", "mentions"]),
        st.sampled_from([1.0, 0.5, 0.9]),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(EDGE_STEPS)
def test_edges_with_equal_weights_stay_independent(steps: list[EdgeStep]) -> None:
    """Edges of one type and weight share their data object: changing, undoing or replaying
    one edge never changes another. The model is a dict of each edge's types and weights."""
    graph = MemoryGraph()
    for node_id in "abc":
        graph.put_node(node_id, dict(EPISODE))
    model: dict[tuple[str, str], dict[str, float]] = {}

    def edges(g: MemoryGraph) -> dict[tuple[str, str], dict[str, float]]:
        out: dict[tuple[str, str], dict[str, float]] = {}
        for node_id in "abc":
            for u, v, t, w in g.edges_of(node_id, direction="out"):
                out.setdefault((u, v), {})[t] = w
        return out

    for op, (u, v), kind, weight in steps:
        if op == "add":
            graph.add_edge(u, v, kind, weight)
            model.setdefault((u, v), {})[kind] = weight
        elif op == "remove":
            graph.remove_edge(u, v, kind)
            model.get((u, v), {}).pop(kind, None)
            if not model.get((u, v), True):
                del model[(u, v)]
        else:
            with pytest.raises(RuntimeError), graph.batch():
                graph.add_edge(u, v, kind, weight)
                graph.add_edge(v, u, kind, weight)
                graph.remove_edge(u, v, "followed_by")
                raise RuntimeError("undo")
        assert edges(graph) == model

    again = MemoryGraph()  # the same graph from its snapshot entries
    again.load(list(graph.snapshot_entries()), [])
    assert edges(again) == model
