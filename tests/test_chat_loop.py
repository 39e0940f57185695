"""What a memory keeps, learns and forgets in a chat loop: importance, corrections, questions,
whose fact, learned facts and procedures, and forgetting that keeps a profile."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.chat_loop.extraction import HELD_OUT as HELD_OUT_TEXTS
from benchmarks.chat_loop.extraction import TEXTS
from benchmarks.chat_loop.keep_drop import HELD_OUT as HELD_OUT_TURNS
from benchmarks.chat_loop.keep_drop import TURNS
from benchmarks.chat_loop.metrics import Counts, match_facts
from benchmarks.chat_loop.model import ScriptedModel
from ucma_core import Fact, Memory, Procedure
from ucma_core.importance import HeuristicImportance
from ucma_core.providers import ExtractedFact, LLMProvider, OfflineProvider

DAY = 86_400.0


def _say(
    mem: Memory, clock: Any, turns: list[tuple[str, str]], *, user: str = "ana", days: float = 0.0
) -> list[str | None]:
    """Observe ``(source, text)`` turns a minute apart (after ``days``), the user's with their name."""
    clock.advance(days=days)
    session = f"{user}-{clock.now}"
    ids = []
    for source, text in turns:
        clock.advance(seconds=60)
        who = [user.capitalize()] if source == "user" else None
        ids.append(mem.observe(text, source=source, user_id=user, session_id=session, participants=who))
    return ids


def _facts(mem: Memory, user: str = "ana", *, history: bool = False) -> set[tuple[str, str, str]]:
    found = mem.list_memories(user_id=user, memory_types=["semantic"], limit=1000)
    return {
        (f.subject, f.predicate, f.object)
        for f in found
        if isinstance(f, Fact) and (history or f.valid_to is None)
    }


# ---------------------------------------------------------------------------------------- importance
@pytest.mark.parametrize(
    ("source", "text", "keep"),
    [
        ("assistant", "That smells like clock skew between the issuing and validating servers.", True),
        ("assistant", "Consider polars for that.", True),
        ("assistant", "Run `alembic upgrade head` before starting the app.", True),
        ("assistant", "Happy to help!", False),
        ("user", "h", False),
        ("user", "ok thanks", False),
        ("user", "Actually I decided on the MacBook Air instead.", True),
        ("tool", "(no output)", False),
    ],
)
def test_importance_reads_what_a_turn_does(source: str, text: str, keep: bool) -> None:
    assert (HeuristicImportance().score_importance(text, source=source) >= 0.2) is keep


def test_a_question_weighs_less_than_the_answer_to_it() -> None:
    scorer = HeuristicImportance()
    question = scorer.score_importance("how do I deploy the staging app?", source="user")
    answer = scorer.score_importance(
        "Build the image, push it, then run `kubectl apply -f k8s/staging.yaml`.", source="assistant"
    )
    assert 0.2 <= question < answer


@pytest.mark.parametrize(("turns", "least"), [(TURNS, 0.95), (HELD_OUT_TURNS, 0.9)])
def test_the_labelled_keep_drop_sets(mem: Memory, turns: list[tuple[str, str, bool]], least: float) -> None:
    ids = mem.observe_many([{"content": text, "source": source} for source, text, _ in turns])
    counts = Counts()
    for (_, _, keep), memory_id in zip(turns, ids, strict=True):
        kept = memory_id is not None
        counts.add(int(kept and keep), int(kept and not keep), int(keep and not kept))
    assert counts.precision >= least and counts.recall >= least


# ---------------------------------------------------------------------------------------- extraction
@pytest.mark.parametrize(("texts", "least"), [(TEXTS, 0.95), (HELD_OUT_TEXTS, 0.85)])
def test_the_labelled_extraction_sets(texts: list[Any], least: float) -> None:
    found = OfflineProvider().extract_facts([t for _, t, _ in texts], speakers=[s for s, _, _ in texts])
    counts = Counts()
    for (_, _, gold), facts in zip(texts, found, strict=True):
        counts.add(*match_facts([(f.subject, f.predicate, f.object) for f in facts], gold))
        assert all(f.subject.lower() != f.object.lower() for f in facts)
    assert counts.precision >= least and counts.recall >= least


def test_revisions_are_marked_with_what_they_replace() -> None:
    texts = [
        "Actually I decided on the MacBook Air instead.",
        "I switched from vim to VS Code last month.",
        "I'm not vegetarian anymore.",
        "We moved the standup to 10:15.",
        "I live in Lisbon.",
    ]
    found = OfflineProvider().extract_facts(texts, speakers=["Ana"] * len(texts))
    flags = [[(f.predicate, f.object, f.revises, f.replaces) for f in facts] for facts in found]
    assert flags == [
        [("chose", "MacBook Air", True, None)],
        [("uses", "VS Code", True, "vim"), ("no longer uses", "vim", True, "vim")],
        [("is no longer", "vegetarian", True, "vegetarian")],
        [("has", "standup at 10:15", True, "standup")],
        [("lives in", "Lisbon", False, None)],
    ]


