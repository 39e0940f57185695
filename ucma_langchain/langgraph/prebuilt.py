"""A small memory agent: ``recall → model ⇄ tools → consolidate``, as a ``StateGraph``.

:func:`create_memory_agent` builds the agent the docs and notebooks use. The model
is any LangChain chat model that can ``bind_tools``; without one it uses
:class:`~ucma_langchain.testing.ScriptedChatModel`, an offline model with fixed rules, so the graph runs
with no key and no network. The agent has UCMA's memory tools (recall, save,
forget, facts), bound on every run to the run's user (``configurable`` or context
``user_id``), plus any tools you give it.

.. code-block:: python

    graph = create_memory_agent(mem, checkpointer=UCMACheckpointer(mem), store=UCMAStore(mem))
    graph.invoke({"messages": [("user", "Remember that my cat is called Miso")]},
                 {"configurable": {"thread_id": "t1", "user_id": "ana"}})
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from ucma_core import Memory
from ucma_core.conversation import DEFAULT_K, DEFAULT_MAX_TOKENS, UNSET, Unset
from ucma_core.errors import InvalidInputError
from ucma_core.tokens import TokenCounter
from ucma_langchain.langgraph.checkpointer import UCMACheckpointer
from ucma_langchain.langgraph.nodes import ConsolidationNode, RecallNode, run_scope
from ucma_langchain.langgraph.scope import ScopeKeys
from ucma_langchain.testing import ScriptedChatModel
from ucma_langchain.tools import create_memory_tools

__all__ = ["DEFAULT_SYSTEM_PROMPT", "MemoryAgentState", "create_memory_agent"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with a long-term memory. Use the memories below when they help, "
    "and call save_memory when the user asks you to remember something."
)


class MemoryAgentState(MessagesState):
    """The agent's state: the conversation and the memories recalled for the last turn."""

    memories: str


def _system_prompt(base: str, memories: str) -> SystemMessage:
    return SystemMessage(f"{base}\n\n{memories}" if memories else base)


def create_memory_agent(
    memory: Memory,
    model: BaseChatModel | None = None,
    *,
    tools: Sequence[BaseTool] = (),
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    user_id: str | Unset | None = UNSET,
    k: int = DEFAULT_K,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    consolidate_every: int = 10,
    consolidation_timeout: float = 0.5,
    scope_keys: ScopeKeys | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    token_counter: TokenCounter | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled ``recall → model ⇄ tools → consolidate`` agent on ``memory``.

    Args:
        memory: the UCMA memory the agent recalls from and remembers into.
        model: a LangChain chat model that supports ``bind_tools``; default
            :class:`~ucma_langchain.testing.ScriptedChatModel` (offline).
        tools: more tools for the model, next to the memory tools.
        system_prompt: the system message; recalled memories are appended to it.
        user_id: the user of every run; left out, each run names its user
            (``config["configurable"]["user_id"]`` or the context), else
            :class:`~ucma_core.errors.UserNotStatedError`; ``None`` for an app without users.
        k / max_tokens: how many memories to recall and the token budget of the block.
        consolidate_every / consolidation_timeout: run a consolidation cycle every this
            many turns, waiting for it at most this many seconds.
        scope_keys: where the run names its user, agent and thread.
        checkpointer / store: passed to ``compile`` (e.g. :class:`UCMACheckpointer`,
            :class:`UCMAStore`).
        token_counter: counts tokens for the recall budget (default: the memory's).
    """
    if not isinstance(memory, Memory):
        raise InvalidInputError(f"memory must be a ucma_core.Memory, not {type(memory).__name__}")
    keys = scope_keys or ScopeKeys()
    chat = model if model is not None else ScriptedChatModel()
    extra = {t.name: t for t in tools}
    schemas = [*create_memory_tools(memory, user_id=None, k=k), *extra.values()]  # schemas only
    bound = chat.bind_tools(schemas)
    recall = RecallNode(
        memory,
        user_id=user_id,
        k=k,
        max_tokens=max_tokens,
        output="state",
        scope_keys=keys,
        token_counter=token_counter,
    )
    consolidate = ConsolidationNode(
        memory,
        user_id=user_id,
        consolidate_every=consolidate_every,
        timeout=consolidation_timeout,
        scope_keys=keys,
        observe=not isinstance(checkpointer, UCMACheckpointer),  # it observes messages as they arrive
    )

    def call_model(state: MemoryAgentState) -> dict[str, Any]:
        prompt = [_system_prompt(system_prompt, state.get("memories", "")), *state["messages"]]
        return {"messages": [bound.invoke(prompt)]}

    def run_tools(state: MemoryAgentState, config: RunnableConfig, runtime: Any = None) -> dict[str, Any]:
        scope = run_scope(config, keys, runtime, user_id, adapter="create_memory_agent")
        memory_tools = create_memory_tools(
            memory, user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id, k=k
        )
        available = {**{t.name: t for t in memory_tools}, **extra}
        last = state["messages"][-1]
        results: list[BaseMessage] = []
        for call in getattr(last, "tool_calls", []):
            tool = available.get(call["name"])
            if tool is None:
                results.append(
                    ToolMessage(
                        json.dumps({"error": f"unknown tool {call['name']!r}"}),
                        tool_call_id=call["id"],
                        status="error",
                    )
                )
                continue
            results.append(tool.invoke({**call, "type": "tool_call"}))
        return {"messages": results}

    def route(state: MemoryAgentState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "consolidate"

    builder = StateGraph(MemoryAgentState)
    builder.add_node("recall", recall)
    builder.add_node("model", call_model)
    builder.add_node("tools", run_tools)
    builder.add_node("consolidate", consolidate, defer=True)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_conditional_edges("model", route, ["tools", "consolidate"])
    builder.add_edge("tools", "model")
    builder.add_edge("consolidate", END)
    return builder.compile(checkpointer=checkpointer, store=store)
