"""The conversation loop every adapter wraps: one query rule, one "already shown" rule, one
treatment of tool turns, one consolidation cadence (ucma_core.conversation.loop / shown / cadence)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ucma_core import Memory
from ucma_core.conversation import (
    DEFAULT_HEADER,
    Cadence,
    ChatTurn,
    Conversation,
    RecallOptions,
)
from ucma_core.errors import InvalidInputError

SISTER = "My sister Carla lives in Porto and works as a nurse."


def talk(mem: Memory, **options: Any) -> Conversation:
    return Conversation(mem, RecallOptions(**options), user_id="ana", session_id="today")


def seed(mem: Memory) -> None:
    mem.observe(SISTER, user_id="ana", session_id="last-week", keep=True)
    mem.observe("Ben's dog is called Rex.", user_id="ben", session_id="b", keep=True)


def lines(block: str) -> list[str]:
    return block.splitlines()[1:]


# ---------------------------------------------------------------------- recall
def test_recall_renders_the_users_memories_under_one_header(keep_all: Memory) -> None:
    seed(keep_all)
    recalled = talk(keep_all).recall([ChatTurn("user", "Where does my sister live?")])
    assert recalled.query == "Where does my sister live?"
    assert recalled.block.splitlines()[0] == DEFAULT_HEADER
    assert [r.content for r in recalled.results] == [SISTER]
    assert SISTER in recalled.block and "Rex" not in recalled.block


def test_the_query_is_the_latest_user_turn_and_a_long_one_is_clipped(keep_all: Memory) -> None:
    seed(keep_all)
    conversation = talk(keep_all)
    turns = [ChatTurn("user", "Where does my sister live?"), ChatTurn("assistant", "Which one?")]
    assert conversation.recall(turns).query == "Where does my sister live?"
    pasted = "Where does my sister live? " + "log line " * 20_000  # 180,000 characters
    recalled = conversation.recall([ChatTurn("user", pasted)])
    assert len(recalled.query) <= 2003 and recalled.query.startswith("Where does my sister live?")
    assert SISTER in recalled.block
    # a placeholder (an image with no words) and no user turn at all recall nothing
    image = ChatTurn("user", "[image]", metadata={"placeholder": True})
    assert conversation.recall([ChatTurn("user", "Where does my sister live?"), image]).block == ""
    assert conversation.recall([ChatTurn("assistant", "Hello")]).block == ""
    assert conversation.recall(query="sister Porto").results[0].content == SISTER


def test_what_the_window_shows_is_not_recalled_again(keep_all: Memory) -> None:
    seed(keep_all)
    conversation = talk(keep_all)
    question = ChatTurn("user", "Where does my sister live? In Porto?")
    # by memory id, by message id and by text
    own = keep_all.list_memories(user_id="ana", session_id="last-week")[0]
    assert [r.id for r in conversation.recall([question]).results] == [own.id]
    assert conversation.recall([question], shown=[own.id]).results == []
    keep_all.forget(own.id, user_id="ana")
    said = ChatTurn("user", SISTER, message_id="m-1")
    conversation.observe([said])
    assert conversation.recall([said, question]).results == []
    assert conversation.recall([question]).results[0].content == SISTER
    retold = ChatTurn("user", "my sister carla lives in porto, and works as a nurse")
    assert conversation.recall([retold, question]).results == []


def test_one_fact_three_times_is_shown_once(keep_all: Memory) -> None:
    for session in ("a", "b", "c"):
        keep_all.observe(SISTER, user_id="ana", session_id=session, keep=True)
    recalled = talk(keep_all).recall([ChatTurn("user", "Where does my sister live?")])
    assert lines(recalled.block) and sum(SISTER in line for line in lines(recalled.block)) == 1


@pytest.mark.parametrize(
    "said", ["Noted.", "Good luck!", "Thanks a lot!", "Hi there", "ok 👍", "Have a nice day!"]
)
def test_content_free_turns_are_not_recalled(keep_all: Memory, said: str) -> None:
    keep_all.observe(said, user_id="ana", session_id="old", source="assistant", keep=True)
    keep_all.observe("I said thanks to Carla in Porto.", user_id="ana", session_id="old", keep=True)
    recalled = talk(keep_all).recall(query=f"{said} Carla Porto")
    assert [r.content for r in recalled.results] == ["I said thanks to Carla in Porto."]


def test_a_pleasantry_naming_a_person_is_not_recalled(keep_all: Memory) -> None:
    keep_all.observe("Good luck, Sam!", user_id="ana", session_id="old", participants=["Ana"], keep=True)
    keep_all.observe(
        "Sam sold his boat in Porto.", user_id="ana", session_id="old", participants=["Sam"], keep=True
    )
    recalled = talk(keep_all).recall(query="Good luck Sam boat")
    assert [r.content for r in recalled.results] == ["Sam sold his boat in Porto."]


def test_copies_of_recall_output_are_not_recalled(keep_all: Memory) -> None:
    seed(keep_all)
    conversation = talk(keep_all)
    block = conversation.recall(query="sister").block
    keep_all.observe(block, user_id="ana", session_id="old", source="tool", keep=True)
    keep_all.observe(
        "- [2026-03-04, today] (fact) Carla lives in Porto", user_id="ana", session_id="old", keep=True
    )
    assert [r.content for r in conversation.recall(query="sister Carla Porto").results] == [SISTER]


def test_k_and_the_budget_bound_the_block(keep_all: Memory) -> None:
    for n in range(12):
        keep_all.observe(f"Carla visited museum number {n} in Porto.", user_id="ana", keep=True)
    assert len(talk(keep_all, k=3).recall(query="Carla museum Porto").results) == 3
    small = talk(keep_all, max_tokens=30).recall(query="Carla museum Porto").block
    assert 0 < keep_all.token_counter.count(small) <= 30


def test_options_are_checked() -> None:
    for bad, message in (
        ({"k": 0}, "k must be"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"header": None}, "header"),
        ({"memory_types": "fact"}, "memory_types"),
        ({"include_generated": "yes"}, "include_generated"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            RecallOptions(**bad)


async def test_async_recall_matches_the_sync_one(keep_all: Memory) -> None:
    seed(keep_all)
    conversation = talk(keep_all)
    turns = [ChatTurn("user", "Where does my sister live?")]
    assert (await conversation.arecall(turns)).block == conversation.recall(turns).block


# ---------------------------------------------------------------------- observe
def tool_round(tool: str) -> list[ChatTurn]:
    return [
        ChatTurn("user", "What's the weather in Porto?", message_id=f"{tool}-u"),
        ChatTurn(
            "assistant",
            f"Called tool {tool}",
            message_id=f"{tool}-call",
            metadata={"placeholder": True, "tool_calls": [{"name": tool, "id": "c1"}]},
        ),
        ChatTurn("tool", "Sunny.", message_id=f"{tool}-result", metadata={"tool_call_id": "c1"}),
        ChatTurn("assistant", "It is sunny in Porto.", message_id=f"{tool}-a"),
        ChatTurn("system", "Be brief.", message_id=f"{tool}-s"),
    ]


def stored(mem: Memory, session: str) -> list[tuple[str, str]]:
    return [(e.source, e.content) for e in mem.history(user_id="ana", session_id=session)]


def test_observe_stores_what_the_user_and_the_assistant_said(keep_all: Memory) -> None:
    ids = talk(keep_all).observe(tool_round("weather"))
    assert [i is not None for i in ids] == [True, False, False, True, False]
    assert stored(keep_all, "today") == [
        ("user", "What's the weather in Porto?"),
        ("assistant", "It is sunny in Porto."),
    ]
    assert talk(keep_all).observe(tool_round("weather")) == ids  # once each, by message id


def test_tool_turns_are_stored_when_asked_but_memory_tools_never(keep_all: Memory) -> None:
    roles = ("user", "assistant", "tool")
    weather = Conversation(keep_all, roles=roles, user_id="ana", session_id="weather")
    weather.observe(tool_round("weather"))
    assert [source for source, _ in stored(keep_all, "weather")] == ["user", "assistant", "tool", "assistant"]
    recall = Conversation(keep_all, roles=roles, user_id="ana", session_id="recall")
    recall.observe(tool_round("recall_memory"))
    assert [source for source, _ in stored(keep_all, "recall")] == ["user", "assistant"]
    named = ChatTurn("tool", "[]", name="facts_about")
    shown = ChatTurn("system", "Relevant memories: …", name="ucma_recall")
    assert recall.observe([named, shown]) == [None, None]
    with pytest.raises(InvalidInputError, match="unknown role"):
        Conversation(keep_all, roles=("user", "robot"), user_id="ana")


async def test_async_observe_matches_the_sync_one(keep_all: Memory) -> None:
    sync = Conversation(keep_all, user_id="ana", session_id="sync")
    asyn = Conversation(keep_all, user_id="ana", session_id="async")
    turns = [ChatTurn(t.role, t.text, metadata=t.metadata) for t in tool_round("weather")]
    assert [i is None for i in sync.observe(turns)] == [i is None for i in await asyn.aobserve(turns)]
    assert stored(keep_all, "sync") == stored(keep_all, "async")


# ---------------------------------------------------------------------- cadence
def test_a_cycle_every_n_turns(keep_all: Memory) -> None:
    conversation = Conversation(keep_all, user_id="ana", cadence=Cadence(3))
    reports = [conversation.after_turn() for _ in range(6)]
    assert [r is not None for r in reports] == [False, False, True, False, False, True]
    assert Conversation(keep_all, user_id="ana").after_turn() is None  # no cadence: never
    assert Cadence(None).tick(keep_all) is None
    with pytest.raises(InvalidInputError, match="consolidate_every"):
        Cadence(0)


async def test_async_cadence(keep_all: Memory) -> None:
    conversation = Conversation(keep_all, user_id="ana", cadence=Cadence(2))
    assert await conversation.aafter_turn() is None
    assert await conversation.aafter_turn() is not None


def test_background_cycles_run_one_at_a_time_per_memory(
    keep_all: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def slow(*, stop: threading.Event | None = None, **_: Any) -> str:
        runs.append(1)
        started.set()
        release.wait(10)
        return "done"

    monkeypatch.setattr(keep_all, "consolidate", slow)
    first, second = Cadence(1, background=True), Cadence(1, background=True)
    began = time.perf_counter()
    assert first.tick(keep_all) is None  # started, not waited for
    assert started.wait(5) and time.perf_counter() - began < 5
    second.tick(keep_all)  # another cadence on the same memory: no second cycle
    first.tick(keep_all)
    assert Cadence(1).run(keep_all) is None  # nor an inline one
    release.set()
    assert first.wait(timeout=5) and second.wait(timeout=5)
    assert runs == [1] and str(first.last_report) == "done" and second.last_report is None
    first.tick(keep_all)  # the cycle is over: the next due turn runs one
    assert first.wait(timeout=5) and runs == [1, 1]


def test_the_memorys_own_consolidation_thread_is_respected(keep_all: Memory) -> None:
    keep_all.start_consolidation(interval_seconds=3600)
    try:
        assert Cadence(1).tick(keep_all) is None
        assert Cadence(1, background=True).start(keep_all) is None
    finally:
        keep_all.stop_consolidation()


def test_close_stops_a_running_cycle(keep_all: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    started = threading.Event()

    def slow(*, stop: threading.Event | None = None, **_: Any) -> str:
        assert stop is not None
        started.set()
        stop.wait(30)
        return "stopped"

    monkeypatch.setattr(keep_all, "consolidate", slow)
    cadence = Cadence(1, background=True, wait_seconds=0.05)
    cadence.tick(keep_all)
    assert started.wait(5)
    began = time.perf_counter()
    cadence.close(timeout=5)
    assert time.perf_counter() - began < 5 and str(cadence.last_report) == "stopped"
