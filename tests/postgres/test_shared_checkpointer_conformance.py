"""langgraph-checkpoint-conformance, run as-is on UCMACheckpointer over a memory in
PostgreSQL (LangGraph's PostgresSaver underneath, UCMA's outbox beside it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer


@pytest.mark.slow
async def test_conformance_on_postgresql(servers: Servers, capsys: pytest.CaptureFixture[str]) -> None:
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        mem = Memory(servers.url(), embedder=HashingEmbedder(), config=servers.config())
        saver = UCMACheckpointer(mem, user_id=None)  # the suite runs without users
        try:
            yield saver
        finally:
            saver.close()
            mem.close()

    registered = checkpointer_test(name="UCMACheckpointer on PostgreSQL")(factory)
    report = await validate(registered, progress=ProgressCallbacks.verbose())
    with capsys.disabled():
        report.print_report()
    assert report.passed_all_base(), report.to_dict()
    assert report.passed_all(), report.to_dict()
    assert {name for name, r in report.results.items() if r.detected} == {c.value for c in ALL_CAPABILITIES}
    assert report.conformance_level() == "FULL"
