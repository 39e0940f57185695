"""The framework-neutral conversation helpers: chat turns in, rendered memories out."""

from __future__ import annotations

import doctest
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ucma_core.conversation
from ucma_core import ANY, Episode, Fact, Memory, MemoryConfig, MemoryType, RetrievalResult
from ucma_core.conversation import (
    ChatTurn,
    aobserve_turns,
    observe_turns,
    render_memories,
    turn_items,
)
from ucma_core.conversation import render as render_module
from ucma_core.conversation import tools as tools_module
from ucma_core.conversation import turns as turns_module
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_core.tokens import TiktokenCounter

MARCH_4 = datetime(2026, 3, 4, 10, 0, tzinfo=timezone.utc).timestamp()
DAY = 86_400.0


def test_public_names() -> None:
    assert ucma_core.conversation.__all__ == [
        "DEFAULT_HEADER",
        "DEFAULT_K",
        "DEFAULT_MAX_TOKENS",
        "DEFAULT_ROLES",
        "MEMORY_TOOL_NAMES",
        "RECALL_NAME",
        "UNSET",
        "Cadence",
        "ChatTurn",
        "Conversation",
        "RecallOptions",
        "Recalled",
        "Target",
        "ToolSpec",
        "Unset",
        "aobserve_turns",
        "bind",
        "clean_text",
        "memory_tools",
        "observe_turns",
        "recall_query",
        "render_memories",
        "stated_user",
        "stated_view",
        "turn_items",
    ]


@pytest.mark.parametrize("module", [turns_module, render_module, tools_module])
def test_docstring_examples_run(module: object) -> None:
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert attempted > 0
    assert failed == 0


# ---------------------------------------------------------------------- ChatTurn (pure)
@pytest.mark.parametrize(
    ("given_role", "role"),
    [
        ("user", "user"),
        ("Assistant", "assistant"),
        ("human", "user"),
        ("ai", "assistant"),
        ("chatbot", "assistant"),
        ("model", "assistant"),
        ("developer", "system"),
        ("function", "tool"),
        ("tool", "tool"),
        ("system", "system"),
    ],
)
def test_roles_and_framework_aliases(given_role: str, role: str) -> None:
    assert ChatTurn(given_role, "hi").role == role


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"role": "robot", "text": "x"}, "unknown chat role 'robot'"),
        ({"role": 3, "text": "x"}, "role must be a str"),
        ({"role": "user", "text": [{"type": "text", "text": "hi"}]}, "text must be a str, not list"),
        ({"role": "user", "text": None}, "text must be a str, not NoneType"),
        ({"role": "user", "text": "x", "message_id": ""}, "message_id must be a non-blank str"),
        ({"role": "user", "text": "x", "message_id": 7}, "message_id must be a non-blank str"),
        ({"role": "user", "text": "x", "name": " "}, "name must be a non-blank str"),
        ({"role": "user", "text": "x", "timestamp": float("nan")}, "timestamp must be epoch seconds"),
        ({"role": "user", "text": "x", "timestamp": "2026-03-04"}, "timestamp must be epoch seconds"),
        ({"role": "user", "text": "x", "timestamp": True}, "timestamp must be epoch seconds"),
        ({"role": "user", "text": "x", "metadata": {"when": datetime.now()}}, "metadata is not usable"),
        ({"role": "user", "text": "x", "metadata": [1]}, "metadata is not usable"),
    ],
)
def test_bad_turns_get_clear_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        ChatTurn(**kwargs)  # type: ignore[arg-type]


def test_turn_is_frozen_and_hashable() -> None:
    turn = ChatTurn("user", "hi", metadata={"lang": "en"})
    assert hash(turn) == hash(ChatTurn("user", "hi", metadata={"lang": "pt"}))
    assert turn != ChatTurn("user", "hi", metadata={"lang": "pt"})
    with pytest.raises(AttributeError):
        turn.text = "bye"  # type: ignore[misc]
    assert ChatTurn("user", "hi", metadata=None).metadata == {}  # type: ignore[arg-type]


