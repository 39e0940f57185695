"""Scope, as a property: tools and retriever bound to one user never see another user's memories."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_langchain import UCMARetriever, create_memory_tools

USERS = ["ana", "ben", "cy", None]
TOPICS = ["Lisbon", "trams", "cats", "guitar", "Porto", "nurse", "coffee", "the sea"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str | None, set[str]]]]:
    """Every user says the same things, so a leak would be a likely hit."""
    mem = Memory(
        tmp_path_factory.mktemp("scope") / "memory",
        embedder=HashingEmbedder(),
        config=MemoryConfig(importance_threshold=0.0),
    )
    owned: dict[str | None, set[str]] = {}
    for user in USERS:
        name = user or "someone"
        ids = mem.observe_many([f"{name} talked about {topic} today." for topic in TOPICS], user_id=user)
        facts = [mem.assert_fact(name, "likes", topic, user_id=user).id for topic in TOPICS[:3]]
        shared = [mem.assert_fact("Lisbon", "has", topic, user_id=user).id for topic in TOPICS[3:5]]
        owned[user] = {i for i in ids if i} | set(facts) | set(shared)
    yield mem, owned
    mem.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user=st.sampled_from(USERS),
    query=st.lists(
        st.sampled_from([*TOPICS, "ana", "ben", "cy", "someone", "likes"]), min_size=1, max_size=4
    ),
    k=st.integers(1, 40),
)
def test_retriever_stays_in_scope(
    world: tuple[Memory, dict[str | None, set[str]]], user: str | None, query: list[str], k: int
) -> None:
    mem, owned = world
    docs = UCMARetriever(memory=mem, user_id=user, k=k).invoke(" ".join(query))
    assert {d.id for d in docs} <= owned[user]
    assert {d.metadata["user_id"] for d in docs} <= {user}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user=st.sampled_from(USERS),
    query=st.lists(st.sampled_from([*TOPICS, "ana", "ben", "cy", "someone"]), min_size=1, max_size=4),
    entity=st.sampled_from(["ana", "ben", "cy", "someone", "Lisbon"]),
    victim=st.sampled_from(USERS),
)
def test_tools_stay_in_scope(
    world: tuple[Memory, dict[str | None, set[str]]],
    user: str | None,
    query: list[str],
    entity: str,
    victim: str | None,
) -> None:
    mem, owned = world
    recall, _save, forget, facts = create_memory_tools(mem, user_id=user, k=20)
    recalled = json.loads(recall.invoke({"query": " ".join(query)}))
    assert {hit["id"] for hit in recalled} <= owned[user]
    assert {fact["id"] for fact in json.loads(facts.invoke({"entity": entity}))} <= owned[user]
    if victim != user:
        target = sorted(owned[victim])[0]
        assert json.loads(forget.invoke({"memory_id": target})) == {"forgotten": False}
        assert mem.get(target) is not None


def test_the_world_has_something_to_leak(world: tuple[Memory, dict[str | None, set[str]]]) -> None:
    mem, _owned = world
    recall, _save, _forget, facts = create_memory_tools(mem, user_id="ana", k=20)
    assert len(json.loads(recall.invoke({"query": "Lisbon trams"}))) >= 5
    assert len(json.loads(facts.invoke({"entity": "Lisbon"}))) == 3  # ana likes Lisbon; Lisbon has 2
    assert len(UCMARetriever(memory=mem, user_id=None, k=50).invoke("Lisbon")) >= 5
