"""No poison at the seam: ordinary chat text is never refused, over-long turns are stored in
parts and read back whole, one refused turn never blocks the others and is recorded (without
its text) where ``verify``, ``stats`` and ``ucma info`` show it, and too-deep values get a
clear error instead of a ``RecursionError``."""

from __future__ import annotations

import doctest
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._cli_run import ucma
from ucma_core import Memory, MemoryConfig
from ucma_core.conversation import ChatTurn, aobserve_turns, clean_text, observe_turns
from ucma_core.conversation import parts as parts_module
from ucma_core.conversation.parts import split_text
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_core.storage import skipped as skipped_module
from ucma_core.storage.skipped import Skipped
from ucma_core.validation import check_depth

LIMIT = 200  # a small max_content_chars, so that hypothesis reaches over-long turns cheaply
MS_TIMESTAMP = 1_750_000_000_000  # milliseconds: a ChatTurn takes it, the memory refuses it


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def pasted_log(chars: int) -> str:
    lines = [
        f"2026-03-04 10:{n // 60 % 60:02d}:{n % 60:02d} INFO worker-{n % 7} step {n} ok" for n in range(5000)
    ]
    text = "\n".join(lines)
    while len(text) < chars:
        text += "\n" + text
    return text[: chars - 40] + "\nERROR the deploy failed: zqmarker123"


@pytest.fixture
def small(folder: Path, clock: Any) -> Iterator[Memory]:
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(max_content_chars=LIMIT)
    ) as m:
        yield m


@pytest.mark.parametrize("module", [parts_module, skipped_module])
def test_docstring_examples_run(module: object) -> None:
    failed, attempted = doctest.testmod(module)  # type: ignore[arg-type]
    assert attempted > 0 and failed == 0


