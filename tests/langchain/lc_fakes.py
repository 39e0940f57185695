"""First-party fakes for the LangChain adapter tests: a scripted chat model that records
every prompt it receives. Importable from a child process (``from tests.langchain.lc_fakes
import ...``), so keep it free of pytest."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import Field

Reply = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]


class ScriptedChatModel(BaseChatModel):
    """Answers each call with the next reply of ``script`` (the last one repeats).

    A reply is an ``AIMessage``, a str, or a function of the prompt returning one.
    ``prompts`` holds every prompt received; ``bind_tools`` records the tools and
    returns the model itself, so ``create_agent`` can use it.
    """

    script: list[Any] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    tool_names: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        reply = self.script[min(len(self.prompts), len(self.script)) - 1]
        if callable(reply):
            reply = reply(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        self.tool_names = [getattr(t, "name", str(t)) for t in tools]
        return self


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    """Everything a prompt says, as one string."""
    return "\n".join(f"{m.type}: {m.text}" for m in messages)


def answer_from_last_tool(messages: list[BaseMessage]) -> str:
    """A final answer that repeats the last tool result (what a model does after recalling)."""
    tool = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    return f"From memory: {tool.text}"


def call_tool(name: str, args: dict[str, Any], call_id: str = "call-1") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


_TASKS = {
    "rate how worth remembering": "importance",
    "short, faithful summaries": "summarize",
    "extract durable facts": "facts",
    "reusable procedure": "procedure",
    "distil one lesson": "learning",
    "judge whether a newer fact": "conflicts",
}


def json_answer(messages: list[BaseMessage]) -> str:
    """What a well-behaved model answers to UCMA's provider prompts (``ucma_core.providers.llm``):
    facts from "I live in X" sentences, first-text summaries, no procedures or lessons, and
    a conflict when the same subject lives somewhere else."""
    system, user = messages[0].text, json.loads(messages[-1].text)
    task = next(t for key, t in _TASKS.items() if key in system)
    if task == "importance":
        return json.dumps({"importance": 0.6})
    if task == "summarize":
        return json.dumps(
            {"items": [{"index": g["index"], "summary": " ".join(g["texts"])[:200]} for g in user["groups"]]}
        )
    if task == "facts":
        items = []
        for item in user["items"]:
            found = re.search(r"\bI live in ([A-Z][a-z]+)", item["text"])
            facts = [
                {
                    "subject": item["speaker"],
                    "predicate": "lives in",
                    "object": found.group(1) if found else "",
                    "confidence": 0.9,
                }
            ]
            items.append({"index": item["index"], "facts": facts if found else []})
        return json.dumps({"items": items})
    if task == "conflicts":
        return json.dumps(
            {
                "items": [
                    {
                        "index": i["index"],
                        "conflict": i["older"]["predicate"] == i["newer"]["predicate"] == "lives in",
                    }
                    for i in user["items"]
                ]
            }
        )
    return json.dumps({task: None})
