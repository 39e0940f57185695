"""First-party offline fakes for the LlamaIndex adapter tests: a scripted function-calling
LLM, an LLM that answers with canned JSON, and an LLM that fails."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, ToolCallBlock
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM

#: One scripted reply: text, or a tool call ``(tool_name, kwargs)``, or a function of the
#: messages the model received returning either.
Step = (
    str | tuple[str, dict[str, Any]] | Callable[[Sequence[ChatMessage]], "str | tuple[str, dict[str, Any]]"]
)


class ScriptedFunctionLLM(MockFunctionCallingLLM):
    """A function-calling LLM that plays a script, one step per model call, and records
    every list of messages it was sent (``seen``). Past the script's end it says "done"."""

    _script: list[Step] = PrivateAttr(default_factory=list)
    _calls: int = PrivateAttr(default=0)
    _seen: list[list[ChatMessage]] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[Step]) -> None:
        super().__init__(response_generator=self._reply, is_chat_model=True)
        self._script = list(script)

    @property
    def seen(self) -> list[list[ChatMessage]]:
        """Every list of messages the model was sent, oldest call first."""
        return self._seen

    def _reply(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self._seen.append([m.model_copy(deep=True) for m in messages])
        step: Any = self._script[self._calls] if self._calls < len(self._script) else "done"
        self._calls += 1
        if callable(step):
            step = step(messages)
        if isinstance(step, tuple):
            name, arguments = step
            block = ToolCallBlock(tool_call_id=f"call-{self._calls}", tool_name=name, tool_kwargs=arguments)
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])
        return ChatMessage(role=MessageRole.ASSISTANT, content=step)


class FailingLLM(MockLLM):
    """An LLM whose every call fails, as a model behind a broken connection does."""

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise ConnectionError("model server unreachable")

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise ConnectionError("model server unreachable")


def texts(messages: Sequence[ChatMessage]) -> list[str]:
    """The text of each message (``""`` for none)."""
    return [m.content or "" for m in messages]


class CannedJSONLLM(MockLLM):
    """An offline stand-in for a real model behind UCMA's provider: reads the JSON request
    in the user message and answers in the JSON shape each system prompt asks for.
    ``bad_answers`` first answers are not JSON (to exercise asking again)."""

    _bad: int = PrivateAttr(default=0)
    _empty: bool = PrivateAttr(default=False)
    _requests: list[str] = PrivateAttr(default_factory=list)
    _kwargs: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    def __init__(self, bad_answers: int = 0, empty: bool = False) -> None:
        super().__init__()
        self._bad = bad_answers
        self._empty = empty

    @property
    def requests(self) -> list[str]:
        """The system prompt of every request, in order."""
        return self._requests

    @property
    def kwargs(self) -> list[dict[str, Any]]:
        """The extra keyword arguments of every request, in order."""
        return self._kwargs

    def _answer(self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]) -> ChatResponse:
        system, user = (m.content or "" for m in messages)
        self._requests.append(system)
        self._kwargs.append(kwargs)
        if self._empty:
            return ChatResponse(message=ChatMessage(role="assistant", content=""))
        if self._bad:
            self._bad -= 1
            return ChatResponse(message=ChatMessage(role="assistant", content="Sure! Here you go."))
        data = json.loads(user)
        answer: dict[str, Any]
        if "summaries" in system:
            answer = {
                "items": [
                    {"index": g["index"], "summary": " ".join(g["texts"])[:200]} for g in data["groups"]
                ]
            }
        elif "durable facts" in system:
            answer = {
                "items": [
                    {"index": i["index"], "facts": _facts(i["speaker"], i["text"])} for i in data["items"]
                ]
            }
        elif "contradicts" in system:
            answer = {"items": [{"index": i["index"], "conflict": True} for i in data["items"]]}
        elif "procedure" in system:
            answer = {"procedure": None}
        elif "lesson" in system:
            answer = {"learning": None}
        else:
            answer = {"importance": 0.8}
        return ChatResponse(message=ChatMessage(role="assistant", content=json.dumps(answer)))

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        return self._answer(messages, kwargs)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        return self._answer(messages, kwargs)


def _facts(speaker: str, text: str) -> list[dict[str, Any]]:
    found = re.search(r"\bI live in (\w+)", text)
    if not found:
        return []
    return [{"subject": speaker, "predicate": "lives in", "object": found.group(1), "confidence": 0.9}]
