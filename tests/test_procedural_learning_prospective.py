"""Procedures learn from outcomes, learnings validate asymmetrically, intentions fire."""

from __future__ import annotations

import pytest

from ucma_core import IntentionStatus, Memory, ProcedureStatus
from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.stores.procedural import evidence_weighted_score


def test_procedure_success_rate_is_a_running_mean_and_status_moves(mem: Memory) -> None:
    p = mem.add_procedure("deploy service", ["build image", "run tests", "roll out"], trigger_tags=["deploy"])
    assert p.status is ProcedureStatus.DRAFT and p.executions == 0
    assert p.content.splitlines()[1:] == ["1. build image", "2. run tests", "3. roll out"]
    for outcome in (True, False, True):
        p = mem.record_outcome(p.id, outcome)
    assert p.executions == 3 and p.usage_count == 3
    assert p.success_rate == pytest.approx(2 / 3, abs=1e-6)
    assert p.status is ProcedureStatus.ACTIVE
    for _ in range(6):
        p = mem.record_outcome(p.id, False)
    assert p.success_rate == pytest.approx(2 / 9, abs=1e-6)
    assert p.status is ProcedureStatus.DEPRECATED
    assert mem.find_procedures(["deploy"]) == []
    assert [q.id for q in mem.find_procedures(["deploy"], include_deprecated=True)] == [p.id]


def test_procedure_names_are_unique_per_scope(mem: Memory) -> None:
    mem.add_procedure("reset password", ["open settings"], user_id="ana")
    mem.add_procedure("reset password", ["open settings"], user_id="bob")
    with pytest.raises(InvalidInputError, match="already exists"):
        mem.add_procedure("Reset Password", ["x"], user_id="ana")


def test_evidence_weighting_prefers_proven_procedures(mem: Memory) -> None:
    lucky = mem.add_procedure("lucky fix", ["restart"], trigger_tags=["outage"])
    proven = mem.add_procedure("proven fix", ["drain", "restart"], trigger_tags=["outage"])
    mem.record_outcome(lucky.id, True)
    for i in range(20):
        mem.record_outcome(proven.id, i % 10 != 0)  # 90 %
    assert evidence_weighted_score(1.0, 1) < evidence_weighted_score(0.9, 20)
    assert [p.name for p in mem.find_procedures(["outage"])] == ["proven fix", "lucky fix"]


def test_record_outcome_on_unknown_or_wrong_type_raises(mem: Memory) -> None:
    episode = mem.observe("Ana deployed the billing service", importance=0.9)
    with pytest.raises(MemoryNotFoundError):
        mem.record_outcome("nope", True)
    with pytest.raises(MemoryNotFoundError):
        mem.record_outcome(episode, True)  # type: ignore[arg-type]


def test_learning_confidence_moves_asymmetrically(mem: Memory) -> None:
    e = mem.observe("JWT tokens expired early because of clock skew", importance=0.9)
    lesson = mem.learn(
        "Check clock skew when JWTs expire early",
        title="JWT expiry",
        learning_type="failure_analysis",
        applicability=["jwt", "auth"],
        confidence=0.5,
        evidence=[e],
    )
    assert lesson.source_ids == (e,) and not lesson.validated
    up = mem.validate_learning(lesson.id, True)
    assert up.confidence == pytest.approx(0.6) and up.validated and up.successes == 1
    down = mem.validate_learning(lesson.id, False)
    assert down.confidence == pytest.approx(0.45) and down.validated and down.failures == 1
    for _ in range(5):
        down = mem.validate_learning(lesson.id, False)
    assert down.confidence == 0.0
    with pytest.raises(InvalidInputError):
        mem.learn("x", learning_type="guesswork")


def test_intention_fires_on_matching_observation_in_scope_and_resolves(mem: Memory) -> None:
    it = mem.intend("Offer the refresh-token guide", ["refresh token", "token rotation"], user_id="ana")
    assert it.status is IntentionStatus.PENDING
    mem.observe("Bob wants refresh token support", user_id="bob", importance=0.9)
    mem.observe("refreshing tokens is hard", user_id="ana", importance=0.9)
    assert mem.intentions(user_id="ana", status="pending")[0].id == it.id
    trigger_ep = mem.observe("I'd like refresh token support please", user_id="ana", importance=0.9)
    fired = mem.intentions(user_id="ana", status="triggered")
    assert [i.id for i in fired] == [it.id]
    assert fired[0].triggered_by == trigger_ep
    done = mem.resolve_intention(it.id)
    assert done.status is IntentionStatus.RESOLVED
    assert mem.remember("refresh-token guide", user_id="ana", memory_types=["prospective"]) == []


def test_link_adds_typed_edges_and_neighbours_follow_them(mem: Memory) -> None:
    a = mem.observe("The build failed with an out-of-memory error", importance=0.9)
    b = mem.observe("We doubled the CI runner memory", importance=0.9)
    c = mem.observe("Unrelated lunch plans with Dana", importance=0.9, session_id="other")
    assert a and b and c
    mem.link(b, a, "caused_by", 0.9)
    near = [n for n, _, _ in mem.neighbours(a)]
    assert b in near and c not in near
    with pytest.raises(InvalidInputError):
        mem.link(a, b, "is_friends_with")
    with pytest.raises(InvalidInputError):
        mem.link(a, "missing")


def test_fired_intentions_surface_in_working_memory(folder, clock) -> None:
    from ucma_core.embedders import HashingEmbedder

    class Words:
        def count(self, text: str) -> int:
            return len(text.split())

    with Memory(folder, embedder=HashingEmbedder(), clock=clock, token_counter=Words()) as m:
        it = m.intend("Offer the refresh-token checklist", ["refresh token"], user_id="ana")
        m.working.add("You help with auth.", zone="system")
        m.observe("Can we add refresh token support?", user_id="ana", importance=0.9)
        reminders = [i for i in m.working.items("active") if i.slot == "reminder"]
        assert [r.memory_id for r in reminders] == [it.id]
        assert "[reminder] Offer the refresh-token checklist" in m.working.render_context()
