"""Names are people, not words: participants a question names are a preference (never a
filter), a content-free turn never outranks content, the second hop follows only rare names,
and a set question gets the set."""

from __future__ import annotations

from pathlib import Path

from ucma_core import Memory, MemoryConfig, RetrievalResult
from ucma_core.conversation.shown import content_free
from ucma_core.embedders import HashingEmbedder

_HOUR = 3600.0
_CHAT = "chat-7"  # a user id that is no one's name: the people are the participants


def _memory(folder: Path, clock) -> Memory:
    return Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(importance_threshold=0.0)
    )


def _conversation(mem: Memory, clock, sessions: list[list[tuple[str, str]]]) -> None:
    """Observe two people's sessions, one a day, with who spoke as the participant."""
    start = clock.now - (len(sessions) + 1) * 24 * _HOUR
    items = [
        {
            "content": text,
            "participants": [speaker],
            "session_id": f"s{n}",
            "timestamp": start + n * 24 * _HOUR + t * 60.0,
        }
        for n, turns in enumerate(sessions)
        for t, (speaker, text) in enumerate(turns)
    ]
    mem.observe_many(items, user_id=_CHAT)


def _pleasantries(a: str, b: str) -> list[tuple[str, str]]:
    return [
        (a, f"Hi {b}!"),
        (b, f"Hey {a}, good to see you!"),
        (a, f"Good luck, {b}!"),
        (b, f"Thanks {a}, bye!"),
    ]


def _is_free(result: RetrievalResult) -> bool:
    return content_free(result.content, names={"Sam", "Ana", "Caroline", "Melanie"})


def test_a_question_naming_a_participant_gets_the_content_turn_not_bye_sam(tmp_path: Path, clock) -> None:
    sessions = [_pleasantries("Ana", "Sam") for _ in range(6)]
    boat = ("Sam", "I sold my old sailing boat to the harbour master.")
    sessions[2] = [*sessions[2][:2], boat, *sessions[2][2:]]
    sessions[4] = [*sessions[4][:2], ("Ana", "My cousin is moving to Oslo in spring."), *sessions[4][2:]]
    with _memory(tmp_path / "m", clock) as mem:
        _conversation(mem, clock, sessions)
        questions = ("What did Sam do with the boat?", "What did Sam sell?", "What happened to Sam's boat?")
        for question in questions:
            hits = mem.remember(question, user_id=_CHAT, k=8)
            assert hits[0].content == boat[1], question
            flags = [_is_free(h) for h in hits]
            # once a content-free turn is listed, no content turn follows it
            assert flags == sorted(flags), [h.content for h in hits]
            assert "Sam" in hits[0].route.reason  # the route says whom the question names
            assert all(h.signals.get("content_free", 1.0) < 1.0 for h in hits if _is_free(h))


def test_naming_a_participant_is_a_preference_never_a_filter(tmp_path: Path, clock) -> None:
    sessions = [_pleasantries("Caroline", "Melanie") for _ in range(5)]
    sessions[1] = [*sessions[1], ("Melanie", "I painted the old lighthouse at sunrise for the gallery.")]
    sessions[3] = [*sessions[3], ("Caroline", "My pottery class starts next Tuesday evening.")]
    with _memory(tmp_path / "m", clock) as mem:
        _conversation(mem, clock, sessions)
        # Caroline never spoke of the lighthouse: Melanie's turn is still the answer
        hits = mem.remember("Did Caroline hear about the lighthouse painting?", user_id=_CHAT, k=5)
        assert hits[0].content.startswith("I painted the old lighthouse")
        # Caroline's own turn carries the preference when it is one of hers
        pottery = mem.remember("When does Caroline's pottery class start?", user_id=_CHAT, k=5)
        assert pottery[0].content.startswith("My pottery class")
        assert pottery[0].signals.get("speaker") == 1.0


def _sailing(mem: Memory, clock) -> None:
    sessions = [_pleasantries("Caroline", "Melanie") for _ in range(6)]
    sessions[1] = [*sessions[1], ("Caroline", "Melanie and my friend Oskar took me sailing on the lake.")]
    sessions[3] = [*sessions[3], ("Melanie", "Oskar repaired the torn sail with a new rope.")]
    sessions[4] = [*sessions[4], ("Caroline", "Melanie baked a lemon cake for the street party.")]
    _conversation(mem, clock, sessions)


def test_the_hop_follows_a_rare_third_party_name_and_not_a_participant(tmp_path: Path, clock) -> None:
    with _memory(tmp_path / "m", clock) as mem:
        _sailing(mem, clock)
        hits = mem.remember("Who took Caroline sailing on the lake?", user_id=_CHAT, k=8)
        by_text = {h.content: h for h in hits}
        assert hits[0].content.startswith("Melanie and my friend Oskar")
        # the rare name links the repair of the sail (which shares no word with the question)
        assert by_text["Oskar repaired the torn sail with a new rope."].signals.get("hop", 0.0) > 0
        # the participant named in the best match links nothing
        cake = by_text.get("Melanie baked a lemon cake for the street party.")
        assert cake is None or "hop" not in cake.signals
        reason = hits[0].route.reason
        assert "hop follows Oskar" in reason and "Melanie" in reason.split("hop skips", 1)[1]


def test_a_name_stops_being_rare_once_that_person_takes_part(tmp_path: Path, clock) -> None:
    with _memory(tmp_path / "m", clock) as mem:
        _sailing(mem, clock)
        question = "Who took Caroline sailing on the lake?"
        assert "hop follows Oskar" in mem.remember(question, user_id=_CHAT, k=5)[0].route.reason
        mem.observe("Hello both, Oskar here!", participants=["Oskar"], user_id=_CHAT, session_id="s9")
        after = mem.remember(question, user_id=_CHAT, k=8)
        assert "hop follows Oskar" not in after[0].route.reason
        assert all("hop" not in h.signals for h in after)


_PLACES = [
    "Rome", "Lisbon", "Kyoto", "Quito", "Nairobi", "Hobart", "Tromso", "Cusco", "Hanoi", "Fez",
    "Bergen", "Oaxaca",
]  # fmt: skip


def _trips(mem: Memory, clock) -> None:
    start = clock.now - 200 * 24 * _HOUR
    said = [f"We visited {p} on our trip and loved the old town." for p in _PLACES]
    said += [f"The {thing} needs fixing before the weekend." for thing in ("boiler", "bike", "sink", "fence")]
    said += [f"I cooked {dish} for dinner tonight." for dish in ("risotto", "dal", "paella", "ramen")]
    mem.observe_many(
        [
            {"content": text, "timestamp": start + n * 5 * 24 * _HOUR, "session_id": f"s{n}"}
            for n, text in enumerate(said)
        ],
        user_id="ana",
    )


def test_a_set_question_returns_every_matching_turn_when_k_is_not_set(tmp_path: Path, clock) -> None:
    with _memory(tmp_path / "m", clock) as mem:
        _trips(mem, clock)
        hits = mem.remember("Which places has Ana visited on a trip?", user_id="ana")
        found = {p for p in _PLACES if any(p in h.content for h in hits)}
        assert found == set(_PLACES) and len(hits) == 20
        assert "set question" in hits[0].route.reason
        # an ordinary question keeps the default, and a k the caller gives is kept
        assert len(mem.remember("Where did Ana find the old town?", user_id="ana")) == 10
        assert len(mem.remember("Which places has Ana visited on a trip?", user_id="ana", k=5)) == 5
        assert len(mem.scope(user_id="ana").remember("How many places did Ana visit?")) == 20
