"""Turns found with their conversational context, neighbouring turns for a reader, second hops.

Every test goes through ``Memory.remember`` on the hashing embedder.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

NOW = 1_750_000_000.0
DAY = 86_400.0


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        clock=lambda: NOW,
        config=MemoryConfig(importance_threshold=0.0),
    ) as m:
        yield m


def _session(mem: Memory, session: str, start: float, turns: list[tuple[str, str]]) -> list[str]:
    ids = []
    for i, (source, text) in enumerate(turns):
        memory_id = mem.observe(text, source=source, session_id=session, timestamp=start + 60 * i)
        assert memory_id is not None
        ids.append(memory_id)
    return ids


def _filler(mem: Memory) -> None:
    for day in range(1, 7):
        _session(
            mem,
            f"filler-{day}",
            NOW - day * 10 * DAY,
            [
                ("user", f"the bus was late again on day {day}"),
                ("assistant", "That sounds annoying. Want to try another route?"),
                ("user", "Sure, I'll try that next week."),
            ],
        )


def test_a_reply_is_found_through_the_turn_it_answers(mem: Memory) -> None:
    _filler(mem)  # the same reply, answering other things
    _, _, reply = _session(
        mem,
        "wrist",
        NOW - 30 * DAY,
        [
            ("user", "my wrist still aches after climbing, even on easy routes"),
            ("assistant", "For climbing wrists, maybe try slow wrist curls with a light dumbbell?"),
            ("user", "Sure, I'll try that next week."),
        ],
    )
    hits = mem.remember("what did I agree to try for my aching climbing wrist?", k=4)
    assert reply in [h.id for h in hits[:3]]
    found = next(h for h in hits if h.id == reply)
    assert found.signals["context"] > 0.5


def test_an_answer_to_a_question_carries_the_question(mem: Memory) -> None:
    _filler(mem)
    _, answer, _ = _session(
        mem,
        "dinner",
        NOW - 12 * DAY,
        [
            ("user", "Mira, what was that Georgian restaurant you liked called?"),
            ("user", "Oh, Supra! On Mill Street. Get the cheese bread, trust me."),
            ("assistant", "Sounds delicious."),
        ],
    )
    hits = mem.remember("which Georgian restaurant did Mira recommend?", k=3)
    assert answer in [h.id for h in hits]


def test_generated_turns_get_no_context(mem: Memory) -> None:
    fact, ack = _session(
        mem,
        "facts",
        NOW - DAY,
        [("user", "the locker code at the climbing gym is 4471"), ("assistant", "Noted, anything else?")],
    )
    hits = mem.remember("climbing gym locker code", k=2)
    assert hits[0].id == fact
    assert all("context" not in h.signals for h in hits if h.id == ack)


def test_results_carry_their_neighbouring_turns_when_asked(tmp_path: Path) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    wide = dataclasses.replace(config, fusion=dataclasses.replace(config.fusion, context_turns=1))
    for cfg, expected in ((config, 0), (wide, 2)):
        with Memory(
            tmp_path / f"m{expected}", embedder=HashingEmbedder(), clock=lambda: NOW, config=cfg
        ) as mem:
            before, middle, after = _session(
                mem,
                "s",
                NOW - DAY,
                [
                    ("user", "we should plan the garden party"),
                    ("user", "the garden party needs a marquee rental"),
                    ("assistant", "I can list marquee rental companies."),
                ],
            )
            hit = next(h for h in mem.remember("marquee rental for the garden party", k=3) if h.id == middle)
            assert [r.id for r in hit.context] == ([before, after] if expected else [])
            if expected:
                assert hit.context[0].content == "we should plan the garden party"
            data = hit.to_dict()
            assert [t["id"] for t in data["context"]] == [r.id for r in hit.context]
            assert all(t["timestamp_iso"].endswith("+00:00") for t in data["context"])
            assert json.loads(json.dumps(data)) == data


def test_a_second_hop_through_a_shared_name(mem: Memory) -> None:
    intro = mem.observe("Had lunch with my sister Zainab, we talked for hours", timestamp=NOW - 40 * DAY)
    city = mem.observe(
        "Zainab finally found a flat in Porto, five minutes from the station", timestamp=NOW - 9 * DAY
    )
    for i in range(15):
        mem.observe(f"my neighbour's flat number {i} has a new door", timestamp=NOW - i * DAY)
    hits = mem.remember("which city does my sister live in?", k=5)
    ids = [h.id for h in hits]
    assert intro in ids and city in ids
    assert next(h for h in hits if h.id == city).signals.get("hop", 0) > 0
