"""Memory tools for tool-calling agents, described once for every framework.

:func:`memory_tools` returns four :class:`ToolSpec` records (name, description,
JSON schema of the arguments, a sync and an async callable). An adapter only
wraps each one in its framework's tool type (LangChain ``StructuredTool``,
LlamaIndex ``FunctionTool``):

* ``recall_memory(query, time_phrase=None, memory_types=None)``: the memories
  most worth recalling, as ``[{"id", "content", "memory_type", "timestamp_iso",
  "score"}]``, best first. ``time_phrase`` ("last week", "in May", "before the
  move") is appended to the query, where the query router reads it; a phrase the
  router cannot read is refused with a message saying what it understands.
* ``save_memory(content=None, subject=None, predicate=None, object=None)``: a
  memory (``content``, always kept) or a fact (all of ``subject``, ``predicate``,
  ``object``), never both; returns ``{"id", "memory_type"}``. What the model saves
  is stored with ``source="assistant"`` (it is the model's wording) and
  ``metadata={"tool": "save_memory"}``.
* ``forget_memory(memory_id)``: ``{"forgotten": true}`` if the memory was deleted,
  ``{"forgotten": false}`` if there is no such memory *in the bound scope*.
* ``facts_about(entity)``: the current facts about an entity, as ``[{"id",
  "subject", "predicate", "object", "confidence"}]``.

The scope is bound when the tools are made (see
:func:`~ucma_core.conversation.binding.bind`); every call goes through the bound
view, and nothing in a model's arguments names a user, agent or session. Model
arguments are checked against each tool's schema and refused with
:class:`~ucma_core.errors.InvalidInputError` messages a model can act on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ucma_core.conversation.binding import bind
from ucma_core.errors import InvalidInputError
from ucma_core.records import Fact, MemoryType, RetrievalResult
from ucma_core.retrieval.router import route

if TYPE_CHECKING:
    from ucma_core.conversation.binding import Target
    from ucma_core.scoped import ScopedMemory

__all__ = ["MEMORY_TOOL_NAMES", "ToolSpec", "memory_tools"]

#: The names of the tools :func:`memory_tools` makes: their calls and results are copies of
#: memories, never stored as new ones.
MEMORY_TOOL_NAMES: Final = frozenset({"recall_memory", "save_memory", "forget_memory", "facts_about"})

_RESULT_KEYS = ("id", "content", "memory_type", "timestamp_iso", "score")
_SAVED_METADATA = {"tool": "save_memory"}


@dataclass(frozen=True)
class ToolSpec:
    """A framework-neutral tool: what a model sees and what runs when it calls the tool.

    Attributes:
        name: the tool name the model calls.
        description: when and how to use it, for the model.
        parameters: JSON schema (``{"type": "object", "properties": ..., "required": ...}``)
            of the keyword arguments.
        func: ``func(**arguments)`` runs the tool and returns a JSON-able result.
        afunc: the async partner of ``func`` (same arguments and result).
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False)
    func: Callable[..., Any] = field(repr=False)
    afunc: Callable[..., Awaitable[Any]] = field(repr=False)


@dataclass(frozen=True)
class _Call:
    """One call on the bound view, in its sync and async form, and how to shape its result."""

    sync: Callable[..., Any]
    asynchronous: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    shape: Callable[[Any], Any]


def _tool(
    name: str, description: str, parameters: dict[str, Any], prepare: Callable[[dict[str, Any]], _Call]
) -> ToolSpec:
    """A :class:`ToolSpec` whose sync and async callables share argument checks and shaping."""

    def func(**arguments: Any) -> Any:
        call = prepare(_check_arguments(name, parameters, arguments))
        return call.shape(call.sync(*call.args, **call.kwargs))

    async def afunc(**arguments: Any) -> Any:
        call = prepare(_check_arguments(name, parameters, arguments))
        return call.shape(await call.asynchronous(*call.args, **call.kwargs))

    func.__name__ = afunc.__name__ = name
    func.__doc__ = afunc.__doc__ = description
    return ToolSpec(name, description, parameters, func, afunc)


