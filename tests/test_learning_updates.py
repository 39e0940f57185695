"""Knowledge updates as they happen, and what the sleep cycle writes (issue #24, learning).

Corrections are linked to what they correct when they are observed, on their own topic
only, confirmed or undone by the sleep cycle, and a corrected memory never outranks its
correction. The sleep cycle keeps every step of a procedure in order, merges lessons about
one problem, turns "remind me to…" into intentions and never names a user by their id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig, RankingConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.providers import OfflineProvider
from ucma_core.providers.protocols import ExtractedFact

DAY = 86_400.0
START = 1_767_600_000.0


class Clock:
    def __init__(self) -> None:
        self.t = START

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=clock) as m:
        yield m


def _say(mem: Memory, clock: Clock, user: str, *turns: tuple[str, str], day: float = 0.0) -> list[str]:
    ids = []
    for source, text in turns:
        clock.t = max(clock.t + 60, START + day * DAY)
        memory_id = mem.observe(text, source=source, user_id=user, session_id=f"{user}-{int(day)}", keep=True)
        assert memory_id is not None
        ids.append(memory_id)
    return ids


def _corrects(mem: Memory, correction: str) -> set[str]:
    return {v for _, v, _, _ in mem.edges(correction, edge_type="supersedes", direction="out")}


def _rank(mem: Memory, question: str, user: str) -> list[str]:
    return [hit.id for hit in mem.remember(question, user_id=user, k=10)]


def _before(order: list[str], first: str, second: str) -> bool:
    return first in order and (second not in order or order.index(first) < order.index(second))


# ------------------------------------------------------------------ corrections at observe time
def test_a_correction_ranks_first_right_after_it_is_said(mem: Memory, clock: Clock) -> None:
    [stale] = _say(mem, clock, "sam", ("user", "I'm going to buy the ThinkPad X1 Carbon for work."))
    _say(mem, clock, "sam", ("assistant", "Good choice for Linux; the keyboard is excellent."))
    [fix] = _say(mem, clock, "sam", ("user", "Actually I decided on the MacBook Air instead."), day=2)
    assert _corrects(mem, fix) == {stale}
    assert _before(_rank(mem, "which laptop did I pick in the end?", "sam"), fix, stale)


@pytest.mark.parametrize(
    ("old", "new", "question"),
    [
        ("I live in Berlin, near Tempelhof.", "We moved to Lisbon last weekend!", "where do I live now?"),
        (
            "I work at Initech as a data analyst.",
            "I don't work at Initech anymore, I joined Globex.",
            "where do I work?",
        ),
        ("I use vim for everything.", "I switched from vim to VS Code last month.", "which editor do I use?"),
        ("My manager is Carla.", "Carla left; my new manager is Dev.", "who is my manager?"),
        ("We store the events in MySQL.", "No, it's Postgres not MySQL.", "which database holds the events?"),
    ],
)
def test_updates_are_linked_to_what_they_update(
    mem: Memory, clock: Clock, old: str, new: str, question: str
) -> None:
    [stale] = _say(mem, clock, "u", ("user", old))
    [fix] = _say(mem, clock, "u", ("user", new), day=5)
    assert _corrects(mem, fix) == {stale}
    assert _before(_rank(mem, question, "u"), fix, stale)


def test_a_correction_never_crosses_topics(mem: Memory, clock: Clock) -> None:
    [laptop] = _say(mem, clock, "kim", ("user", "I'm going to buy the ThinkPad X1 Carbon for work."))
    [heroku] = _say(mem, clock, "kim", ("user", "I'm going to deploy the API on Heroku."), day=1)
    [fly] = _say(mem, clock, "kim", ("user", "Actually I decided on Fly.io for the deploy."), day=2)
    [air] = _say(mem, clock, "kim", ("user", "Actually I decided on the MacBook Air instead."), day=3)
    assert _corrects(mem, fly) == {heroku}
    assert _corrects(mem, air) == {laptop}
    assert _before(_rank(mem, "where do I deploy the API?", "kim"), fly, heroku)
    clock.t += DAY
    mem.consolidate()
    current = {f.object for f in mem.facts_about("the user", user_id="kim")}
    assert {"Fly.io for the deploy", "MacBook Air"} <= current
    assert _before(_rank(mem, "where do I deploy the API?", "kim"), fly, heroku)
    assert _before(_rank(mem, "which laptop did I choose?", "kim"), air, laptop)


def test_when_the_rules_cannot_tell_the_topic_nothing_is_linked(mem: Memory, clock: Clock) -> None:
    _say(
        mem,
        clock,
        "lea",
        ("user", "I'm going to adopt a greyhound."),
        ("user", "I'm going to read Dune next."),
    )
    [fix] = _say(mem, clock, "lea", ("user", "Actually I decided on the kayak instead."), day=1)
    assert _corrects(mem, fix) == set()


def test_corrections_stay_in_their_users_scope(mem: Memory, clock: Clock) -> None:
    _say(mem, clock, "ana", ("user", "I live in Berlin."))
    [fix] = _say(mem, clock, "bob", ("user", "We moved to Lisbon last weekend!"), day=1)
    assert _corrects(mem, fix) == set()


class _NoConflicts(OfflineProvider):
    """A provider that judges no pair of facts to conflict."""

    def conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        return [False for _ in pairs]


def test_the_sleep_cycle_confirms_a_link(mem: Memory, clock: Clock) -> None:
    [stale] = _say(mem, clock, "u", ("user", "I live in Berlin."))
    [fix] = _say(mem, clock, "u", ("user", "We moved to Lisbon last weekend!"), day=3)
    clock.t += DAY
    report = mem.consolidate()
    assert report.phases["extract"]["corrections_confirmed"] == 1
    assert _corrects(mem, fix) == {stale}
    assert _before(_rank(mem, "where do I live?", "u"), fix, stale)


def test_the_sleep_cycle_undoes_a_link_its_provider_rejects(tmp_path: Path, clock: Clock) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=clock, provider=_NoConflicts()) as mem:
        [stale] = _say(mem, clock, "u", ("user", "I live in Berlin."))
        [fix] = _say(mem, clock, "u", ("user", "We moved to Lisbon last weekend!"), day=3)
        assert _corrects(mem, fix) == {stale}
        clock.t += DAY
        report = mem.consolidate()
        assert report.phases["extract"]["corrections_undone"] == 1
        assert _corrects(mem, fix) == set()
        hits = {h.id: h for h in mem.remember("I live in Berlin", user_id="u", k=10)}
        assert "demoted" not in hits[stale].signals


@pytest.mark.parametrize("demoted_weight", [0.5, 1.0])
def test_a_corrected_memory_never_outranks_its_correction(
    tmp_path: Path, clock: Clock, demoted_weight: float
) -> None:
    # ranking that weighs importance heavily and (at 1.0) does not demote revised turns
    ranking = RankingConfig(relevance=0.3, importance=0.7, demoted_weight=demoted_weight)
    config = MemoryConfig(ranking=ranking)
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        clock.t = START
        stale = mem.observe("I live in Berlin, Berlin is home.", user_id="u", importance=1.0, keep=True)
        clock.t += 30 * DAY
        fix = mem.observe("We moved to Lisbon.", user_id="u", importance=0.0, keep=True)
        assert stale and fix
        mem.reinforce([stale])
        hits = mem.remember("do I live in Berlin?", user_id="u", k=10)
        scores = {h.id: h.score for h in hits}
        assert scores[fix] >= scores[stale]
        assert _before([h.id for h in hits], fix, stale)


# ------------------------------------------------------------------ what the sleep cycle writes
def test_a_learned_procedure_keeps_every_step_in_order(mem: Memory, clock: Clock) -> None:
    _say(
        mem,
        clock,
        "dev",
        ("user", "how do I set up the dev environment?"),
        ("assistant", "Sure! Clone the repo, install the requirements, then run the tests."),
    )
    clock.t += DAY
    mem.consolidate()
    [procedure] = mem.list_memories(user_id="dev", memory_types=["procedural"])
    assert procedure.steps == ("Clone the repo", "Install the requirements", "Run the tests")


def test_lessons_about_one_problem_merge_with_both_outcomes(mem: Memory, clock: Clock) -> None:
    fail = ("My build fails on CI with a numpy error.", "I upgraded pip.", "Still failing.")
    work = ("My build fails on CI with a numpy error.", "I pinned numpy to 1.26.", "Works now!")
    _say(mem, clock, "ci", *(("user", t) for t in fail))
    _say(mem, clock, "ci", *(("user", t) for t in work), day=1)
    clock.t += DAY
    mem.consolidate()
    [lesson] = mem.list_memories(user_id="ci", memory_types=["learning"])
    assert lesson.learning_type.value == "success_pattern"
    assert (
        "pin numpy to 1.26" in lesson.insight.lower()
        and "upgrading pip did not work" in lesson.insight.lower()
    )
    assert len(lesson.source_ids) == 6


def test_remind_me_becomes_an_intention_that_fires(mem: Memory, clock: Clock) -> None:
    _say(
        mem,
        clock,
        "r",
        ("user", "Remind me to call the dentist tomorrow."),
        ("user", "I reminded Tom to call."),
    )
    clock.t += DAY
    mem.consolidate()
    [intention] = mem.intentions(user_id="r")
    assert (intention.description, intention.trigger, intention.status.value) == (
        "Call the dentist tomorrow",
        ("dentist",),
        "pending",
    )
    _say(mem, clock, "r", ("user", "The dentist's office called back."), day=2)
    assert [i.status.value for i in mem.intentions(user_id="r")] == ["triggered"]
    mem.consolidate()
    assert len(mem.intentions(user_id="r")) == 1  # the turn is not read again


def test_facts_name_the_user_never_by_their_id(mem: Memory, clock: Clock) -> None:
    _say(mem, clock, "u-4821", ("user", "I live in Porto and I work at Acme."))
    _say(mem, clock, "noor-7", ("user", "Hi, I'm Noor!"), ("user", "I live in Cairo."))
    clock.t += DAY
    mem.consolidate()
    _say(mem, clock, "noor-7", ("user", "I love jazz."), day=2)
    clock.t += DAY
    mem.consolidate()
    anon = mem.list_memories(user_id="u-4821", memory_types=["semantic"])
    assert {(f.subject, f.predicate, f.object) for f in anon} == {
        ("the user", "lives in", "Porto"),
        ("the user", "works at", "Acme"),
    }
    noor = {
        (f.subject, f.predicate, f.object)
        for f in mem.list_memories(user_id="noor-7", memory_types=["semantic"])
    }
    assert {("Noor", "lives in", "Cairo"), ("Noor", "likes", "jazz")} <= noor
    assert not any(s.lower() in ("u-4821", "noor-7") for s, _, _ in noor)


def test_a_link_survives_reopening_the_folder(tmp_path: Path, clock: Clock) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=clock) as mem:
        [stale] = _say(mem, clock, "u", ("user", "I live in Berlin."))
        [fix] = _say(mem, clock, "u", ("user", "We moved to Lisbon last weekend!"), day=3)
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), clock=clock) as mem:
        assert _corrects(mem, fix) == {stale}
        assert _before(_rank(mem, "where do I live?", "u"), fix, stale)


_THINGS = {
    "laptop": ["the ThinkPad X1 Carbon", "the MacBook Air", "a Dell XPS 13"],
    "hosting": ["Heroku", "Fly.io", "Vercel"],
    "database": ["MongoDB", "Postgres", "SQLite"],
    "editor": ["vim", "VS Code", "Emacs"],
}


@pytest.mark.parametrize("old_kind", sorted(_THINGS))
@pytest.mark.parametrize("new_kind", sorted(_THINGS))
def test_a_revised_decision_is_linked_within_its_kind_only(
    mem: Memory, clock: Clock, old_kind: str, new_kind: str
) -> None:
    [old] = _say(mem, clock, "d", ("user", f"I'm going to go with {_THINGS[old_kind][0]}."))
    [fix] = _say(mem, clock, "d", ("user", f"Actually I decided on {_THINGS[new_kind][1]} instead."), day=1)
    assert _corrects(mem, fix) == ({old} if old_kind == new_kind else set())
