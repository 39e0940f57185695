"""The memory tools as LangChain tools: the langchain-tests suites, errors back to the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from ucma_core import Memory, MemoryConfig
from ucma_core.conversation import memory_tools
from ucma_core.embedders import HashingEmbedder
from ucma_langchain import MEMORY_TOOL_NAMES, create_memory_tools


def _memory(folder: Path) -> Memory:
    mem = Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))
    mem.observe("Ana's cat Miso sleeps on the balcony.", user_id="ana")
    mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana")
    return mem


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    memory = _memory(tmp_path_factory.mktemp("tools") / "memory")
    yield memory
    memory.close()


class _Tool:
    """What langchain-tests' tool suites need to know about one of the memory tools."""

    name: ClassVar[str] = ""
    example: ClassVar[dict[str, Any]] = {}

    @pytest.fixture(autouse=True)
    def _memory(self, shared: Memory) -> None:
        self.memory = shared

    @property
    def tool_constructor(self) -> BaseTool:
        return next(t for t in create_memory_tools(self.memory, user_id="ana") if t.name == self.name)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return self.example


class _Recall(_Tool):
    name = "recall_memory"
    example: ClassVar[dict[str, Any]] = {
        "query": "Ana's cat",
        "time_phrase": "today",
        "memory_types": ["episodic"],
    }


class _Save(_Tool):
    name = "save_memory"
    example: ClassVar[dict[str, Any]] = {"content": "Ana's favourite pastry is pastel de nata."}


class _Forget(_Tool):
    name = "forget_memory"
    example: ClassVar[dict[str, Any]] = {"memory_id": "no-such-memory"}


class _Facts(_Tool):
    name = "facts_about"
    example: ClassVar[dict[str, Any]] = {"entity": "Ana"}


# langchain-tests' suites, unmodified: one unit and one integration class per tool.
class TestRecallUnit(_Recall, ToolsUnitTests): ...


class TestRecallIntegration(_Recall, ToolsIntegrationTests): ...


class TestSaveUnit(_Save, ToolsUnitTests): ...


class TestSaveIntegration(_Save, ToolsIntegrationTests): ...


class TestForgetUnit(_Forget, ToolsUnitTests): ...


class TestForgetIntegration(_Forget, ToolsIntegrationTests): ...


class TestFactsUnit(_Facts, ToolsUnitTests): ...


class TestFactsIntegration(_Facts, ToolsIntegrationTests): ...


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = _memory(tmp_path / "memory")
    yield memory
    memory.close()


def call(tool: BaseTool, **args: Any) -> ToolMessage:
    message = tool.invoke({"name": tool.name, "args": args, "id": "c1", "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    return message


def test_names_match_the_core(mem: Memory) -> None:
    tools = create_memory_tools(mem, user_id="ana")
    assert [t.name for t in tools] == [s.name for s in memory_tools(mem, user_id="ana")]
    assert set(MEMORY_TOOL_NAMES) == {t.name for t in tools}


def test_schemas_follow_the_neutral_description(mem: Memory) -> None:
    recall = create_memory_tools(mem, user_id="ana")[0]
    schema = recall.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query", "time_phrase", "memory_types"}
    assert "episodic" in json.dumps(schema["properties"]["memory_types"])


def test_save_recall_forget_round_trip(mem: Memory) -> None:
    recall, save, forget, facts = create_memory_tools(mem, user_id="ana")
    saved = call(save, content="Ana's favourite pastry is pastel de nata.")
    memory_id = saved.artifact["id"]
    hits = call(recall, query="favourite pastry")
    assert json.loads(hits.content)[0]["id"] == memory_id  # type: ignore[arg-type]
    assert hits.artifact[0]["content"] == "Ana's favourite pastry is pastel de nata."
    fact = call(save, subject="Ana", predicate="works as", object="architect")
    assert fact.artifact["memory_type"] == "semantic"
    assert {f["object"] for f in call(facts, entity="Ana").artifact} == {"Lisbon", "architect"}
    assert call(forget, memory_id=memory_id).artifact == {"forgotten": True}
    assert mem.get(memory_id) is None


async def test_async_tools(mem: Memory) -> None:
    recall = create_memory_tools(mem, user_id="ana")[0]
    message = await recall.ainvoke(
        {"name": recall.name, "args": {"query": "cat"}, "id": "c", "type": "tool_call"}
    )
    assert "Miso" in message.content


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("recall_memory", {"query": "cat", "memory_types": ["dreams"]}, "memory_types"),
        ("recall_memory", {"query": "   "}, "non-empty"),
        ("recall_memory", {"query": "cat", "time_phrase": "whenever"}, "cannot read the time_phrase"),
        ("save_memory", {}, "needs content"),
        ("save_memory", {"subject": "Ana", "predicate": "likes"}, "missing: object"),
        ("save_memory", {"content": "x", "subject": "Ana"}, "not both"),
        ("recall_memory", {"query": "cat", "user_id": "ben"}, "user_id"),
    ],
)
def test_refusals_go_back_to_the_model(mem: Memory, name: str, args: dict[str, Any], says: str) -> None:
    tool = next(t for t in create_memory_tools(mem, user_id="ana") if t.name == name)
    before = mem.stats()["memories"]
    message = call(tool, **args)
    assert message.status == "error"
    assert says in message.content
    assert mem.stats()["memories"] == before


def test_forget_cannot_reach_another_user(mem: Memory) -> None:
    ben_id = mem.observe("Ben's secret: he hates trams.", user_id="ben")
    forget = create_memory_tools(mem, user_id="ana")[2]
    assert call(forget, memory_id=ben_id).artifact == {"forgotten": False}
    assert mem.get(ben_id) is not None  # type: ignore[arg-type]


MISSING_OR_WRONG = [
    ("recall_memory", {}, "query"),
    ("recall_memory", {"q": "cat"}, "q"),
    ("recall_memory", {"query": 5}, "query"),
    ("forget_memory", {}, "memory_id"),
    ("facts_about", {}, "entity"),
    ("facts_about", {"entity": ["Ana"]}, "entity"),
]


@pytest.mark.parametrize(("name", "args", "names"), MISSING_OR_WRONG)
async def test_missing_or_wrong_arguments_are_tool_errors(
    mem: Memory, name: str, args: dict[str, Any], names: str
) -> None:
    """Sync and async: a ToolMessage(status="error") naming the argument, never a Python TypeError."""
    tool = next(t for t in create_memory_tools(mem, user_id="ana") if t.name == name)
    call_ = {"name": name, "args": args, "id": "c1", "type": "tool_call"}
    for message in (tool.invoke(call_), await tool.ainvoke(call_)):
        assert isinstance(message, ToolMessage) and message.status == "error"
        assert names in message.content and "positional argument" not in message.content
