"""The prebuilt memory agent, offline with ScriptedChatModel and with another LangChain chat model."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models import GenericFakeChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import tool

from ucma_core import Memory
from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore, create_memory_agent
from ucma_langchain.testing import ScriptedChatModel


def cfg(thread: str, user: str = "ana") -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def test_agent_saves_then_recalls_in_a_new_thread(
    lg_mem: Memory, saver: UCMACheckpointer, words: Any
) -> None:
    model = ScriptedChatModel()
    agent = create_memory_agent(
        lg_mem, model, checkpointer=saver, store=UCMAStore(lg_mem), token_counter=words
    )

    out = agent.invoke({"messages": [("user", "Remember that my cat is called Miso")]}, cfg("t1"))
    call, result, reply = out["messages"][1:]
    assert isinstance(call, AIMessage) and call.tool_calls[0]["name"] == "save_memory"
    assert isinstance(result, ToolMessage) and result.status == "success"
    assert reply.text == "Saved."
    saved = lg_mem.get(json.loads(result.text)["id"])
    assert saved is not None and saved.content == "my cat is called Miso" and saved.user_id == "ana"
    assert saved.session_id == "t1"

    saver.flush()
    out = agent.invoke({"messages": [("user", "What is my cat called?")]}, cfg("t2"))
    assert "Miso" in out["messages"][-1].text
    system = model.prompts[-1][0]
    assert isinstance(system, SystemMessage) and "my cat is called Miso" in system.text
    assert "Miso" in out["memories"]


def test_memory_tools_are_bound_to_the_runs_user(lg_mem: Memory, words: Any) -> None:
    agent = create_memory_agent(lg_mem, token_counter=words)
    agent.invoke({"messages": [("user", "Remember that my password hint is blue")]}, cfg("a", "ana"))
    out = agent.invoke({"messages": [("user", "What is my password hint?")]}, cfg("b", "bo"))
    assert "blue" not in out["memories"] and "blue" not in out["messages"][-1].text
    assert [r.record.user_id for r in lg_mem.remember("password hint blue", user_id="ana")][:1] == ["ana"]


async def test_agent_async(lg_mem: Memory, saver: UCMACheckpointer, words: Any) -> None:
    agent = create_memory_agent(lg_mem, checkpointer=saver, token_counter=words)
    await agent.ainvoke({"messages": [("user", "Remember that the meeting is on Friday")]}, cfg("t1"))
    await saver.aflush()
    out = await agent.ainvoke({"messages": [("user", "When is the meeting?")]}, cfg("t2"))
    assert "Friday" in out["messages"][-1].text


class ToolCallingFake(GenericFakeChatModel):
    """langchain-core's fake chat model, made tool-capable (it ignores the tools)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        return self


def test_any_langchain_chat_model_and_extra_tools(lg_mem: Memory, words: Any) -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    replies: Iterator[AIMessage] = iter(
        [
            AIMessage("", tool_calls=[{"name": "shout", "args": {"text": "hi"}, "id": "c1"}]),
            AIMessage("", tool_calls=[{"name": "missing_tool", "args": {}, "id": "c2"}]),
            AIMessage("all done"),
        ]
    )
    agent = create_memory_agent(lg_mem, ToolCallingFake(messages=replies), tools=[shout], token_counter=words)
    out = agent.invoke({"messages": [HumanMessage("please shout hi")]}, cfg("t"))
    tool_results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_results[0].text == "HI"
    assert tool_results[1].status == "error" and "missing_tool" in tool_results[1].text
    assert out["messages"][-1].text == "all done"