def test_turn_items_layout() -> None:
    turns = [
        ChatTurn("user", "I'm Ana.", message_id="m1", timestamp=MARCH_4),
        ChatTurn("assistant", "", message_id="m2"),  # an empty assistant message around a tool call
        ChatTurn("tool", "22°C in Lisbon", message_id="m3", name="weather", metadata={"call": "c1"}),
        ChatTurn("user", "  \n ", message_id="m4"),
        ChatTurn("user", "Call me Annie", name="Annie", metadata={"role": "ignored", "lang": "en"}),
        ChatTurn("assistant", "Sure."),
    ]
    items, positions = turn_items(turns, user_id="ana")
    assert positions == [0, 2, 4, 5]
    assert items[0] == {
        "content": "I'm Ana.",
        "source": "user",
        "timestamp": MARCH_4,
        "metadata": {"role": "user", "message_id": "m1"},
        "participants": ["ana"],
        "key": "m1",
        "keep": True,
    }
    assert items[1]["source"] == "tool"
    assert items[1]["participants"] == ["weather"]
    assert items[1]["metadata"] == {
        "role": "tool",
        "message_id": "m3",
        "name": "weather",
        "extra": {"call": "c1"},
    }
    # the caller's metadata is nested, so its "role" cannot overwrite ours
    assert items[2]["metadata"] == {
        "role": "user",
        "name": "Annie",
        "extra": {"role": "ignored", "lang": "en"},
    }
    assert items[2]["participants"] == ["Annie"]
    assert items[2]["key"] is None
    assert items[3]["participants"] is None
    assert turn_items(turns, keep=False)[0][0]["keep"] is False
    assert turn_items(turns)[0][0]["participants"] is None  # no name, no user


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ("hello", "turns must be a list of ChatTurn"),
        (ChatTurn("user", "hi"), "turns must be a list of ChatTurn"),
        ({"role": "user"}, "turns must be a list of ChatTurn"),
        (3, "turns must be a list of ChatTurn"),
        ([ChatTurn("user", "hi"), {"role": "user", "text": "x"}], "turn 1 must be a ChatTurn, not dict"),
    ],
)
def test_turn_items_bad_input(turns: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        turn_items(turns)  # type: ignore[arg-type]


def test_turn_items_keep_must_be_bool() -> None:
    with pytest.raises(InvalidInputError, match="keep must be a bool"):
        turn_items([], keep="yes")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- render (pure)
def _result(
    content: str,
    *,
    ts: float = MARCH_4,
    memory_type: MemoryType = MemoryType.EPISODIC,
    source: str = "user",
    participants: tuple[str, ...] = (),
    n: int = 0,
) -> RetrievalResult:
    common: dict[str, object] = {
        "id": f"m{n}",
        "memory_type": memory_type,
        "content": content,
        "timestamp": ts,
        "user_id": "ana",
        "agent_id": None,
        "session_id": None,
        "importance": 0.5,
        "source": source,
        "tags": (),
        "metadata": {},
        "source_ids": (),
        "stability": 1.0,
        "last_access": ts,
        "access_count": 0,
    }
    record = (
        Episode(**common, participants=participants)  # type: ignore[arg-type]
        if memory_type is MemoryType.EPISODIC
        else Fact(**common, subject="Ana", predicate="lives in", object="Lisbon")  # type: ignore[arg-type]
    )
    return RetrievalResult(
        id=record.id,
        memory_type=memory_type,
        content=content,
        score=1.0 - n / 100,
        timestamp=ts,
        metadata={},
        source_ids=(),
        relevance=0.5,
        importance=0.5,
        recency=0.5,
        retention=0.5,
        record=record,
    )


class WordCounter:
    """One token per whitespace-separated word: easy to reason about in tests."""

    def count(self, text: str) -> int:
        return len(text.split())


def test_render_lines_dates_and_labels() -> None:
    results = [
        _result("I moved to Lisbon\nin May.", participants=("Ana",), n=0),
        _result("Ana lives in Lisbon", memory_type=MemoryType.SEMANTIC, ts=MARCH_4 - DAY, n=1),
        _result("Noted, Lisbon it is.", source="assistant", ts=MARCH_4 - 20 * DAY, n=2),
        _result("Ana talked about moving.", source="consolidation", ts=MARCH_4 - 400 * DAY, n=3),
        _result("Ana was born.", ts=MARCH_4 - 3000 * DAY, n=4),
        _result("Next week.", ts=MARCH_4 + 7 * DAY, n=5),
    ]
    text = render_memories(results, now=MARCH_4 + 3600, token_counter=WordCounter(), max_tokens=10_000)
    assert text.splitlines() == [
        "Relevant memories:",
        "- [2026-03-04, today] (user: Ana) I moved to Lisbon in May.",
        "- [2026-03-03, yesterday] (fact) Ana lives in Lisbon",
        "- [2026-02-12, 2 weeks ago] (assistant) Noted, Lisbon it is.",
        "- [2025-01-28, 13 months ago] (summary) Ana talked about moving.",
        "- [2017-12-16, 8 years ago] (user) Ana was born.",
        "- [2026-03-11] (user) Next week.",
    ]
    plain = render_memories(results[:1], header="", token_counter=WordCounter())
    assert plain == "- [2026-03-04] (user: Ana) I moved to Lisbon in May."
    tokyo = render_memories([_result("late", ts=MARCH_4 + 15 * 3600)], timezone="Asia/Tokyo", header="")
    assert tokyo.startswith("- [2026-03-05]")


def test_render_empty_is_empty() -> None:
    assert render_memories([]) == ""
    assert render_memories([_result("something to say")], max_tokens=3) == ""  # only the header fits


def test_render_shortens_the_line_that_does_not_fit() -> None:
    long = " ".join(f"word{i}" for i in range(200))
    results = [_result("short one", n=0), _result(long, n=1), _result("never shown", n=2)]
    text = render_memories(results, max_tokens=40, token_counter=WordCounter())
    lines = text.splitlines()
    assert lines[1] == "- [2026-03-04] (user) short one"
    assert lines[2].startswith("- [2026-03-04] (user) word0 word1") and lines[2].endswith("…")
    assert len(lines) == 3
    assert WordCounter().count(text) <= 40


@settings(max_examples=150, deadline=None)
@given(
    contents=st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=12),
    budget=st.integers(min_value=1, max_value=400),
    header=st.sampled_from(["Relevant memories:", "", "Things you remember about the user:"]),
)
def test_render_respects_the_token_budget(contents: list[str], budget: int, header: str) -> None:
    counter = TiktokenCounter()
    results = [_result(c, n=i) for i, c in enumerate(contents)]
    text = render_memories(results, max_tokens=budget, header=header, token_counter=counter)
    assert counter.count(text) <= budget
    if text:
        full = render_memories(results, max_tokens=1_000_000, header=header, token_counter=counter)
        lines, full_lines = text.splitlines(), full.splitlines()
        # a prefix of the full rendering, the last line possibly shortened
        assert lines[:-1] == full_lines[: len(lines) - 1]
        assert lines[-1] == full_lines[len(lines) - 1] or lines[-1].endswith("…")
        assert not header or lines[0] == header


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be a positive int"),
        ({"max_tokens": True}, "max_tokens must be a positive int"),
        ({"max_tokens": "100"}, "max_tokens must be a positive int"),
        ({"header": None}, "header must be a str"),
        ({"timezone": "Mars/Olympus"}, "unknown time zone"),
        ({"timezone": 3}, "timezone must be an IANA name"),
        ({"now": "tomorrow"}, "now must be a datetime or epoch seconds"),
    ],
)
def test_render_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        render_memories([_result("x")], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ("some text", "results must be a list of RetrievalResult"),
        ([{"content": "x"}], "result 0 must be a RetrievalResult, not dict"),
    ],
)
def test_render_bad_results(results: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        render_memories(results)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- observe_turns (real Memory)
CONVERSATION = [
    ChatTurn("user", "Hi, I'm Ana and I moved to Lisbon in May.", message_id="m1"),
    ChatTurn("assistant", "", message_id="m2"),
    ChatTurn("tool", "Lisbon: 22°C, sunny", message_id="m3", name="weather", metadata={"call_id": "c1"}),
    ChatTurn("assistant", "ok", message_id="m4"),
    ChatTurn("user", "thanks", name="Ana", message_id="m5"),
]


def test_observe_turns_stores_each_turn_with_source_and_metadata(mem: Memory) -> None:
    ids = observe_turns(mem, CONVERSATION, user_id="ana", session_id="s1")
    assert ids[1] is None
    assert all(isinstance(i, str) for i in ids[:1] + ids[2:])
    assert len(set(ids) - {None}) == 4
    user_turn = mem.get(ids[0])  # type: ignore[arg-type]
    assert isinstance(user_turn, Episode)
    assert (user_turn.source, user_turn.user_id, user_turn.session_id) == ("user", "ana", "s1")
    assert user_turn.participants == ("ana",)
    assert user_turn.metadata == {"role": "user", "message_id": "m1"}
    tool_turn = mem.get(ids[2])  # type: ignore[arg-type]
    assert isinstance(tool_turn, Episode)
    assert tool_turn.source == "tool" and tool_turn.participants == ("weather",)
    assert tool_turn.metadata["extra"] == {"call_id": "c1"}
    # "ok" and "thanks" are unimportant, but a chat history keeps every turn
    assert mem.get(ids[3]).content == "ok"  # type: ignore[arg-type, union-attr]
    assert mem.get(ids[4]).participants == ("Ana",)  # type: ignore[arg-type, union-attr]


def test_observing_again_stores_nothing_new(mem: Memory) -> None:
    first = observe_turns(mem, CONVERSATION, user_id="ana")
    before = mem.stats()["memories"]
    again = observe_turns(mem, [*CONVERSATION, ChatTurn("user", "new one", message_id="m6")], user_id="ana")
    assert again[:5] == first
    assert mem.stats()["memories"] == before + 1


def test_dedupe_survives_close_and_reopen(folder: Path, clock: Any) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        first = observe_turns(mem, CONVERSATION, user_id="ana", session_id="s1")
        count = mem.stats()["memories"]
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        assert observe_turns(mem, CONVERSATION, user_id="ana", session_id="s1") == first
        assert mem.stats()["memories"] == count
        # the same message id of another user is another memory
        other = observe_turns(mem, CONVERSATION[:1], user_id="ben", session_id="s1")
        assert other[0] not in first
        assert mem.stats()["memories"] == count + 1


def test_turns_without_message_id_are_stored_each_time(mem: Memory) -> None:
    turn = [ChatTurn("user", "I like green tea.")]
    assert observe_turns(mem, turn, user_id="ana") != observe_turns(mem, turn, user_id="ana")


def test_same_message_id_twice_in_one_batch(mem: Memory) -> None:
    turn = ChatTurn("user", "I like green tea.", message_id="dup")
    ids = observe_turns(mem, [turn, turn], user_id="ana")
    assert ids[0] == ids[1] and ids[0] is not None
    assert mem.stats()["memories"] == 1


def test_keep_false_lets_the_threshold_drop_small_talk(folder: Path, clock: Any) -> None:
    config = MemoryConfig(importance_threshold=0.99)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        assert observe_turns(mem, [ChatTurn("user", "ok")], user_id="ana", keep=False) == [None]
        assert observe_turns(mem, [ChatTurn("user", "ok")], user_id="ana")[0] is not None


def test_a_refused_turn_stores_nothing(folder: Path, clock: Any) -> None:
    config = MemoryConfig(max_content_chars=50)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        turns = [ChatTurn("user", "fine"), ChatTurn("user", "x" * 51), ChatTurn("user", "also fine")]
        with pytest.raises(InvalidInputError, match="over the limit"):
            observe_turns(mem, turns, user_id="ana")
        assert mem.stats()["memories"] == 0


def test_timestamps_and_history_round_trip(mem: Memory, clock: Any) -> None:
    turns = [
        ChatTurn("user", "first", message_id="a", timestamp=clock.now - 60),
        ChatTurn("assistant", "second", message_id="b", name="bot", timestamp=clock.now - 30),
        ChatTurn("tool", "third", message_id="c", name="search", metadata={"call_id": "x"}),
        ChatTurn("user", "fourth", timestamp=datetime.fromtimestamp(clock.now + 1, tz=timezone.utc)),
    ]
    observe_turns(mem, turns, user_id="ana", session_id="s1")
    back = [ChatTurn.from_record(e) for e in mem.history(user_id="ana", session_id="s1")]
    assert [(t.role, t.text, t.message_id, t.name, t.metadata) for t in back] == [
        ("user", "first", "a", None, {}),
        ("assistant", "second", "b", "bot", {}),
        ("tool", "third", "c", "search", {"call_id": "x"}),
        ("user", "fourth", None, None, {}),
    ]
    assert back[0].timestamp == clock.now - 60
    assert back[3].timestamp == clock.now + 1


def test_from_record_of_a_memory_not_stored_as_a_turn(mem: Memory) -> None:
    memory_id = mem.observe(
        "sensor says 40°C", source="environment", user_id="ana", importance=0.9, metadata={"unit": "C"}
    )
    turn = ChatTurn.from_record(mem.get(memory_id))  # type: ignore[arg-type]
    assert (turn.role, turn.text, turn.metadata) == ("tool", "sensor says 40°C", {"unit": "C"})
    with pytest.raises(InvalidInputError, match="record must be a MemoryRecord"):
        ChatTurn.from_record({"content": "x"})  # type: ignore[arg-type]


def test_observe_turns_through_a_bound_view(mem: Memory) -> None:
    view = mem.scope(user_id="ana", session_id="s2")
    ids = observe_turns(view, CONVERSATION[:1])
    record = mem.get(ids[0])  # type: ignore[arg-type]
    assert record is not None and (record.user_id, record.session_id) == ("ana", "s2")
    assert observe_turns(view, CONVERSATION[:1], user_id="ana") == ids  # equal scope: fine
    with pytest.raises(InvalidInputError, match="contradicts the view's user_id='ana'"):
        observe_turns(view, CONVERSATION[:1], user_id="ben")
    with pytest.raises(InvalidInputError, match="contradicts the view's agent_id=None"):
        observe_turns(view, CONVERSATION[:1], agent_id="bot")
    # another session only moves where the turns go
    (moved,) = observe_turns(view, [ChatTurn("user", "in s3")], session_id="s3")
    assert mem.get(moved).session_id == "s3"  # type: ignore[arg-type, union-attr]


@pytest.mark.parametrize("scope", [{"user_id": ANY}, {"session_id": ANY}])
def test_any_scope_is_refused(mem: Memory, scope: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError, match="ANY is not allowed"):
        observe_turns(mem, CONVERSATION, **scope)  # type: ignore[arg-type]


def test_target_must_be_a_memory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="target must be a Memory"):
        observe_turns(str(tmp_path), CONVERSATION)  # type: ignore[arg-type]