# ---------------------------------------------------------------------- splitting (pure)
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=8, max_value=400))
def test_split_text_parts_fit_are_never_blank_and_join_back(text: str, limit: int) -> None:
    if not text.strip():
        return
    parts, notes = split_text(text, limit)
    assert all(len(p) <= limit and p.strip() for p in parts)
    if len(text) <= limit:
        assert parts == [text] and notes == []
    else:
        joined = "".join(parts)
        assert joined == joined.rstrip() and text.startswith(joined[: limit // 4])
        if joined == text.rstrip():  # nothing shortened: the parts are exactly the text
            assert not any("runs" in n for n in notes)


def test_split_text_cuts_at_line_ends() -> None:
    log = pasted_log(150_000)
    parts, notes = split_text(log, 100_000)
    assert len(parts) == 2 and "".join(parts) == log
    assert parts[0].endswith("\n")
    assert notes == ["stored in 2 parts of at most 100,000 characters"]


# ---------------------------------------------------------------------- never refused
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.text(
                alphabet=st.sampled_from(["a", " ", "\x00", "\ud800", "\udfff", "\n", ".", "é"]), max_size=900
            ),
            st.text(min_size=LIMIT + 1, max_size=3 * LIMIT),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_observe_turns_never_refuses_text_and_parts_come_back_whole(small: Memory, texts: list[str]) -> None:
    session = uuid.uuid4().hex
    turns = [ChatTurn("user", t, message_id=f"{session}-{n}") for n, t in enumerate(texts)]
    ids = observe_turns(small, turns, user_id="prop", session_id=session)
    expected = []
    for text, memory_id in zip(texts, ids, strict=True):
        cleaned, _ = clean_text(text)
        assert (memory_id is None) == (not cleaned.strip())
        if memory_id is not None:
            expected.append("".join(split_text(cleaned, LIMIT)[0]))
    back = ChatTurn.from_records(small.history(user_id="prop", session_id=session))
    assert [t.text for t in back] == expected
    assert observe_turns(small, turns, user_id="prop", session_id=session) == ids  # idempotent
    assert small.skipped() == []


def test_a_pasted_log_a_nul_and_a_lone_surrogate_are_all_stored(mem: Memory) -> None:
    log = pasted_log(150_000)
    observe_turns(mem, [ChatTurn("user", "Ben's first note about tea")], user_id="ben", session_id="b")
    batch = [
        ChatTurn("user", "Here is the log of last night's deploy:", message_id="m1"),
        ChatTurn("user", log, message_id="m2"),
        ChatTurn("user", "my name is Ana\x00 and I like figs", message_id="m3"),
        ChatTurn("user", "broken emoji \ud83d here, I live in Porto", message_id="m4"),
        ChatTurn("assistant", "Noted, thank you.", message_id="m5"),
    ]
    ids = observe_turns(mem, batch, user_id="ana", session_id="a")
    observe_turns(mem, [ChatTurn("user", "Ben's second note about coffee")], user_id="ben", session_id="b")
    assert all(ids) and len(set(ids)) == 5
    assert mem.skipped() == []
    # the log in two parts, the first keyed by the message id itself
    first = mem.get_by_key("m2", user_id="ana")
    assert first is not None and first.id == ids[1]
    assert first.metadata["parts"] == 2 and first.metadata["part"] == 1 and first.metadata["part_of"] == "m2"
    assert "stored in 2 parts of at most 100,000 characters" in first.metadata["cleaned"]
    assert mem.get(ids[2]).content == "my name is Ana  and I like figs"  # type: ignore[union-attr]
    assert mem.get(ids[2]).metadata["cleaned"] == ["1 NUL character replaced by a space"]  # type: ignore[union-attr]
    assert mem.get(ids[3]).content == "broken emoji \ufffd here, I live in Porto"  # type: ignore[union-attr]
    # every part findable; history lists the parts in order, from_records joins them
    hits = mem.remember("deploy failed zqmarker123", user_id="ana", k=3)
    assert any("zqmarker123" in h.content for h in hits)
    history = mem.history(user_id="ana", session_id="a")
    assert len(history) == 6
    turns = ChatTurn.from_records(history)
    assert [t.message_id for t in turns] == ["m1", "m2", "m3", "m4", "m5"]
    assert turns[1].text == log and turns[1].role == "user"
    assert [e.content for e in mem.history(user_id="ben", session_id="b")] == [
        "Ben's first note about tea",
        "Ben's second note about coffee",
    ]
    # observed again (as a mirror catching up would): nothing new
    count = mem.stats()["memories"]
    assert observe_turns(mem, batch, user_id="ana", session_id="a") == ids
    assert mem.stats()["memories"] == count


def test_parts_are_not_duplicated_after_a_restart_with_another_limit(folder: Path, clock: Any) -> None:
    turn = ChatTurn("user", pasted_log(1000), message_id="log")
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(max_content_chars=400)
    ) as m:
        (first,) = observe_turns(m, [turn], user_id="ana", session_id="s")
        count = m.stats()["memories"]
    for limit in (400, 150, 5000):
        config = MemoryConfig(max_content_chars=limit)
        with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as m:
            assert observe_turns(m, [turn], user_id="ana", session_id="s") == [first]
            assert m.stats()["memories"] == count


def test_history_cut_inside_a_turn_joins_the_parts_it_has(small: Memory) -> None:
    text = "word " * 100 + "end of the story."
    observe_turns(small, [ChatTurn("user", text), ChatTurn("assistant", "ok")], user_id="ana", session_id="s")
    parts = small.history(user_id="ana", session_id="s")
    assert len(parts) == 4 and parts[-1].content == "ok"  # three parts and the answer
    tail = ChatTurn.from_records(small.history(user_id="ana", session_id="s", limit=2))
    assert [t.text for t in tail] == [parts[-2].content, "ok"]
    assert ChatTurn.from_records(parts)[0].text == text.rstrip()


def test_keep_false_still_keeps_every_part(folder: Path, clock: Any) -> None:
    config = MemoryConfig(max_content_chars=50, importance_threshold=0.99)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as m:
        ids = observe_turns(
            m, [ChatTurn("user", "ok " * 40), ChatTurn("user", "ok")], user_id="a", keep=False
        )
        assert ids[0] is not None and ids[1] is None
        assert m.stats()["memories"] == 3


async def test_async_twin_stores_the_same(tmp_path: Path, clock: Any) -> None:
    batch = [ChatTurn("user", "x\x00" * 150), ChatTurn("user", "fine", timestamp=MS_TIMESTAMP)]
    config = MemoryConfig(max_content_chars=LIMIT)
    with Memory(tmp_path / "s", embedder=HashingEmbedder(), clock=clock, config=config) as m:
        sync = observe_turns(m, batch, user_id="ana", session_id="s")
        sync_texts = [e.content for e in m.history(user_id="ana", session_id="s")]
    async with Memory(tmp_path / "a", embedder=HashingEmbedder(), clock=clock, config=config) as m:
        got = await aobserve_turns(m, batch, user_id="ana", session_id="s")
        assert [e.content for e in m.history(user_id="ana", session_id="s")] == sync_texts
        assert len(await m.askipped()) == 1
    assert [i is None for i in got] == [i is None for i in sync] == [False, True]


# ---------------------------------------------------------------------- isolation and the record
def test_a_refused_turn_is_skipped_recorded_and_blocks_nothing(folder: Path, clock: Any) -> None:
    mem = Memory(folder, embedder=HashingEmbedder(), clock=clock)
    batch = [
        ChatTurn("user", "before the bad one", message_id="ok1"),
        ChatTurn("user", "zqsecret text of the refused turn", message_id="bad1", timestamp=MS_TIMESTAMP),
        ChatTurn("assistant", "after the bad one", message_id="ok2"),
    ]
    ids = observe_turns(mem, batch, user_id="ana", session_id="s")
    assert ids[0] is not None and ids[1] is None and ids[2] is not None
    assert [e.content for e in mem.history(user_id="ana", session_id="s")] == [
        "before the bad one",
        "after the bad one",
    ]
    (entry,) = mem.skipped()
    assert isinstance(entry, Skipped)
    assert (entry.user_id, entry.session_id, entry.message_id, entry.role, entry.chars) == (
        "ana",
        "s",
        "bad1",
        "user",
        len(batch[1].text),
    )
    assert "milliseconds" in entry.reason and entry.at == clock.now
    report = mem.verify()
    assert report.ok and report.skipped == (entry,)
    assert mem.stats()["skipped"] == 1
    mem.close()
    data = (folder / "skipped.jsonl").read_bytes()
    assert b"zqsecret" not in data and b"bad1" in data
    info = ucma("info", folder, "--embedder", "hashing")
    assert info.code == 0 and "skipped    1 message(s) not stored" in info.out, info.out + info.err
    as_json = ucma("info", folder, "--embedder", "hashing", "--json").json()
    assert as_json["skipped"][0]["message_id"] == "bad1"
    checked = ucma("verify", folder, "--embedder", "hashing")
    assert checked.code == 0 and "1 chat turn(s) were not stored" in checked.out, checked.out
    assert (
        ucma("verify", folder, "--embedder", "hashing", "--json").json()["checks"]["skipped"][0]["role"]
        == "user"
    )
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as again:  # durable
        assert again.skipped() == [entry]
        assert again.skipped(user_id="ben") == []
        # observing the batch again (a mirror catching up) stores nothing twice, and the
        # refusal of a message with an id is recorded once; one without an id each time
        assert observe_turns(again, batch, user_id="ana", session_id="s") == ids
        assert again.skipped(user_id="ana") == [entry]
        anonymous = ChatTurn("user", "no id", timestamp=MS_TIMESTAMP)
        observe_turns(again, [anonymous, anonymous], user_id="ana", session_id="s")
        assert len(again.skipped(user_id="ana")) == 3


def test_forget_user_and_forget_session_remove_the_records(mem: Memory) -> None:
    bad = ChatTurn("user", "x", timestamp=MS_TIMESTAMP)
    observe_turns(mem, [bad], user_id="ana", session_id="s1")
    observe_turns(mem, [bad], user_id="ana", session_id="s2")
    observe_turns(mem, [bad], user_id="ben", session_id="s1")
    assert len(mem.skipped()) == 3
    mem.forget_session("s2", user_id="ana")
    assert [(e.user_id, e.session_id) for e in mem.skipped()] == [("ana", "s1"), ("ben", "s1")]
    mem.forget_user("ana")
    assert [e.user_id for e in mem.skipped()] == ["ben"]
    assert b'"ana"' not in (mem.path / "skipped.jsonl").read_bytes()


def test_a_torn_last_line_is_ignored_and_the_next_record_kept(folder: Path, clock: Any) -> None:
    bad = ChatTurn("user", "x", timestamp=MS_TIMESTAMP)
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        observe_turns(m, [bad], user_id="ana")
    with open(folder / "skipped.jsonl", "ab") as fh:
        fh.write(b'{"at": 1, "user_id": "an')  # a crash while appending
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        assert len(m.skipped()) == 1
        observe_turns(m, [bad], user_id="ben")
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        assert [e.user_id for e in m.skipped()] == ["ana", "ben"]


def test_a_storage_error_still_raises(mem: Memory) -> None:
    view = mem.scope(user_id="ana")
    mem.close()
    with pytest.raises(ClosedMemoryError):
        observe_turns(view, [ChatTurn("user", "hello")])


def test_record_skipped_takes_records(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="Skipped records"):
        mem.record_skipped(["text"])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="list of Skipped"):
        mem.record_skipped(Skipped(0.0, None, None, None, None, None, 0, "r"))  # type: ignore[arg-type]


def test_callers_mistakes_still_raise(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="list of ChatTurn"):
        observe_turns(mem, "hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="keep must be a bool"):
        observe_turns(mem, [ChatTurn("user", "x")], keep="yes")  # type: ignore[arg-type]
    assert mem.stats()["memories"] == 0 and mem.skipped() == []


# ---------------------------------------------------------------------- too-deep values
def test_check_depth_never_recurses() -> None:
    deep: list[Any] = []
    for _ in range(200_000):
        deep = [deep]
    with pytest.raises(InvalidInputError, match="nested more than 5 levels deep"):
        check_depth({"v": deep}, 5, "a value")
    circular: dict[str, Any] = {}
    circular["self"] = circular
    with pytest.raises(InvalidInputError, match="nested more than"):
        check_depth(circular, 10)


def test_turn_metadata_depth(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="metadata is not usable: metadata is nested more than 31"):
        ChatTurn("user", "x", metadata=nested(100_000))
    # the deepest a turn accepts is what the memory stores (one level down, under "extra")
    ids = observe_turns(mem, [ChatTurn("user", "deep but fine", metadata=nested(30))], user_id="ana")
    assert ids[0] is not None and mem.skipped() == []
