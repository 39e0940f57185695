"""``UCMAToolSpec``: UCMA's memory tools as LlamaIndex ``FunctionTool``\\ s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec
from llama_index.core.tools.types import ToolMetadata
from pydantic import BaseModel, Field, create_model

from ucma_core.conversation import UNSET, ToolSpec, Unset, memory_tools, stated_view
from ucma_core.errors import InvalidInputError
from ucma_core.memory import Memory
from ucma_core.scoped import ScopedMemory

__all__ = ["UCMAToolSpec", "schema_model"]

_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def _annotation(prop: Mapping[str, Any]) -> Any:
    if "enum" in prop:
        return Literal[tuple(prop["enum"])]
    if prop.get("type") == "array":
        return list[_annotation(prop.get("items", {}))]  # type: ignore[misc]
    return _TYPES.get(prop.get("type", ""), Any)


def schema_model(name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
    """A pydantic model whose JSON schema is ``schema`` (the subset UCMA's tools use:
    objects of strings, numbers, booleans, enums and arrays of them; optional fields
    default to ``None``), as LlamaIndex tools describe their arguments with one."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for field_name, prop in schema.get("properties", {}).items():
        annotation = _annotation(prop)
        description = prop.get("description")
        if field_name in required:
            fields[field_name] = (annotation, Field(description=description))
        else:
            fields[field_name] = (annotation | None, Field(default=None, description=description))
    return create_model(name, **fields)


def _as_text(result: Any) -> str:
    """A tool's JSON-able result as the text a model reads (JSON, not Python's repr)."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


class UCMAToolSpec(BaseToolSpec):
    """The memory tools for LlamaIndex agents: recall, save, forget and facts.

    ``UCMAToolSpec(mem, user_id="ana").to_tool_list()`` gives four ``FunctionTool``\\ s
    (sync and async) made from UCMA's neutral tool descriptions
    (:func:`ucma_core.conversation.memory_tools`): their names, descriptions and JSON
    argument schemas, and the calls behind them. Results reach the model as JSON text.
    The scope is bound here: nothing a model passes can read, save or forget another
    user's memories. A bad argument raises :class:`~ucma_core.errors.InvalidInputError`
    with a message the model can act on (agents hand it back to the model as the tool's
    output).

    A missing, misspelt or wrongly typed argument gets the same message (the methods take
    every argument as optional, so a missing one never ends in Python's ``TypeError``):
    through LlamaIndex's ``call_tool`` / ``acall_tool`` (what its agents use) the model
    reads ``"Encountered error: recall_memory needs the argument 'query' (...)"``.

    Each tool is also a method (``spec.recall_memory(query="...")``, ``await
    spec.arecall_memory(...)``) and ``to_tool_list(spec_functions=["recall_memory"])``
    picks some of them. Arguments a tool does not take (a model inventing ``user_id``)
    are refused with the list of those it does.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view from ``Memory.scope(...)``.
        user_id: the user; must be stated (``None``: an app without users; a view's own
            user when omitted).
        agent_id: the agent (a view's own when omitted).
        session_id: the session saved memories go to (a view's own when omitted).
            Leave ``session_id`` unset to recall across the user's sessions.
        k: how many memories ``recall_memory`` returns at most.
    """

    spec_functions: list[SPEC_FUNCTION_TYPE] = [  # noqa: RUF012 (BaseToolSpec declares it so)
        ("recall_memory", "arecall_memory"),
        ("save_memory", "asave_memory"),
        ("forget_memory", "aforget_memory"),
        ("facts_about", "afacts_about"),
    ]

    def __init__(
        self,
        memory: Memory | ScopedMemory,
        *,
        user_id: str | Unset | None = UNSET,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = 5,
    ) -> None:
        self._view = stated_view(
            memory, user_id, adapter="UCMAToolSpec", agent_id=agent_id, session_id=session_id
        )
        self._specs = {spec.name: spec for spec in memory_tools(self._view, k=k)}

    @property
    def memory(self) -> ScopedMemory:
        """The UCMA view the tools read and write."""
        return self._view

    # ------------------------------------------------------------------ the tools
    def recall_memory(
        self,
        query: str | None = None,
        time_phrase: str | None = None,
        memory_types: list[str] | None = None,
        **other: Any,
    ) -> str:
        """The memories most worth recalling for ``query`` (optionally in a time, of some types)."""
        return self._call(
            "recall_memory", query=query, time_phrase=time_phrase, memory_types=memory_types, **other
        )

    async def arecall_memory(
        self,
        query: str | None = None,
        time_phrase: str | None = None,
        memory_types: list[str] | None = None,
        **other: Any,
    ) -> str:
        """Async :meth:`recall_memory`."""
        return await self._acall(
            "recall_memory", query=query, time_phrase=time_phrase, memory_types=memory_types, **other
        )

    def save_memory(
        self,
        content: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        **other: Any,
    ) -> str:
        """Save a memory (``content``) or a fact (``subject``, ``predicate``, ``object``)."""
        return self._call(
            "save_memory", content=content, subject=subject, predicate=predicate, object=object, **other
        )

    async def asave_memory(
        self,
        content: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        **other: Any,
    ) -> str:
        """Async :meth:`save_memory`."""
        return await self._acall(
            "save_memory", content=content, subject=subject, predicate=predicate, object=object, **other
        )

    def forget_memory(self, memory_id: str | None = None, **other: Any) -> str:
        """Delete a memory of the bound scope by id."""
        return self._call("forget_memory", memory_id=memory_id, **other)

    async def aforget_memory(self, memory_id: str | None = None, **other: Any) -> str:
        """Async :meth:`forget_memory`."""
        return await self._acall("forget_memory", memory_id=memory_id, **other)

    def facts_about(self, entity: str | None = None, **other: Any) -> str:
        """The current facts about ``entity``."""
        return self._call("facts_about", entity=entity, **other)

    async def afacts_about(self, entity: str | None = None, **other: Any) -> str:
        """Async :meth:`facts_about`."""
        return await self._acall("facts_about", entity=entity, **other)

    # ------------------------------------------------------------------ LlamaIndex hooks
    def get_fn_schema_from_fn_name(
        self, fn_name: str, spec_functions: list[SPEC_FUNCTION_TYPE] | None = None
    ) -> type[BaseModel] | None:
        """The argument model of the tool ``fn_name`` (from its JSON schema)."""
        spec = self._spec(fn_name)
        return schema_model(spec.name, spec.parameters)

    def get_metadata_from_fn_name(
        self, fn_name: str, spec_functions: list[SPEC_FUNCTION_TYPE] | None = None
    ) -> ToolMetadata | None:
        """Name, description and argument model of the tool ``fn_name``."""
        spec = self._spec(fn_name)
        return ToolMetadata(
            name=spec.name, description=spec.description, fn_schema=schema_model(spec.name, spec.parameters)
        )

    def _spec(self, fn_name: str) -> ToolSpec:
        spec = self._specs.get(fn_name)
        if spec is None:
            raise InvalidInputError(
                f"no memory tool named {fn_name!r}; the tools are: {', '.join(self._specs)}"
            )
        return spec

    def _call(self, name: str, **arguments: Any) -> str:
        return _as_text(self._spec(name).func(**arguments))

    async def _acall(self, name: str, **arguments: Any) -> str:
        return _as_text(await self._spec(name).afunc(**arguments))
