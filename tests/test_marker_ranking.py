"""Ranking reads what the sleep cycle learned: corrections win right after they are learned,
answered questions give way to their answers, a question about the user prefers the user's
own facts, learned knowledge keeps its retention, and the markers survive a rebuilt graph."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from ucma_core import (
    Fact,
    ForgettingConfig,
    FusionConfig,
    Memory,
    MemoryConfig,
    RankingConfig,
    RetrievalResult,
)
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError
from ucma_core.providers import OfflineProvider

DAY = 86_400.0


def _say(
    mem: Memory, clock: Any, turns: list[tuple[str, str]], *, user: str = "ana", days: float = 0.0
) -> list[str]:
    """Observe ``(source, text)`` turns a minute apart (after ``days``), all kept."""
    clock.advance(days=days)
    session = f"{user}-{clock.now}"
    ids = []
    for source, text in turns:
        clock.advance(seconds=60)
        who = [user.capitalize()] if source == "user" else None
        memory_id = mem.observe(
            text, source=source, user_id=user, session_id=session, participants=who, keep=True
        )
        assert memory_id is not None
        ids.append(memory_id)
    return ids


def _first(hits: list[RetrievalResult], good: set[str], bad: set[str]) -> str:
    """``"good"`` or ``"bad"``: which evidence the first hit that is (or was learned from)
    one of them is for; ``"none"`` when no hit is."""
    for hit in hits:
        ids = {hit.id, *hit.source_ids}
        if ids & good and not ids & bad:
            return "good"
        if ids & bad and not ids & good:
            return "bad"
    return "none"


def _hit(hits: list[RetrievalResult], memory_id: str) -> RetrievalResult:
    return next(h for h in hits if h.id == memory_id)


def _laptop(mem: Memory, clock: Any) -> tuple[str, str]:
    stale, _ = _say(
        mem,
        clock,
        [("user", "I'm going to buy the ThinkPad X1 Carbon for work."), ("assistant", "Good pick.")],
    )
    [correction] = _say(mem, clock, [("user", "Actually I decided on the MacBook Air instead.")], days=2)
    assert mem.consolidate().errors == []
    return stale, correction


# ---------------------------------------------------------------------------------------- corrections
def test_a_correction_ranks_first_right_after_it_is_learned(mem: Memory, clock: Any) -> None:
    stale, correction = _laptop(mem, clock)
    clock.advance(seconds=3600)
    hits = mem.remember("which laptop did I decide to buy for work?", user_id="ana", k=10)
    assert _first(hits, {correction}, {stale}) == "good"
    assert _hit(hits, stale).signals["demoted"] == 0.5
    assert "demoted" not in _hit(hits, correction).signals
    assert hits.index(_hit(hits, correction)) < hits.index(_hit(hits, stale))


def test_a_correction_is_found_through_the_turn_it_corrects(folder: Path, clock: Any) -> None:
    narrow = MemoryConfig(
        fusion=FusionConfig(min_candidates=1, candidates_per_result=1, graph_seeds=0, context_seeds=0)
    )
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=narrow) as mem:
        stale, correction = _laptop(mem, clock)
        # the correction shares no word with the question: it comes in as the stale turn's correction
        hits = mem.remember("ThinkPad X1 Carbon", user_id="ana", k=2)
        assert [h.id for h in hits][:1] == [correction]
        found = _hit(hits, correction)
        assert found.signals["inherited"] == pytest.approx(_hit(hits, stale).relevance)
        assert found.relevance >= _hit(hits, stale).relevance


def test_demotion_can_be_turned_off_and_is_checked(folder: Path, clock: Any) -> None:
    with pytest.raises(ConfigurationError, match="demoted_weight"):
        RankingConfig(demoted_weight=1.5)
    plain = MemoryConfig(ranking=RankingConfig(demoted_weight=1.0))
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=plain) as mem:
        stale, _ = _laptop(mem, clock)
        hits = mem.remember("which laptop did I decide to buy for work?", user_id="ana", k=10)
        assert "demoted" not in _hit(hits, stale).signals


# ---------------------------------------------------------------------------------------- questions
def test_an_answered_question_gives_way_to_its_answer(mem: Memory, clock: Any) -> None:
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
    assert mem.consolidate().phases["patterns"]["answered_questions"] == 1
    hits = mem.remember("how do I deploy the staging app?", user_id="ana", k=10)
    asked, answered = _hit(hits, question), _hit(hits, answer)
    assert hits.index(answered) < hits.index(asked)
    assert asked.signals["demoted"] == 0.5
    # the answer is at least as relevant as the question it answers
    assert answered.relevance >= asked.relevance and "inherited" in answered.signals


def test_an_unanswered_question_is_not_demoted(mem: Memory, clock: Any) -> None:
    [question] = _say(mem, clock, [("user", "how do I renew my passport?")])
    mem.consolidate()
    hits = mem.remember("how do I renew my passport?", user_id="ana", k=5)
    assert "demoted" not in _hit(hits, question).signals


# ---------------------------------------------------------------------------------------- whose fact
def _places(mem: Memory, clock: Any) -> tuple[str, str]:
    [mine] = _say(mem, clock, [("user", "I live in Lisbon, in Alfama.")])
    [sister] = _say(mem, clock, [("user", "My sister Marta lives in Porto.")], days=3)
    assert mem.consolidate().errors == []
    return mine, sister


def test_a_question_about_the_user_prefers_the_user_s_own_facts(mem: Memory, clock: Any) -> None:
    mine, sister = _places(mem, clock)
    hits = mem.remember("where do I live?", user_id="ana", k=10)
    assert _first(hits, {mine}, {sister}) == "good"
    assert _hit(hits, sister).signals["demoted"] == 0.5
    facts = {
        h.record.object: h for h in hits if isinstance(h.record, Fact) and h.record.predicate == "lives in"
    }
    assert "demoted" not in facts["Lisbon"].signals and facts["Porto"].signals["demoted"] == 0.5
    # the user named in the third person is the user too
    assert _first(mem.remember("Where does Ana live?", user_id="ana", k=10), {mine}, {sister}) == "good"


def test_a_question_about_a_relative_demotes_nothing(mem: Memory, clock: Any) -> None:
    mine, sister = _places(mem, clock)
    hits = mem.remember("where does my sister live?", user_id="ana", k=10)
    assert all("demoted" not in h.signals for h in hits)
    assert _first(hits, {sister}, {mine}) == "good"


# ---------------------------------------------------------------------------------------- retention
@pytest.mark.parametrize("decay", [1.0, 8.0])
def test_ranking_reads_knowledge_retention_as_forgetting_does(folder: Path, clock: Any, decay: float) -> None:
    config = MemoryConfig(forgetting=ForgettingConfig(knowledge_decay_factor=decay))
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, config=config) as mem:
        fact = mem.assert_fact("Ana", "grows", "tomatoes on the balcony", user_id="ana")
        episode = mem.observe("The tomatoes on the balcony are red.", user_id="ana", keep=True)
        clock.advance(days=40)
        hits = {h.id: h for h in mem.remember("tomatoes on the balcony", user_id="ana", k=5)}
        for memory_id, factor in ((fact.id, decay), (episode, 1.0)):
            hit = hits[memory_id]
            days = (clock.now - hit.record.last_access) / DAY
            assert hit.retention == pytest.approx(math.exp(-days / (hit.record.stability * factor)), rel=1e-6)
        if decay > 1:
            assert hits[fact.id].retention > hits[episode].retention


# ---------------------------------------------------------------------------------------- learning
def test_a_revised_preference_replaces_the_old_one_unrestated(mem: Memory, clock: Any) -> None:
    _say(mem, clock, [("user", "I prefer short answers.")])
    mem.consolidate()
    _say(mem, clock, [("user", "Actually, I prefer detailed answers now.")], days=5)
    mem.consolidate()
    current = {f.object for f in mem.facts_about("Ana", user_id="ana") if f.predicate == "prefers"}
    assert current == {"detailed answers"}
    history = mem.facts_about("Ana", user_id="ana", include_superseded=True)
    assert "short answers" in {f.object for f in history}


def test_a_decision_correction_revises_the_decision_it_is_about(mem: Memory, clock: Any) -> None:
    sofa, _ = _say(mem, clock, [("user", "I decided on the blue velvet sofa."), ("assistant", "Nice!")])
    _say(mem, clock, [("user", "I'm going to book the Lisbon flight for May.")], days=1)
    [correction] = _say(mem, clock, [("user", "Actually I decided on the green velvet sofa.")], days=1)
    mem.consolidate()
    current = {(f.predicate, f.object) for f in mem.facts_about("Ana", user_id="ana")}
    assert ("chose", "green velvet sofa") in current
    assert ("chose", "blue velvet sofa") not in current
    assert any("Lisbon flight" in o for _, o in current), current  # the latest decision stands
    hits = mem.remember("which sofa did I decide on?", user_id="ana", k=10)
    assert _first(hits, {correction}, {sofa}) == "good"


def test_offline_procedure_names_read_as_names() -> None:
    provider = OfflineProvider()
    fix = provider.extract_procedure(
        [
            "The JWT tokens expire after 5 minutes and users get logged out.",
            "I added a 30 second leeway to the validator.",
            "Fixed, thanks!",
        ]
    )
    assert fix is not None and fix.name == "Fix: JWT tokens expire after 5 minutes"
    steps = provider.extract_procedure(["Ran the database migration.", "Restarted the worker.", "Works now."])
    assert steps is not None and steps.name == "Run the database migration, then restart the worker"


# ---------------------------------------------------------------------------------------- durability
def test_markers_survive_a_graph_rebuilt_from_chroma(folder: Path, clock: Any) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock, provider=OfflineProvider()) as mem:
        stale, correction = _laptop(mem, clock)
        mine, sister = _places(mem, clock)
        assert mem.pin(mine)
    for name in (
        "graph.snapshot.json",
        "graph.journal.jsonl",
        "graph.snapshot.prev.json",
        "graph.journal.prev.jsonl",
    ):
        (folder / name).unlink(missing_ok=True)
    report = Memory.repair(folder, embedder=HashingEmbedder())
    assert report.applied and stale in report.restored_from_chroma
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as mem:
        hits = mem.remember("which laptop did I decide to buy for work?", user_id="ana", k=10)
        assert _hit(hits, stale).signals["demoted"] == 0.5
        assert _first(hits, {correction}, {stale}) == "good"
        hits = mem.remember("where do I live?", user_id="ana", k=10)
        assert _hit(hits, sister).signals["demoted"] == 0.5
        assert "demoted" not in _hit(hits, mine).signals
        clock.advance(days=3 * 365)
        assert mem.prune(dry_run=True).protected.get("pinned", 0) >= 1
