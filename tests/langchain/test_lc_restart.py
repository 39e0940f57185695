"""The same conversation, continued in a new process: each LangChain integration recalls it.

Each test runs two child processes on one memory folder: the first says something,
the second (a fresh interpreter) asks about it, and the prompt its model received
must contain what the first one said.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

PRELUDE = """
import json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
from langchain_core.messages import HumanMessage
from tests.langchain.lc_fakes import ScriptedChatModel, answer_from_last_tool, call_tool, prompt_text
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
folder, step = sys.argv[1], sys.argv[2]
"""

AGENT = """
from langchain.agents import create_agent
from ucma_langchain import UCMAMiddleware, create_memory_tools
with Memory(folder, embedder=HashingEmbedder()) as mem:
    if step == "1":
        model = ScriptedChatModel(script=["Noted: Carla, a nurse, lives in Porto."])
        question = "My sister Carla lives in Porto and works as a nurse."
    else:
        recall = call_tool("recall_memory", {"query": "sister Carla"})
        model = ScriptedChatModel(script=[recall, answer_from_last_tool])
        question = "Where does my sister live?"
    agent = create_agent(
        model, tools=create_memory_tools(mem, user_id="ana"), middleware=[UCMAMiddleware(mem, user_id="ana")]
    )
    answer = agent.invoke({"messages": [HumanMessage(question)]})["messages"][-1].text
print(json.dumps({"prompts": [prompt_text(p) for p in model.prompts], "answer": answer}))
"""

CLASSIC = """
from langchain_classic.chains import LLMChain
from langchain_core.prompts import PromptTemplate
from ucma_langchain import UCMAMemory
prompt = PromptTemplate.from_template("{memories}\\n\\n{history}\\nHuman: {input}\\nAI:")
session, question, reply = {
    "1": ("monday", "My sister Carla lives in Porto and works as a nurse.", "Noted."),
    "2": ("tuesday", "What does my sister do?", "She is a nurse."),
}[step]
with Memory(folder, embedder=HashingEmbedder()) as mem:
    model = ScriptedChatModel(script=[reply])
    memory = UCMAMemory(memory=mem, user_id="ana", session_id=session)
    chain = LLMChain(llm=model, prompt=prompt, memory=memory)
    answer = chain.invoke({"input": question})["text"]
print(json.dumps({"prompts": [prompt_text(p) for p in model.prompts], "answer": answer}))
"""

HISTORY = """
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory
from ucma_langchain import UCMAChatMessageHistory
prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
question, reply = {
    "1": ("My sister Carla lives in Porto and works as a nurse.", "Noted."),
    "2": ("Where does my sister live?", "In Porto."),
}[step]
with Memory(folder, embedder=HashingEmbedder()) as mem:
    model = ScriptedChatModel(script=[reply])
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: UCMAChatMessageHistory(mem, session_id, user_id="ana"),
        input_messages_key="question",
        history_messages_key="history",
    )
    answer = chain.invoke({"question": question}, {"configurable": {"session_id": "chat-1"}}).text
print(json.dumps({"prompts": [prompt_text(p) for p in model.prompts], "answer": answer}))
"""


def run(script: str, folder: Path, step: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + script, str(folder), step],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_agent_with_middleware_recalls_in_a_new_process(tmp_path: Path) -> None:
    first = run(AGENT, tmp_path / "memory", "1")
    assert "Relevant memories" not in first["prompts"][0]  # nothing to recall yet
    second = run(AGENT, tmp_path / "memory", "2")
    system, _, question = second["prompts"][0].partition("\nhuman: ")
    assert system.startswith("system: Relevant memories:")
    assert "My sister Carla lives in Porto and works as a nurse." in system
    assert question == "Where does my sister live?"
    assert "Porto" in second["answer"]  # the model also recalled it with the tool


@pytest.mark.slow
def test_classic_chain_with_ucma_memory_recalls_in_a_new_process(tmp_path: Path) -> None:
    run(CLASSIC, tmp_path / "memory", "1")
    second = run(CLASSIC, tmp_path / "memory", "2")
    assert "My sister Carla lives in Porto and works as a nurse." in second["prompts"][0]
    assert second["answer"] == "She is a nurse."


@pytest.mark.slow
def test_runnable_with_message_history_continues_in_a_new_process(tmp_path: Path) -> None:
    run(HISTORY, tmp_path / "memory", "1")
    second = run(HISTORY, tmp_path / "memory", "2")
    assert second["prompts"][0].splitlines() == [
        "human: My sister Carla lives in Porto and works as a nurse.",
        "ai: Noted.",
        "human: Where does my sister live?",
    ]
