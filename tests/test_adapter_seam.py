"""Every adapter wraps the same conversation loop: for one memory and one question the recall
block is the same in LangChain (middleware, classic memory), LangGraph (recall node) and
LlamaIndex (chat memory, memory block); and every adapter refuses a run without a user
unless it was told there is none (``user_id=None``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, SystemMessage
from llama_index.core.base.llms.types import ChatMessage

from tests.langchain.lc_fakes import ScriptedChatModel
from ucma_core import Memory
from ucma_core.conversation import ChatTurn, Conversation
from ucma_core.errors import UserNotStatedError
from ucma_langchain import UCMAMemory, UCMAMiddleware
from ucma_langchain.langgraph import recall_node
from ucma_llamaindex import UCMAChatMemory, UCMAMemoryBlock

QUESTION = "Where does my sister Carla live, and what does she do?"


def seed(mem: Memory, user: str | None = "ana") -> None:
    for text in (
        "My sister Carla lives in Porto and works as a nurse.",
        "My sister Carla lives in Porto and works as a nurse.",  # said twice: shown once
        "Carla's daughter is called Inês.",
        "Thanks!",  # content-free: never shown
    ):
        mem.observe(text, user_id=user, session_id="last-week", keep=True)
    mem.observe("Noted.", user_id=user, session_id="last-week", source="assistant", keep=True)
    mem.assert_fact("Carla", "works as", "nurse", user_id=user)
    mem.observe("Ben's sister lives in Lisbon.", user_id="ben", session_id="b", keep=True)


def via_middleware(mem: Memory, **scope: Any) -> str:
    model = ScriptedChatModel(script=["ok"])
    create_agent(model, middleware=[UCMAMiddleware(mem, **scope)]).invoke(
        {"messages": [HumanMessage(QUESTION)]}, context={"session_id": "now"}
    )
    system = model.prompts[0][0]
    return system.text if isinstance(system, SystemMessage) else ""


def via_classic_memory(mem: Memory, **scope: Any) -> str:
    memory = UCMAMemory(memory=mem, session_id="now", **scope)
    return str(memory.load_memory_variables({"input": QUESTION})["memories"])


def via_recall_node(mem: Memory, **scope: Any) -> str:
    node = recall_node(mem, output="state", **scope)
    return str(
        node({"messages": [HumanMessage(QUESTION)]}, {"configurable": {"thread_id": "now"}})["memories"]
    )


def via_chat_memory(mem: Memory, **scope: Any) -> str:
    first = UCMAChatMemory(mem, session_id="now", **scope).get(QUESTION)[0]
    return str(first.content) if first.role.value == "system" else ""


async def via_memory_block(mem: Memory, **scope: Any) -> str:
    block = UCMAMemoryBlock(mem, **scope)
    return str(await block.aget(messages=[ChatMessage(role="user", content=QUESTION)]))


SYNC: dict[str, Callable[..., str]] = {
    "UCMAMiddleware": via_middleware,
    "UCMAMemory": via_classic_memory,
    "RecallNode": via_recall_node,
    "UCMAChatMemory": via_chat_memory,
}


async def test_the_recall_block_is_the_same_in_every_adapter(keep_all: Memory) -> None:
    seed(keep_all)
    expected = Conversation(keep_all, user_id="ana").recall([ChatTurn("user", QUESTION)]).block
    lines = expected.splitlines()
    assert lines[0] == "Relevant memories:"
    assert sum("lives in Porto" in line for line in lines) == 1
    assert "Carla works as nurse" in expected and "Inês" in expected
    assert not any(word in expected for word in ("Thanks", "Noted", "Lisbon"))
    blocks = {name: via(keep_all, user_id="ana") for name, via in SYNC.items()}
    blocks["UCMAMemoryBlock"] = await via_memory_block(keep_all, user_id="ana")
    assert blocks == dict.fromkeys(blocks, expected)


async def test_a_run_without_a_user_is_refused_in_every_adapter(keep_all: Memory) -> None:
    seed(keep_all)
    for name, via in SYNC.items():
        with pytest.raises(UserNotStatedError, match=f"{name}.*user_id=None") as caught:
            via(keep_all)
        assert "user_id=..." in str(caught.value)
    with pytest.raises(UserNotStatedError, match="UCMAMemoryBlock"):
        await via_memory_block(keep_all)


async def test_an_app_without_users_says_so_with_user_id_none(keep_all: Memory) -> None:
    seed(keep_all, user=None)
    for via in SYNC.values():
        block = via(keep_all, user_id=None)
        assert "lives in Porto" in block and "Lisbon" not in block
    assert "lives in Porto" in await via_memory_block(keep_all, user_id=None)
    # and those memories are not any named user's
    assert "Porto" not in via_middleware(keep_all, user_id="ana")


def test_the_adapters_that_write_for_one_user_need_it_stated(keep_all: Memory) -> None:
    from ucma_langchain import UCMAChatMessageHistory, create_memory_tools
    from ucma_llamaindex import UCMAToolSpec

    makers = {
        "create_memory_tools": lambda **kw: create_memory_tools(keep_all, **kw),
        "UCMAChatMessageHistory": lambda **kw: UCMAChatMessageHistory(keep_all, "s1", **kw),
        "UCMAToolSpec": lambda **kw: UCMAToolSpec(keep_all, **kw),
    }
    for name, make in makers.items():
        with pytest.raises(UserNotStatedError, match=f"{name}.*user_id=None"):
            make()
        make(user_id=None)  # an app without users says so
        make(user_id="ana")
    history = UCMAChatMessageHistory(keep_all.scope(user_id="ben"), "s2")  # a view states its user
    history.add_user_message("I am Ben.")
    assert [r.user_id for r in keep_all.history(session_id="s2", user_id="ben")] == ["ben"]
