"""langgraph-checkpoint-conformance, run as-is on UCMACheckpointer: the async methods, and a
sync twin that drives the same checks through the sync methods."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.report import CapabilityReport, ProgressCallbacks
from langgraph.checkpoint.conformance.test_utils import generate_checkpoint, generate_metadata

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer


class SyncDriven(BaseCheckpointSaver[str]):
    """The conformance suite calls async methods; this saver answers each one by calling
    the *sync* method of a UCMACheckpointer, so the same checks cover the sync path."""

    def __init__(self, inner: UCMACheckpointer) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.inner.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.inner.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.inner.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.inner.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.inner.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.inner.prune(thread_ids, strategy=strategy)


def _factory(wrap: Callable[[UCMACheckpointer], BaseCheckpointSaver[Any]]) -> Callable[[], Any]:
    async def factory() -> AsyncIterator[BaseCheckpointSaver[Any]]:
        with tempfile.TemporaryDirectory() as folder:
            mem = Memory(folder, embedder=HashingEmbedder())
            saver = UCMACheckpointer(mem, user_id=None)  # the suite runs without users
            try:
                yield wrap(saver)
            finally:
                saver.close()
                mem.close()

    return factory


async def _run(name: str, wrap: Callable[[UCMACheckpointer], BaseCheckpointSaver[Any]]) -> CapabilityReport:
    registered = checkpointer_test(name=name)(_factory(wrap))
    return await validate(registered, progress=ProgressCallbacks.verbose())


def _assert_full(report: CapabilityReport) -> None:
    assert report.passed_all_base(), report.to_dict()
    assert report.passed_all(), report.to_dict()
    assert {name for name, r in report.results.items() if r.detected} == {c.value for c in ALL_CAPABILITIES}
    assert report.conformance_level() == "FULL"


async def test_conformance_async_methods(capsys: pytest.CaptureFixture[str]) -> None:
    report = await _run("UCMACheckpointer (async)", lambda saver: saver)
    with capsys.disabled():
        report.print_report()
    _assert_full(report)


async def test_conformance_sync_twin(capsys: pytest.CaptureFixture[str]) -> None:
    report = await _run("UCMACheckpointer (sync methods)", SyncDriven)
    with capsys.disabled():
        report.print_report()
    _assert_full(report)


async def test_sync_twin_really_calls_sync_methods(saver: UCMACheckpointer) -> None:
    called: list[str] = []
    names = (
        "get_tuple",
        "list",
        "put",
        "put_writes",
        "delete_thread",
        "delete_for_runs",
        "copy_thread",
        "prune",
    )
    for name in names:
        method = getattr(saver, name)

        def spy(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            called.append(_name)
            return _method(*args, **kwargs)

        setattr(saver, name, spy)
    twin = SyncDriven(saver)
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "user_id": "ana"}}
    stored = await twin.aput(config, generate_checkpoint(), generate_metadata(), {})
    await twin.aput_writes(stored, [("ch", 1)], "task")
    await twin.aget_tuple(stored)
    assert [t async for t in twin.alist(config)]
    await twin.acopy_thread("t", "u")
    await twin.aprune(["t"])
    await twin.adelete_for_runs(["r"])
    await twin.adelete_thread("u")
    assert sorted(set(called)) == sorted(names)
