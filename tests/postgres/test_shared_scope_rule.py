"""The scope-rule property suite (tests/test_scope_rule.py) on a memory in PostgreSQL:
the same world and the same checks, with the world written by one memory object and
read by another that was open before the writes (so it learns them from the shared
journal)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.postgres.conftest import Servers
from tests.test_scope_rule import check_consolidation_scope, check_scope_rule, fill_world, scopes
from ucma_core import ChromaConfig, Memory, MemoryConfig, Scope
from ucma_core.embedders import HashingEmbedder

pytestmark = pytest.mark.slow


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scope=scopes)
def test_scope_rule_in_postgres(world: tuple[Memory, dict[str, dict[str, Any]]], scope: Scope) -> None:
    """The folder suite's checks, fewer examples (every read goes to two servers)."""
    check_scope_rule(*world, scope)


def test_consolidation_output_stays_in_its_scope_in_postgres(servers: Servers) -> None:
    with Memory(servers.url(), embedder=HashingEmbedder(), config=_config(servers)) as mem:
        check_consolidation_scope(mem)


def _config(servers: Servers) -> MemoryConfig:
    return MemoryConfig(
        importance_threshold=0.0, chroma=ChromaConfig(host="127.0.0.1", port=servers.chroma_port)
    )


@pytest.fixture(scope="module")
def world(servers: Servers) -> Iterator[tuple[Memory, dict[str, dict[str, Any]]]]:
    url = servers.url()
    # the reader is open before the writer writes: it reads the world through the change feed
    mem = Memory(url, embedder=HashingEmbedder(), config=_config(servers), clock=lambda: 1_750_000_000.0)
    with Memory(
        url, embedder=HashingEmbedder(), config=_config(servers), clock=lambda: 1_750_000_000.0
    ) as writer:
        owners = fill_world(writer)
    yield mem, owners
    mem.close()
