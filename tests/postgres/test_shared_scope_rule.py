"""The scope-rule property suite (tests/test_scope_rule.py) on a memory in PostgreSQL,
with the world written by one memory object and read by another that was open
before the writes (so it learns them from the shared journal)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.postgres.conftest import Servers
from tests.test_scope_rule import AGENTS, SESSIONS, USERS, _owner, scopes
from tests.test_scope_rule import test_every_read_path_follows_the_scope_rule as folder_test
from ucma_core import ChromaConfig, Memory, MemoryConfig, Scope
from ucma_core.embedders import HashingEmbedder

pytestmark = pytest.mark.slow


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=scopes)
def test_scope_rule_in_postgres(world: tuple[Memory, dict[str, dict[str, Any]]], scope: Scope) -> None:
    """The folder suite's checks, fewer examples (every read goes to two servers)."""
    folder_test.hypothesis.inner_test(world, scope)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def world(servers: Servers) -> Iterator[tuple[Memory, dict[str, dict[str, Any]]]]:
    url = servers.url()
    config = MemoryConfig(
        importance_threshold=0.0, chroma=ChromaConfig(host="127.0.0.1", port=servers.chroma_port)
    )
    owners: dict[str, dict[str, Any]] = {}
    # the reader is open before the writer writes: it reads the world through the change feed
    mem = Memory(url, embedder=HashingEmbedder(), config=config, clock=lambda: 1_750_000_000.0)
    with Memory(url, embedder=HashingEmbedder(), config=config, clock=lambda: 1_750_000_000.0) as writer:
        for user, agent, session in itertools.product(USERS, AGENTS, SESSIONS):
            who = _owner(user, agent, session)
            tag = f"{user}-{agent}-{session}"
            episode = writer.observe(f"The harbour trip with Marta {tag}", **who, keep=True)
            assert episode is not None
            owners[episode] = who
            fact = writer.assert_fact("Marta", "visited", f"the harbour {tag}", **who, source_ids=[episode])
            owners[fact.id] = who
            procedure = writer.add_procedure(
                f"pack for the harbour {tag}", ["check tides", "pack"], trigger_tags=["harbour"], **who
            )
            owners[procedure.id] = who
            lesson = writer.learn(f"Harbour trips need tide tables {tag}", applicability=["harbour"], **who)
            owners[lesson.id] = who
            intention = writer.intend(f"Ask about the harbour photos {tag}", ["photos"], **who)
            owners[intention.id] = who
    yield mem, owners
    mem.close()
