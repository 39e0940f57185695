"""UCMAToolSpec: LlamaIndex FunctionTools from UCMA's neutral memory tools."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool
from llama_index.core.tools.calling import acall_tool, call_tool

from ucma_core import Memory
from ucma_core.errors import InvalidInputError
from ucma_llamaindex import UCMAToolSpec
from ucma_llamaindex.tool_spec import schema_model

NAMES = ["recall_memory", "save_memory", "forget_memory", "facts_about"]


def test_four_function_tools_with_the_neutral_schemas(mem: Memory) -> None:
    tools = UCMAToolSpec(mem, user_id="ana").to_tool_list()
    assert [t.metadata.name for t in tools] == NAMES
    assert all(isinstance(t, FunctionTool) for t in tools)
    recall = tools[0].metadata
    params = recall.get_parameters_dict()
    assert params["required"] == ["query"]
    assert set(params["properties"]) == {"query", "time_phrase", "memory_types"}
    assert "episodic" in json.dumps(params["properties"]["memory_types"])
    assert recall.description.startswith("Search long-term memory")
    assert recall.to_openai_tool()["function"]["name"] == "recall_memory"


def test_save_recall_facts_and_forget_through_the_tools(mem: Memory) -> None:
    recall, save, forget, facts = UCMAToolSpec(mem, user_id="ana").to_tool_list()
    saved = json.loads(save(content="Ana's cat is called Miso.").content)
    save(subject="Ana", predicate="lives in", object="Lisbon")
    hits = json.loads(recall(query="Ana's cat").content)
    assert hits[0]["id"] == saved["id"] and hits[0]["content"] == "Ana's cat is called Miso."
    assert json.loads(facts(entity="Ana").content)[0]["object"] == "Lisbon"
    assert json.loads(forget(memory_id=saved["id"]).content) == {"forgotten": True}
    assert json.loads(forget(memory_id=saved["id"]).content) == {"forgotten": False}


async def test_async_tools_match(mem: Memory) -> None:
    recall, save, _, _ = UCMAToolSpec(mem, user_id="ana").to_tool_list()
    saved = json.loads((await save.acall(content="Ana likes green tea.")).content)
    assert json.loads((await recall.acall(query="tea")).content)[0]["id"] == saved["id"]
    assert (await recall.acall(query="tea")).content == recall.call(query="tea").content


def test_methods_and_a_subset_of_tools(mem: Memory) -> None:
    spec = UCMAToolSpec(mem, user_id="ana", k=1)
    spec.save_memory(content="Ana plays the cello.")
    assert len(json.loads(spec.recall_memory(query="cello"))) == 1
    only = spec.to_tool_list(spec_functions=["recall_memory"])
    assert [t.metadata.name for t in only] == ["recall_memory"]
    with pytest.raises(InvalidInputError, match="no memory tool"):
        spec.get_metadata_from_fn_name("delete_everything")


def test_the_scope_is_bound_and_forget_stays_in_it(mem: Memory) -> None:
    ben_id = mem.scope(user_id="ben").observe("Ben's PIN is 4321.", importance=0.9)
    assert ben_id is not None
    recall, _, forget, _ = UCMAToolSpec(mem, user_id="ana").to_tool_list()
    assert json.loads(recall(query="Ben's PIN").content) == []
    assert json.loads(forget(memory_id=ben_id).content) == {"forgotten": False}
    assert mem.get(ben_id) is not None
    with pytest.raises(InvalidInputError):  # a model cannot pass a scope
        recall.call(query="PIN", user_id="ben")


def test_bad_model_arguments_raise_clear_errors(mem: Memory) -> None:
    recall, save, _, _ = UCMAToolSpec(mem, user_id="ana").to_tool_list()
    with pytest.raises(InvalidInputError, match="non-empty string"):
        recall.call(query="   ")
    with pytest.raises(InvalidInputError, match="either content or subject"):
        save.call(content="x", subject="Ana")
    with pytest.raises(InvalidInputError, match="unknown memory_types"):
        recall.call(query="x", memory_types=["dreams"])


def test_schema_model_builds_pydantic_models_from_json_schemas() -> None:
    model = schema_model(
        "Demo",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "who"},
                "kinds": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "n": {"type": "integer"},
            },
            "required": ["name"],
        },
    )
    assert model(name="x").model_dump() == {"name": "x", "kinds": None, "n": None}
    schema = model.model_json_schema()
    assert schema["required"] == ["name"] and schema["properties"]["name"]["description"] == "who"


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("recall_memory", {}, "recall_memory needs the argument 'query'"),
        ("recall_memory", {"q": "cat"}, "unknown argument(s) q"),
        ("recall_memory", {"query": 5}, "query must be a non-empty string"),
        ("forget_memory", {}, "forget_memory needs the argument 'memory_id'"),
        ("facts_about", {}, "facts_about needs the argument 'entity'"),
        ("facts_about", {"entity": ["Ana"]}, "entity must be a non-empty string"),
    ],
)
async def test_missing_or_wrong_arguments_reach_the_model_as_tool_output(
    mem: Memory, name: str, args: dict[str, Any], says: str
) -> None:
    """Through call_tool / acall_tool (what LlamaIndex agents use): an error output saying
    what is wrong, never Python's ``missing 1 required positional argument``."""
    tool = next(t for t in UCMAToolSpec(mem, user_id="ana").to_tool_list() if t.metadata.name == name)
    for output in (call_tool(tool, args), await acall_tool(tool, args)):
        assert output.is_error
        assert says in output.content and "positional argument" not in output.content
