"""Test doubles for UCMA's LangChain and LangGraph adapters: offline, deterministic, no key.

Not part of the adapters' API: :class:`ScriptedChatModel` stands in for a real chat
model in tests, docs and notebooks (and is what
:func:`~ucma_langchain.langgraph.prebuilt.create_memory_agent` runs when no model is given).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ["ScriptedChatModel"]

_REMEMBER = re.compile(r"^\s*(?:please\s+)?remember(?:\s+that)?\s+(?P<fact>.+)$", re.I | re.S)


class ScriptedChatModel(BaseChatModel):
    """An offline chat model with fixed rules, for tests, docs and notebooks.

    * "remember (that) X" with ``save_memory`` bound → a ``save_memory(content=X)`` call;
    * right after a tool result → "Saved." for ``save_memory``, else "Done: <result>";
    * otherwise → "From memory: <first recalled memory>" when the system message holds
      recalled memories, else "OK: <the user's message>".

    Every prompt it receives is kept in :attr:`prompts` (shared by its ``bind_tools``
    copies), so a test can check what the model saw.
    """

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "ucma-scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        return ChatResult(
            generations=[ChatGeneration(message=self._reply(messages, kwargs.get("tool_names") or []))]
        )

    def _reply(self, messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
        last = messages[-1] if messages else HumanMessage("")
        if isinstance(last, ToolMessage):
            return AIMessage("Saved." if last.name == "save_memory" else f"Done: {last.text}")
        text = last.text.strip()
        wish = _REMEMBER.match(text)
        if wish and "save_memory" in tool_names:
            call = {
                "name": "save_memory",
                "args": {"content": wish["fact"].strip()},
                "id": f"call-{len(self.prompts)}",
            }
            return AIMessage("", tool_calls=[call])
        recalled = [
            line[2:].split("] ", 1)[-1]
            for m in messages
            if isinstance(m, SystemMessage)
            for line in m.text.splitlines()
            if line.startswith("- ")
        ]
        return AIMessage(f"From memory: {recalled[0]}" if recalled else f"OK: {text}")
