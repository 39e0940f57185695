"""UCMA's memory tools as LangChain tools, for tool-calling agents.

The tools are described once in :func:`ucma_core.conversation.memory_tools`
(names, descriptions, JSON argument schemas, callables bound to one scope); this
module only wraps each description in a ``StructuredTool``:

* the JSON schema becomes the tool's pydantic ``args_schema`` (what the model sees);
* a tool returns its result as JSON text (the ``ToolMessage`` content) and the
  result itself as the message's ``artifact``;
* a call the memory refuses because of the model's arguments (an unknown memory
  type, a blank query, a half-given fact…) comes back to the model as an error
  message (``ToolMessage(status="error")``) it can act on, instead of ending the run.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ucma_core.conversation import UNSET, Target, ToolSpec, Unset, memory_tools, stated_view
from ucma_core.errors import InvalidInputError

__all__ = ["MEMORY_TOOL_NAMES", "create_memory_tools", "to_langchain_tool"]

#: The names of the tools :func:`create_memory_tools` makes.
MEMORY_TOOL_NAMES = frozenset({"recall_memory", "save_memory", "forget_memory", "facts_about"})

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, Any],
}


def _python_type(schema: Mapping[str, Any]) -> Any:
    """The Python type for one JSON-schema property (the subset tool schemas use)."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        return list[_python_type(schema.get("items", {}))]  # type: ignore[misc]
    if isinstance(kind, list):
        types = [_JSON_TYPES.get(k, Any) for k in kind if k != "null"]
        if not types:
            return Any
        single = types[0] if len(types) == 1 else types[0] | types[1]
        return single | None if "null" in kind else single
    return _JSON_TYPES.get(str(kind), Any)


def _args_model(name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
    """A pydantic model with the properties of a JSON object schema (optional ones default to ``None``)."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for prop, spec in schema.get("properties", {}).items():
        kind = _python_type(spec)
        description = spec.get("description")
        if prop in required:
            fields[prop] = (kind, Field(description=description))
        else:
            fields[prop] = (kind | None, Field(default=None, description=description))
    extra: Literal["forbid", "ignore"] = "forbid" if schema.get("additionalProperties") is False else "ignore"
    title = "".join(part.capitalize() for part in name.split("_")) + "Input"
    model: type[BaseModel] = create_model(title, __config__=ConfigDict(extra=extra), **fields)
    return model


def _as_content(result: Any) -> tuple[str, Any]:
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return text, result


def _refusals_to_model(func: Callable[..., Any]) -> Callable[..., tuple[str, Any]]:
    def run(**arguments: Any) -> tuple[str, Any]:
        try:
            return _as_content(func(**arguments))
        except InvalidInputError as e:
            raise ToolException(str(e)) from e

    return run


def _arefusals_to_model(afunc: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[tuple[str, Any]]]:
    async def run(**arguments: Any) -> tuple[str, Any]:
        try:
            return _as_content(await afunc(**arguments))
        except InvalidInputError as e:
            raise ToolException(str(e)) from e

    return run


def _invalid_arguments(error: ValidationError) -> str:
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors())
    return f"invalid arguments: {problems}"


def to_langchain_tool(spec: ToolSpec) -> StructuredTool:
    """Wrap one neutral :class:`~ucma_core.conversation.ToolSpec` in a LangChain ``StructuredTool``."""
    return StructuredTool.from_function(
        func=_refusals_to_model(spec.func),
        coroutine=_arefusals_to_model(spec.afunc),
        name=spec.name,
        description=spec.description,
        args_schema=_args_model(spec.name, spec.parameters),
        infer_schema=False,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=_invalid_arguments,
    )


def create_memory_tools(
    memory: Target,
    *,
    user_id: str | Unset | None = UNSET,
    agent_id: str | None = None,
    session_id: str | None = None,
    k: int = 5,
) -> list[BaseTool]:
    """LangChain tools to recall, save and forget memories and list facts, bound to one scope.

    The tools are ``recall_memory(query, time_phrase=None, memory_types=None)``,
    ``save_memory(content=None, subject=None, predicate=None, object=None)``,
    ``forget_memory(memory_id)`` and ``facts_about(entity)`` (see
    :func:`ucma_core.conversation.memory_tools`). The scope is fixed here: nothing a
    model passes can read, write or delete another user's memories.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``.
        user_id: the user whose memories the tools read and write; must be stated
            (``None``: an app without users, memories stored without a user); a view's
            own user when left out.
        agent_id: the agent whose memories the tools read and write (``None``: any agent's
            are read).
        session_id: the session saved memories go to (default: the memory's current
            session); recall covers every session of the user.
        k: how many memories ``recall_memory`` returns at most.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> recall, save, forget, facts = create_memory_tools(mem, user_id="ana")
        >>> _ = save.invoke({"content": "Ana's cat is called Miso."})
        >>> json.loads(recall.invoke({"query": "Ana's cat"}))[0]["content"]
        "Ana's cat is called Miso."
        >>> mem.close()
    """
    view = stated_view(
        memory, user_id, adapter="create_memory_tools", agent_id=agent_id, session_id=session_id
    )
    specs = memory_tools(view, k=k)
    return [to_langchain_tool(spec) for spec in specs]