# ---------------------------------------------------------------------------------------- corrections
def test_a_correction_supersedes_the_stale_fact_and_outweighs_its_turn(mem: Memory, clock: Any) -> None:
    stale, _ = _say(
        mem,
        clock,
        [("user", "I'm going to buy the ThinkPad X1 Carbon for work."), ("assistant", "Good pick.")],
    )
    [correction] = _say(mem, clock, [("user", "Actually I decided on the MacBook Air instead.")], days=2)
    assert stale and correction
    before = mem.get(stale)
    assert mem.consolidate().errors == []
    assert ("Ana", "chose", "MacBook Air") in _facts(mem)
    assert ("Ana", "plans to", "buy the ThinkPad X1 Carbon for work") not in _facts(mem)
    history = [
        f for f in mem.facts_about("Ana", user_id="ana", include_superseded=True) if "ThinkPad" in f.object
    ]
    [old] = history
    new = next(f for f in mem.facts_about("Ana", user_id="ana") if f.object == "MacBook Air")
    assert old.valid_to == new.valid_from and old.superseded_by == new.id
    assert new.source_ids == (correction,) and old.source_ids == (stale,)
    # the stale turn is revised by the correction: linked, and it weighs less
    assert (correction, stale, "supersedes", 1.0) in mem.edges(stale, direction="in")
    after = mem.get(stale)
    assert before is not None and after is not None and after.importance < before.importance


def test_moves_and_things_no_longer_true(mem: Memory, clock: Any) -> None:
    _say(mem, clock, [("user", "I live in Berlin, near Tempelhof."), ("user", "I'm vegetarian.")])
    _say(
        mem,
        clock,
        [("user", "We moved to Lisbon last weekend!"), ("user", "I'm not vegetarian anymore.")],
        days=20,
    )
    mem.consolidate()
    current = _facts(mem)
    assert {("Ana", "lives in", "Lisbon"), ("Ana", "is no longer", "vegetarian")} <= current
    assert not {("Ana", "lives in", "Berlin"), ("Ana", "is", "vegetarian")} & current
    assert {("Ana", "lives in", "Berlin"), ("Ana", "is", "vegetarian")} <= _facts(mem, history=True)


def test_near_identical_facts_are_kept_once(mem: Memory, clock: Any) -> None:
    _say(mem, clock, [("user", "I prefer short answers.")])
    mem.consolidate()
    _say(mem, clock, [("user", "I prefer short answers with code, by the way.")], days=1)
    _say(mem, clock, [("user", "I prefer short answers.")], days=1)
    mem.consolidate()
    prefs = {f for f in _facts(mem) if f[1] == "prefers"}
    assert prefs == {("Ana", "prefers", "short answers with code")}
    [fuller] = [f for f in mem.facts_about("Ana", user_id="ana") if f.predicate == "prefers"]
    assert len(fuller.source_ids) == 2  # the later, clipped statement reinforced the fuller fact
    assert ("Ana", "prefers", "short answers") in _facts(mem, history=True)


# ---------------------------------------------------------------------------------------- questions
def test_a_how_to_answer_becomes_a_procedure_and_the_question_weighs_less(mem: Memory, clock: Any) -> None:
    question, answer, _ = _say(
        mem,
        clock,
        [
            ("user", "how do I deploy the staging app?"),
            (
                "assistant",
                "Build the image with `docker build -t web .`, push it with `docker push registry/web`, "
                "then run `kubectl apply -f k8s/staging.yaml`.",
            ),
            ("user", "great, thanks!"),
        ],
    )
    assert question and answer
    before = mem.get(question)
    report = mem.consolidate()
    assert report.phases["patterns"]["answered_questions"] == 1
    [procedure] = mem.find_procedures(["deploy"], user_id="ana")
    assert isinstance(procedure, Procedure) and procedure.source == "consolidation"
    assert procedure.name == "How to deploy the staging app"
    assert procedure.steps == (
        "Build the image with `docker build -t web .`",
        "Push it with `docker push registry/web`",
        "Run `kubectl apply -f k8s/staging.yaml`",
    )
    assert procedure.source_ids == (question, answer)
    after = mem.get(question)
    assert before is not None and after is not None and after.importance < before.importance


# ---------------------------------------------------------------------------------------- whose fact
def test_a_relative_s_fact_is_not_the_user_s(mem: Memory, clock: Any) -> None:
    _say(mem, clock, [("user", "I live in Lisbon, in Alfama."), ("user", "My sister Marta lives in Porto.")])
    _say(mem, clock, [("user", "My mom lives in Busan.")], days=1)
    mem.consolidate()
    facts = _facts(mem)
    assert {
        ("Ana", "lives in", "Lisbon"),
        ("Marta", "lives in", "Porto"),
        ("Ana's mom", "lives in", "Busan"),
    } <= facts
    assert {f for f in facts if f[0] == "Ana" and f[1] == "lives in"} == {("Ana", "lives in", "Lisbon")}


# ---------------------------------------------------------------------------------------- forgetting
PROFILE = [
    ("user", "I live in Lisbon and I work at Initech as a data engineer."),
    ("user", "My sister Marta lives in Porto."),
    ("user", "I prefer short answers with code examples."),
    ("assistant", "Noted, short answers with code from now on."),
    ("user", "The weather was grey all week."),
]