def _schema(properties: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _check_arguments(tool: str, schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a model sent, checked against ``schema``: strings non-blank, arrays of
    allowed strings (one str is read as a list of one), ``None`` for an optional one as absent."""
    properties: dict[str, dict[str, Any]] = schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise InvalidInputError(
            f"{tool} got unknown argument(s) {', '.join(unknown)}; it takes: {', '.join(properties)}"
        )
    checked: dict[str, Any] = {}
    for name, prop in properties.items():
        value = arguments.get(name)
        if value is None:
            if name in schema["required"]:
                raise InvalidInputError(f"{tool} needs the argument {name!r} ({prop['description']})")
            continue
        if prop["type"] == "string":
            if not isinstance(value, str) or not value.strip():
                raise InvalidInputError(
                    f"{tool}: {name} must be a non-empty string, got {type(value).__name__} {value!r:.80}"
                )
            checked[name] = value.strip()
        else:  # an array of strings, possibly from an enum
            values = [value] if isinstance(value, str) else value
            allowed = prop["items"].get("enum")
            if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
                raise InvalidInputError(f"{tool}: {name} must be a list of strings, got {value!r:.80}")
            bad = [v for v in values if allowed is not None and v not in allowed]
            if bad:
                raise InvalidInputError(
                    f"{tool}: unknown {name} {', '.join(map(repr, bad))}; use any of: {', '.join(allowed)}"
                )
            if values:
                checked[name] = list(values)
    return checked


# ---------------------------------------------------------------------- the four tools
_RECALL = _schema(
    {
        "query": {"type": "string", "description": "what to look for, in plain words"},
        "time_phrase": {
            "type": "string",
            "description": "optional time to search in, e.g. 'yesterday', 'last week', 'in May 2025', "
            "'two weeks ago', 'before the move'",
        },
        "memory_types": {
            "type": "array",
            "items": {"type": "string", "enum": [t.value for t in MemoryType]},
            "description": "optional kinds of memory to search: episodic (what was said or happened), "
            "semantic (facts), procedural (how-tos), learning (lessons), prospective (reminders)",
        },
    },
    ["query"],
)
_SAVE = _schema(
    {
        "content": {"type": "string", "description": "a memory to keep, as one self-contained sentence"},
        "subject": {"type": "string", "description": "a fact's subject, e.g. 'Ana'"},
        "predicate": {"type": "string", "description": "a fact's relation, e.g. 'lives in'"},
        "object": {"type": "string", "description": "a fact's object, e.g. 'Lisbon'"},
    },
    [],
)
_FORGET = _schema(
    {"memory_id": {"type": "string", "description": "the id of the memory, as recall_memory returned it"}},
    ["memory_id"],
)
_FACTS = _schema(
    {"entity": {"type": "string", "description": "the person, place or thing, e.g. 'Ana'"}}, ["entity"]
)


def _results(results: list[RetrievalResult]) -> list[dict[str, Any]]:
    out = []
    for result in results:
        full = result.to_dict()
        trimmed = {key: full[key] for key in _RESULT_KEYS}
        trimmed["score"] = round(float(trimmed["score"]), 3)
        out.append(trimmed)
    return out


def _saved(result: str | Fact | None) -> dict[str, Any]:
    if isinstance(result, Fact):
        return {"id": result.id, "memory_type": MemoryType.SEMANTIC.value}
    return {"id": result, "memory_type": MemoryType.EPISODIC.value}


def _facts(facts: list[Fact]) -> list[dict[str, Any]]:
    return [
        {
            "id": f.id,
            "subject": f.subject,
            "predicate": f.predicate,
            "object": f.object,
            "confidence": round(f.confidence, 3),
        }
        for f in facts
    ]


def _recall_query(view: ScopedMemory, query: str, time_phrase: str | None) -> str:
    if time_phrase is None:
        return query
    memory = view.memory
    decided = route(time_phrase, memory.now(), timezone=memory.config.timezone)
    if decided.time_range is None and decided.anchor is None:
        raise InvalidInputError(
            f"recall_memory: cannot read the time_phrase {time_phrase!r}; use a phrase such as 'today', "
            "'yesterday', 'last week', 'this month', 'in May', 'in 2025', 'three days ago', "
            "'since March', 'on 2025-05-01' or 'before the move', or leave it out"
        )
    return f"{query} {time_phrase}"


def memory_tools(
    target: Target,
    *,
    k: int = 5,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
) -> list[ToolSpec]:
    """The memory tools (recall, save, forget, facts) bound to one scope.

    Args:
        target: a :class:`~ucma_core.Memory` (bound to ``user_id`` / ``agent_id`` /
            ``session_id``) or a ``Memory.scope(...)`` view (scope arguments omitted
            or equal to the view's).
        k: how many memories ``recall_memory`` returns at most (1..100).
        user_id: the user whose memories the tools read and write (``None``: memories
            stored without a user).
        agent_id: the agent whose memories the tools read and write (``None``: reads
            see every agent's memories of the user).
        session_id: the session saved memories go to (default: the memory's current
            session); reads always cover every session of the user, so a new
            conversation recalls earlier ones.

    Returns:
        ``[recall_memory, save_memory, forget_memory, facts_about]`` as :class:`ToolSpec`.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
        ...     recall, save, forget, facts = memory_tools(mem, user_id="ana")
        ...     saved = save.func(content="Ana's cat is called Miso.")
        ...     [hit["content"] for hit in recall.func(query="Ana's cat")]
        ...     forget.func(memory_id=saved["id"])
        ["Ana's cat is called Miso."]
        {'forgotten': True}
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
        raise InvalidInputError(f"k must be an int in 1..100, got {k!r}")
    view = bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)

    def recall(args: dict[str, Any]) -> _Call:
        query = _recall_query(view, args["query"], args.get("time_phrase"))
        options = {"k": k, "memory_types": args.get("memory_types")}
        return _Call(view.remember, view.aremember, (query,), options, _results)

    def save(args: dict[str, Any]) -> _Call:
        triple = [args.get(n) for n in ("subject", "predicate", "object")]
        given = [n for n in ("subject", "predicate", "object") if args.get(n) is not None]
        if "content" in args and given:
            raise InvalidInputError(
                "save_memory takes either content or subject/predicate/object, not both; make two calls"
            )
        if "content" in args:
            options = {"source": "assistant", "metadata": dict(_SAVED_METADATA), "keep": True}
            return _Call(view.observe, view.aobserve, (args["content"],), options, _saved)
        if len(given) != 3:
            missing = [n for n in ("subject", "predicate", "object") if n not in given]
            raise InvalidInputError(
                "save_memory needs content (a memory) or all of subject, predicate and object (a fact)"
                + (f"; missing: {', '.join(missing)}" if given else "")
            )
        options = {"source": "assistant", "metadata": dict(_SAVED_METADATA)}
        return _Call(view.assert_fact, view.aassert_fact, tuple(triple), options, _saved)

    def forget(args: dict[str, Any]) -> _Call:
        return _Call(view.forget, view.aforget, (args["memory_id"],), {}, lambda ok: {"forgotten": bool(ok)})

    def facts(args: dict[str, Any]) -> _Call:
        return _Call(view.facts_about, view.afacts_about, (args["entity"],), {}, _facts)

    return [
        _tool(
            "recall_memory",
            "Search long-term memory for what is relevant to a query: what the user said or did in "
            "earlier conversations, facts, how-tos, lessons and reminders. Use it before answering "
            "anything that depends on the user's past, preferences or earlier sessions. Add time_phrase "
            "to search a time ('last week', 'in May'). Returns memories best first, with their ids.",
            _RECALL,
            recall,
        ),
        _tool(
            "save_memory",
            "Save something worth remembering in later conversations: either content (one "
            "self-contained sentence, e.g. 'Ana prefers short answers') or a fact as subject, "
            "predicate and object (e.g. 'Ana', 'lives in', 'Lisbon'). Returns the new memory's id.",
            _SAVE,
            save,
        ),
        _tool(
            "forget_memory",
            "Delete one memory by its id (from recall_memory or save_memory), e.g. when the user asks "
            "to forget something or a memory is wrong. Returns whether it was forgotten.",
            _FORGET,
            forget,
        ),
        _tool(
            "facts_about",
            "List the current facts known about an entity (a person, place or thing), each as "
            "subject, predicate, object with a confidence.",
            _FACTS,
            facts,
        ),
    ]
