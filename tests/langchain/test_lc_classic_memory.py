"""UCMAMemory in classic chains (langchain_classic): recalled memories plus the recent turns."""

from __future__ import annotations

import pytest
from langchain_classic.chains import ConversationChain, LLMChain
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.prompts import PromptTemplate

from tests.langchain.lc_fakes import ScriptedChatModel, prompt_text
from ucma_core import Memory
from ucma_core.errors import InvalidInputError
from ucma_langchain import UCMAMemory

pytestmark = pytest.mark.filterwarnings(
    "ignore::langchain_core._api.deprecation.LangChainDeprecationWarning"  # the classic chains are deprecated
)

PROMPT = PromptTemplate.from_template("{memories}\n\nConversation:\n{history}\nHuman: {input}\nAI:")


def test_variables_and_save_context(keep_all: Memory) -> None:
    keep_all.observe("Ana's sister Carla is a nurse in Porto.", user_id="ana", session_id="earlier")
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="now")
    assert memory.memory_variables == ["history", "memories"]
    memory.save_context({"input": "Hi, it's Ana."}, {"output": "Hello Ana!"})
    variables = memory.load_memory_variables({"input": "What does my sister do?"})
    assert variables["history"] == "Human: Hi, it's Ana.\nAI: Hello Ana!"
    assert "Carla is a nurse in Porto" in variables["memories"]
    assert "Hello Ana!" not in variables["memories"]  # already among the recent turns
    stored = keep_all.history(user_id="ana", session_id="now")
    assert [(e.source, e.content) for e in stored] == [("user", "Hi, it's Ana."), ("assistant", "Hello Ana!")]


def test_messages_and_one_variable(keep_all: Memory) -> None:
    keep_all.observe("Ana's sister Carla is a nurse in Porto.", user_id="ana", session_id="earlier")
    memory = UCMAMemory(
        memory=keep_all, user_id="ana", session_id="now", recall_key=None, return_messages=True
    )
    memory.save_context({"question": "Hi"}, {"answer": "Hello"})
    history = memory.load_memory_variables({"question": "my sister Carla?"})["history"]
    assert isinstance(history[0], SystemMessage) and "nurse in Porto" in history[0].content
    assert isinstance(history[1], HumanMessage) and history[1].content == "Hi"
    assert memory.memory_variables == ["history"]


def test_clear_forgets_the_session(keep_all: Memory) -> None:
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="now")
    memory.save_context({"input": "remember the milk"}, {"output": "ok"})
    keep_all.observe("another session", user_id="ana", session_id="other")
    memory.clear()
    assert keep_all.history(user_id="ana", session_id="now") == []
    assert len(keep_all.history(user_id="ana", session_id="other")) == 1


async def test_async(keep_all: Memory) -> None:
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="now")
    await memory.asave_context({"input": "I play the guitar"}, {"output": "Cool!"})
    variables = await memory.aload_memory_variables({"input": "guitar"})
    assert variables["history"].startswith("Human: I play the guitar")
    await memory.aclear()
    assert keep_all.history(user_id="ana", session_id="now") == []


def test_bad_inputs(keep_all: Memory) -> None:
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="now")
    with pytest.raises(ValueError, match="One input key expected"):
        memory.load_memory_variables({"a": "x", "b": "y"})
    with pytest.raises(InvalidInputError, match="must be a str"):
        memory.load_memory_variables({"input": 42})
    with pytest.raises(InvalidInputError, match="set output_key"):
        memory.save_context({"input": "x"}, {"a": "1", "b": "2"})
    with pytest.raises(InvalidInputError, match="no output to save"):
        memory.save_context({"input": "x"}, {})
    assert keep_all.history(user_id="ana", session_id="now") == []
    memory.save_context({"input": "  "}, {"output": "an answer to nothing"})  # empty turns are skipped
    assert [e.content for e in keep_all.history(user_id="ana", session_id="now")] == ["an answer to nothing"]


def test_llm_chain(keep_all: Memory) -> None:
    model = ScriptedChatModel(script=["Noted.", "Carla is a nurse."])
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="s")
    chain = LLMChain(llm=model, prompt=PROMPT, memory=memory)
    chain.invoke({"input": "My sister Carla works as a nurse in Porto."})
    out = chain.invoke({"input": "What does Carla do?"})
    assert out["text"] == "Carla is a nurse."
    assert "Human: My sister Carla works as a nurse in Porto." in prompt_text(model.prompts[1])


def test_conversation_chain_default_prompt(keep_all: Memory) -> None:
    keep_all.observe("Ana's cat is called Miso.", user_id="ana", session_id="last-week")
    model = ScriptedChatModel(script=["Your cat is Miso."])
    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="today", recall_key=None)
    chain = ConversationChain(llm=model, memory=memory)
    assert chain.invoke({"input": "What's my cat's name?"})["response"] == "Your cat is Miso."
    assert "Ana's cat is called Miso." in prompt_text(model.prompts[0])


async def test_loading_without_inputs_gives_the_history_as_the_buffer_memories_do(keep_all: Memory) -> None:
    from langchain_classic.memory import CombinedMemory, ConversationBufferMemory, ReadOnlySharedMemory

    memory = UCMAMemory(memory=keep_all, user_id="ana", session_id="s1")
    memory.save_context({"input": "My cat is called Miso."}, {"output": "Lovely name!"})
    expected = {"history": "Human: My cat is called Miso.\nAI: Lovely name!", "memories": ""}
    assert memory.load_memory_variables({}) == expected
    assert await memory.aload_memory_variables({}) == expected
    assert ReadOnlySharedMemory(memory=memory).load_memory_variables({}) == expected
    buffer = ConversationBufferMemory(memory_key="buffer", input_key="input")
    combined = CombinedMemory(memories=[memory, buffer])
    assert combined.load_memory_variables({})["history"] == expected["history"]