def _profile_after(mem: Memory, clock: Any, nights: list[float]) -> set[tuple[str, str, str]]:
    _say(mem, clock, PROFILE)
    for gap in nights:
        clock.advance(days=gap)
        mem.consolidate()
    return _facts(mem)


def test_a_profile_survives_a_year_away(mem: Memory, clock: Any) -> None:
    facts = _profile_after(mem, clock, [1, 90, 275])
    assert {
        ("Ana", "lives in", "Lisbon"),
        ("Ana", "works at", "Initech"),
        ("Ana", "has sister", "Marta"),
        ("Marta", "lives in", "Porto"),
        ("Ana", "prefers", "short answers with code examples"),
    } <= facts
    assert mem.list_memories(user_id="ana", memory_types=["episodic"]) == []  # the episodes faded
    assert "Lisbon" in mem.remember("where do I live?", user_id="ana", k=3)[0].content


def test_a_profile_survives_a_year_of_nightly_consolidation(mem: Memory, clock: Any) -> None:
    facts = _profile_after(mem, clock, [1.0] * 365)
    assert {("Ana", "lives in", "Lisbon"), ("Marta", "lives in", "Porto")} <= facts


# ---------------------------------------------------------------------------------------- a model
class Canned:
    """A chat transport with one canned reply per task; records the payloads it was sent."""

    def __init__(self, replies: dict[str, Any]) -> None:
        self.replies = replies
        self.sent: list[dict[str, Any]] = []

    def complete(self, system: str, user: str) -> str:
        payload = json.loads(user)
        self.sent.append(payload)
        items = payload.get("items") or []
        task = "conflicts" if items and "older" in items[0] else "facts" if items else "none"
        return json.dumps(self.replies[task])


def test_a_model_s_facts_are_normalised_and_its_revisions_kept() -> None:
    fact = {"subject": "the user", "predicate": "Resides In", "object": "Lisbon", "confidence": 0.9}
    clipped = {"subject": "Ana", "predicate": "prefers", "object": "short answers", "confidence": 0.8}
    fuller = {**clipped, "object": "short answers with code"}
    revision = {
        "subject": "Ana", "predicate": "decided on", "object": "MacBook Air", "confidence": 0.9,
        "revises": True, "replaces": "ThinkPad",
    }  # fmt: skip
    transport = Canned({"facts": {"items": [{"index": 0, "facts": [fact, clipped, fuller, revision]}]}})
    [facts] = LLMProvider(transport).extract_facts(["..."], speakers=["Ana"])
    assert facts == [
        ExtractedFact("Ana", "lives in", "Lisbon", 0.9),
        ExtractedFact("Ana", "prefers", "short answers with code", 0.8),
        ExtractedFact("Ana", "chose", "MacBook Air", 0.9, revises=True, replaces="ThinkPad"),
    ]


def test_a_model_judges_revisions_it_is_told_about() -> None:
    transport = Canned({"conflicts": {"items": [{"index": 0, "conflict": True}]}})
    old = ExtractedFact("Ana", "plans to", "buy a ThinkPad", 0.8)
    new = ExtractedFact("Ana", "chose", "MacBook Air", 0.9, revises=True)
    assert LLMProvider(transport).conflicts([(old, new)]) == [True]
    assert transport.sent[0]["items"][0]["newer"]["revises"] is True


def test_the_scripted_benchmark_model_answers_every_labelled_text() -> None:
    model = ScriptedModel()
    provider = LLMProvider(model, llm_importance=True)
    for source, text, _ in [*TURNS, *HELD_OUT_TURNS]:
        provider.score_importance(text, source=source)
    for texts in (TEXTS, HELD_OUT_TEXTS):
        provider.extract_facts([t for _, t, _ in texts], speakers=[s for s, _, _ in texts])
    assert model.unknown == []


def test_a_model_s_revisions_and_how_to_answers_are_learned_in_consolidation(folder: Any, clock: Any) -> None:
    from ucma_core.embedders import HashingEmbedder

    provider = LLMProvider(ScriptedModel())  # the benchmark's canned model, through the provider
    with Memory(folder, embedder=HashingEmbedder(), provider=provider, clock=clock) as mem:
        _say(mem, clock, [("user", "I'm going to buy the ThinkPad X1 Carbon for work.")], user="sam")
        _say(mem, clock, [("user", "Actually I decided on the MacBook Air instead.")], user="sam", days=2)
        _say(
            mem,
            clock,
            [("user", "how do I undo the last git commit but keep the changes?"),
             ("assistant", "Run `git reset --soft HEAD~1`; your changes stay staged.")],
            user="sam",
        )  # fmt: skip
        assert mem.consolidate().errors == []
        assert ("Sam", "chose", "MacBook Air") in _facts(mem, "sam")
        assert ("Sam", "plans to buy", "ThinkPad X1 Carbon") in _facts(mem, "sam", history=True) - _facts(
            mem, "sam"
        )
        [procedure] = mem.find_procedures(["git"], user_id="sam")
        assert procedure.steps == ("Run git reset --soft HEAD~1",)