def test_nothing_to_observe(mem: Memory) -> None:
    assert observe_turns(mem, [], user_id="ana") == []
    assert observe_turns(mem, [ChatTurn("assistant", "")], user_id="ana") == [None]
    assert mem.stats()["memories"] == 0


async def test_async_twin_gives_the_same_result(tmp_path: Path, clock: Any) -> None:
    with Memory(tmp_path / "sync", embedder=HashingEmbedder(), clock=clock) as mem:
        sync_ids = observe_turns(mem, CONVERSATION, user_id="ana", session_id="s1")
        sync_records = [mem.get(i) if i else None for i in sync_ids]
    async with Memory(tmp_path / "async", embedder=HashingEmbedder(), clock=clock) as amem:
        async_ids = await aobserve_turns(amem, CONVERSATION, user_id="ana", session_id="s1")
        assert await aobserve_turns(amem, CONVERSATION, user_id="ana", session_id="s1") == async_ids
        async_records = [amem.get(i) if i else None for i in async_ids]
    assert [i is None for i in sync_ids] == [i is None for i in async_ids]
    assert [(r.content, r.source, r.metadata) if r else None for r in sync_records] == [
        (r.content, r.source, r.metadata) if r else None for r in async_records
    ]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(CONVERSATION), max_size=8))
def test_observing_any_mix_twice_is_idempotent(mem: Memory, turns: list[ChatTurn]) -> None:
    first = observe_turns(mem, turns, user_id="prop")
    count = mem.stats()["memories"]
    assert observe_turns(mem, turns, user_id="prop") == first
    assert mem.stats()["memories"] == count


def test_render_real_recall(mem: Memory, clock: Any) -> None:
    observe_turns(mem, CONVERSATION, user_id="ana")
    clock.advance(days=3)
    hits = mem.remember("where did Ana move?", user_id="ana", k=3)
    text = render_memories(hits, now=mem.now(), max_tokens=60)
    assert text.startswith("Relevant memories:\n- [")
    assert "3 days ago] (user: ana) Hi, I'm Ana and I moved to Lisbon in May." in text
    assert TiktokenCounter().count(text) <= 60
