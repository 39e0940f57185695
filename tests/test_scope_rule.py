"""One scope rule on every read path: over random scopes, each read returns exactly the
memories the rule admits (no leak, no disagreement between paths)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma_core import ANY, Memory, MemoryConfig, Scope
from ucma_core.embedders import HashingEmbedder

USERS = ("ana", "ben", None)
AGENTS = ("bot", "helper", None)
SESSIONS = ("s1", "s2")


def _owner(user: str | None, agent: str | None, session: str) -> dict[str, Any]:
    return {"user_id": user, "agent_id": agent, "session_id": session}


def fill_world(mem: Memory) -> dict[str, dict[str, Any]]:
    """Store every kind of record in every (user, agent, session) of ``mem``; returns
    ``{id: owner}`` (also used by tests/postgres/test_shared_scope_rule.py)."""
    owners: dict[str, dict[str, Any]] = {}
    for user, agent, session in itertools.product(USERS, AGENTS, SESSIONS):
        who = _owner(user, agent, session)
        tag = f"{user}-{agent}-{session}"
        episode = mem.observe(f"The harbour trip with Marta {tag}", **who, keep=True)
        assert episode is not None
        owners[episode] = who
        fact = mem.assert_fact("Marta", "visited", f"the harbour {tag}", **who, source_ids=[episode])
        owners[fact.id] = who
        procedure = mem.add_procedure(
            f"pack for the harbour {tag}", ["check tides", "pack"], trigger_tags=["harbour"], **who
        )
        owners[procedure.id] = who
        lesson = mem.learn(f"Harbour trips need tide tables {tag}", applicability=["harbour"], **who)
        owners[lesson.id] = who
        intention = mem.intend(f"Ask about the harbour photos {tag}", ["photos"], **who)
        owners[intention.id] = who
    return owners


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, dict[str, Any]]]]:
    """A memory with every kind of record in every (user, agent, session); returns it and
    ``{id: owner}``."""
    mem = Memory(
        tmp_path_factory.mktemp("scopes"),
        embedder=HashingEmbedder(),
        config=MemoryConfig(importance_threshold=0.0),
        clock=lambda: 1_750_000_000.0,
    )
    owners = fill_world(mem)
    yield mem, owners
    mem.close()


scopes = st.builds(
    Scope,
    user_id=st.sampled_from((*USERS, ANY)),
    agent_id=st.sampled_from((*AGENTS, ANY)),
    session_id=st.sampled_from((*SESSIONS, None, ANY)),
)


def _expected(owners: dict[str, dict[str, Any]], scope: Scope, ids: set[str] | None = None) -> set[str]:
    return {i for i, who in owners.items() if scope.admits(who) and (ids is None or i in ids)}


def _kw(scope: Scope) -> dict[str, Any]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_id, "session_id": scope.session_id}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=scopes)
def test_every_read_path_follows_the_scope_rule(
    world: tuple[Memory, dict[str, dict[str, Any]]], scope: Scope
) -> None:
    check_scope_rule(*world, scope)


def check_scope_rule(mem: Memory, owners: dict[str, dict[str, Any]], scope: Scope) -> None:
    """Every read path of ``mem`` returns exactly what ``scope`` admits of ``owners``."""
    kw = _kw(scope)
    everything = _expected(owners, scope)

    listed = {r.id for r in mem.list_memories(**kw, limit=10_000)}
    assert listed == everything

    recalled = {h.id for h in mem.remember("harbour trip Marta tide photos", k=1000, **kw)}
    assert recalled <= everything and recalled  # some of each scope's memories are found

    facts = {f.id for f in mem.facts_about("Marta", **kw)}
    assert facts == {
        i for i in everything if i in {f for f in owners if mem.get(f).memory_type.value == "semantic"}
    }  # type: ignore[union-attr]
    related = mem.related_entities("Marta", **kw)
    assert set(related) == {mem.get(f).object for f in facts}  # type: ignore[union-attr]

    if scope.session_id is None or scope.session_id is ANY:
        procedures = {
            p.id for p in mem.find_procedures(["harbour"], user_id=scope.user_id, agent_id=scope.agent_id)
        }
        session_free = Scope(scope.user_id, scope.agent_id, None)
        assert procedures == {
            i for i in _expected(owners, session_free) if mem.get(i).memory_type.value == "procedural"
        }  # type: ignore[union-attr]

    intentions = {i.id for i in mem.intentions(**kw)}
    assert intentions == {i for i in everything if mem.get(i).memory_type.value == "prospective"}  # type: ignore[union-attr]

    lessons = {r.id for r in mem.list_memories(**kw, memory_types=["learning"], limit=10_000)}
    assert lessons == {i for i in everything if mem.get(i).memory_type.value == "learning"}  # type: ignore[union-attr]

    if isinstance(scope.session_id, str) and not isinstance(scope.user_id, type(ANY)):
        history = {
            e.id
            for e in mem.history(session_id=scope.session_id, user_id=scope.user_id, agent_id=scope.agent_id)
        }
        assert history == {i for i in everything if mem.get(i).memory_type.value == "episodic"}  # type: ignore[union-attr]

    for memory_id in sorted(everything)[:3]:
        for neighbour, _, _ in mem.neighbours(memory_id, **kw):
            assert scope.admits(owners.get(neighbour, mem.get(neighbour).__dict__))  # type: ignore[union-attr]

    scopes_seen = mem.list_scopes(user_id=scope.user_id, agent_id=scope.agent_id)
    assert all(Scope(scope.user_id, scope.agent_id).admits_key(*s) for s in scopes_seen)


def test_consolidation_output_stays_in_its_scope(tmp_path: Path) -> None:
    with Memory(
        tmp_path / "m", embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0)
    ) as mem:
        check_consolidation_scope(mem)


def check_consolidation_scope(mem: Memory) -> None:
    """Consolidating two users' episodes in ``mem`` gives each user only their own memories."""
    for user in ("ana", "ben"):
        for n in range(4):
            mem.observe(
                f"I live in {'Lisbon' if user == 'ana' else 'Lyon'} and I like sailing {n}",
                user_id=user,
                session_id="s",
                timestamp=1_000.0 + n,
                keep=True,
            )
    mem.consolidate(now=1_000_000.0)
    for user in ("ana", "ben"):
        for record in mem.list_memories(user_id=user, limit=1000):
            assert record.user_id == user
        for hit in mem.remember("where do I live?", user_id=user, k=50):
            assert hit.record.user_id == user
