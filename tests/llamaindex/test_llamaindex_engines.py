"""UCMA inside LlamaIndex's chat engines, query engine and workflow agents, offline.

``MockLLM`` answers with the prompt it was given, so each answer shows what the
model saw: the recalled memories must be in it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.chat_engine import (
    CondensePlusContextChatEngine,
    ContextChatEngine,
    SimpleChatEngine,
)
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llamaindex_fakes import ScriptedFunctionLLM, texts

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_llamaindex import UCMAChatMemory, UCMARetriever, UCMAToolSpec

ROOT = Path(__file__).parents[2]


@pytest.fixture
def told(keep_all: Memory) -> Memory:
    """A memory where Ana said, in an earlier session, where her sister lives."""
    UCMAChatMemory(keep_all, user_id="ana", session_id="monday").put_messages(
        [
            ChatMessage(role="user", content="My sister Marta lives in Porto."),
            ChatMessage(role="assistant", content="Good to know!"),
        ]
    )
    return keep_all


def test_simple_chat_engine(told: Memory) -> None:
    chat = UCMAChatMemory(told, user_id="ana", session_id="tuesday")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat, system_prompt="You are kind.")
    answer = str(engine.chat("Where does Marta live?"))
    assert "My sister Marta lives in Porto." in answer and "You are kind." in answer
    assert [m.role for m in chat.get_all()] == [MessageRole.USER, MessageRole.ASSISTANT]
    engine.reset()
    assert chat.get_all() == []


async def test_simple_chat_engine_async_and_streaming(told: Memory) -> None:
    chat = UCMAChatMemory(told, user_id="ana", session_id="tuesday")
    engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=chat)
    assert "Porto" in str(await engine.achat("Where does Marta live?"))
    stream = engine.stream_chat("Where in Portugal is Marta?")
    assert "Porto" in "".join(stream.response_gen)
    assert texts(chat.get_all())[0::2] == ["Where does Marta live?", "Where in Portugal is Marta?"]


def test_context_chat_engine(told: Memory) -> None:
    chat = UCMAChatMemory(told, user_id="ana", session_id="tuesday")
    engine = ContextChatEngine.from_defaults(
        retriever=UCMARetriever(told, user_id="ana", k=3), memory=chat, llm=MockLLM()
    )
    response = engine.chat("Where does Marta live?")
    assert "Porto" in str(response)
    assert any("Marta lives in Porto" in n.node.get_content() for n in response.source_nodes)
    assert texts(chat.get_all())[0] == "Where does Marta live?"


def test_condense_plus_context_chat_engine(told: Memory) -> None:
    chat = UCMAChatMemory(told, user_id="ana", session_id="tuesday")
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=UCMARetriever(told, user_id="ana", k=3), memory=chat, llm=MockLLM()
    )
    first = engine.chat("Where does Marta live?")
    assert "Porto" in str(first)
    second = engine.chat("And what did I tell you about her?")  # now condensed with the history
    assert "Marta" in str(second)
    assert len(chat.get_all()) == 4


async def test_condense_plus_context_chat_engine_async(told: Memory) -> None:
    chat = UCMAChatMemory(told, user_id="ana", session_id="tuesday")
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=UCMARetriever(told, user_id="ana", k=3), memory=chat, llm=MockLLM()
    )
    assert "Porto" in str(await engine.achat("Where does Marta live?"))


def test_retriever_query_engine(told: Memory) -> None:
    engine = RetrieverQueryEngine.from_args(UCMARetriever(told, user_id="ana", k=2), llm=MockLLM())
    response = engine.query("Where does Marta live?")
    assert "Marta lives in Porto" in str(response)
    assert response.source_nodes[0].node.metadata["memory_type"] == "episodic"


async def test_function_agent_saves_and_recalls_with_tools_and_chat_memory(keep_all: Memory) -> None:
    tools = UCMAToolSpec(keep_all, user_id="ana").to_tool_list()
    llm = ScriptedFunctionLLM([("save_memory", {"content": "Ana's favourite colour is green."}), "Saved."])
    chat = UCMAChatMemory(keep_all, user_id="ana", session_id="one")
    agent = FunctionAgent(tools=[*tools], llm=llm, system_prompt="Remember things.")
    result = await agent.run(user_msg="My favourite colour is green, remember it.", memory=chat)
    assert str(result) == "Saved."
    stored = chat.get_all()
    # the save_memory call and its result are UCMA's own tool traffic: not stored again
    assert [(m.role, m.content) for m in stored] == [
        (MessageRole.USER, "My favourite colour is green, remember it."),
        (MessageRole.ASSISTANT, "Saved."),
    ]

    def answer(messages: Sequence[ChatMessage]) -> str:
        hits = json.loads(messages[-1].content or "[]")  # the tool's result, as JSON
        return "I found: " + " | ".join(hit["content"] for hit in hits)

    llm2 = ScriptedFunctionLLM([("recall_memory", {"query": "favourite colour"}), answer])
    later = UCMAChatMemory(keep_all, user_id="ana", session_id="two")
    result = await FunctionAgent(tools=[*tools], llm=llm2).run(
        user_msg="What's my favourite colour?", memory=later
    )
    assert "Ana's favourite colour is green." in str(result)
    # the chat memory recalled the earlier session for the model as well
    first_call = llm2.seen[0]
    assert first_call[0].role == MessageRole.SYSTEM and "favourite colour is green" in (
        first_call[0].content or ""
    )


async def test_react_agent_uses_the_tools_and_the_chat_memory(keep_all: Memory) -> None:
    tools = UCMAToolSpec(keep_all, user_id="ana")
    tools.save_memory(content="Ana has a cat called Miso.")
    llm = ScriptedFunctionLLM(
        [
            'Thought: I should check my memory.\nAction: recall_memory\nAction Input: {"query": "cat"}',
            "Thought: I can answer without using any more tools.\nAnswer: Your cat is Miso.",
        ]
    )
    chat = UCMAChatMemory(keep_all, user_id="ana", session_id="react")
    result = await ReActAgent(tools=[*tools.to_tool_list()], llm=llm).run(
        user_msg="What is my cat called?", memory=chat
    )
    assert str(result) == "Your cat is Miso."
    assert "Ana has a cat called Miso." in (llm.seen[1][-1].content or "")  # the observation
    assert texts(chat.get_all())[0] == "What is my cat called?"


@pytest.mark.slow
def test_a_second_process_recalls_what_the_first_was_told(folder: Path) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(folder, embedder=HashingEmbedder(), config=config) as mem:
        engine = SimpleChatEngine.from_defaults(
            llm=MockLLM(), memory=UCMAChatMemory(mem, user_id="ana", session_id="monday")
        )
        engine.chat("My sister Marta lives in Porto.")
    code = textwrap.dedent(
        f"""
        from llama_index.core.chat_engine import SimpleChatEngine
        from llama_index.core.llms import MockLLM
        from ucma_core import Memory
        from ucma_core.embedders import HashingEmbedder
        from ucma_llamaindex import UCMAChatMemory

        with Memory({str(folder)!r}, embedder=HashingEmbedder()) as mem:
            memory = UCMAChatMemory(mem, user_id="ana", session_id="tuesday")
            engine = SimpleChatEngine.from_defaults(llm=MockLLM(), memory=memory)
            print(engine.chat("Where does Marta live?"))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=90, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "My sister Marta lives in Porto." in out.stdout
