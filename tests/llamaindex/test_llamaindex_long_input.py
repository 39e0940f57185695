"""Ordinary chat input through a LlamaIndex chat engine with UCMAChatMemory: a pasted
150,000-character log, a NUL and a lone surrogate get an answer and are stored; too-deep
metadata gets a clear error or is left out, never a RecursionError."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM

from ucma_core import Memory
from ucma_core.conversation import ChatTurn
from ucma_core.errors import InvalidInputError
from ucma_llamaindex import UCMAChatMemory
from ucma_llamaindex.messages import to_messages


def pasted_log(chars: int) -> str:
    line = "2026-03-04 10:00:00 INFO worker step ok\n"
    return (line * (chars // len(line) + 1))[: chars - 30] + "\nERROR deploy failed zqlog42"


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def engine(mem: Memory) -> SimpleChatEngine:
    llm = MockLLM(max_tokens=8)
    return SimpleChatEngine.from_defaults(llm=llm, memory=UCMAChatMemory(mem, user_id="ana", session_id="s"))


def test_a_150000_character_message_gets_an_answer(keep_all: Memory) -> None:
    log = pasted_log(150_000)
    chat = engine(keep_all)
    answer = chat.chat(f"Why did this fail?\n{log}")
    assert str(answer).strip()
    turns = ChatTurn.from_records(keep_all.history(user_id="ana", session_id="s"))
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].text == f"Why did this fail?\n{log}"
    assert len(keep_all.history(user_id="ana", session_id="s")) == 3  # the log in two parts
    assert any("zqlog42" in h.content for h in keep_all.remember("deploy failed zqlog42", user_id="ana"))
    assert keep_all.skipped() == []
    messages = to_messages(keep_all.history(user_id="ana", session_id="s"))  # the parts read back whole
    assert [m.content for m in messages][:1] == [f"Why did this fail?\n{log}"] and len(messages) == 2


def test_nul_and_lone_surrogate_messages_get_answers(keep_all: Memory) -> None:
    chat = engine(keep_all)
    assert str(chat.chat("my code is 12\x0034")).strip()
    assert str(chat.chat("a broken emoji \ud83d in Porto")).strip()
    users = [e.content for e in keep_all.history(user_id="ana", session_id="s") if e.source == "user"]
    assert users == ["my code is 12 34", "a broken emoji \ufffd in Porto"]


def test_too_deep_metadata(keep_all: Memory) -> None:
    memory = UCMAChatMemory(keep_all, user_id="ana", session_id="s")
    memory.put(ChatMessage(role="user", content="kept", additional_kwargs={"deep": nested(100_000), "ok": 1}))
    (episode,) = keep_all.history(user_id="ana", session_id="s")
    assert episode.content == "kept"
    assert episode.metadata["extra"]["llamaindex"]["additional_kwargs"] == {"ok": 1}  # too deep: left out
    call = ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs=nested(5000))
    with pytest.raises(InvalidInputError, match="a tool call is nested more than"):
        memory.put(ChatMessage(role="assistant", blocks=[call]))
    assert len(keep_all.history(user_id="ana", session_id="s")) == 1
