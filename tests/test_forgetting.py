"""Time travel with the injected clock: unused memories fade and go, used and protected ones stay."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ucma_core import Memory, MemoryConfig, ProcedureStatus
from ucma_core.config import ForgettingConfig
from ucma_core.dynamics.forgetting import verdict
from ucma_core.errors import InvalidInputError

CFG = ForgettingConfig()


def _attrs(**kw: object) -> dict[str, object]:
    base = {"memory_type": "episodic", "stability": 1.0, "last_access": 0.0, "importance": 0.3}
    return {**base, **kw}


def test_unused_memories_fade_and_go_while_used_ones_survive(mem: Memory, clock) -> None:
    unused = mem.observe("Ana mentioned the weather in Oslo was grey", user_id="ana", importance=0.3)
    used = mem.observe("Ana's train to Oslo leaves from platform 4", user_id="ana", importance=0.3)
    for _ in range(6):  # spaced reviews: every 4 days for 24 days
        clock.advance(days=4)
        assert used in [h.id for h in mem.remember("Ana's train platform", user_id="ana", k=1)]
    clock.advance(days=50)  # unused: R = exp(-74/16); used: stability grew with each spaced review
    preview = mem.prune(dry_run=True)
    assert unused in preview.forgotten and used not in preview.forgotten
    assert mem.get(unused) is not None  # dry run changed nothing
    report = mem.prune()
    assert report.forgotten == preview.forgotten and report.by_type == {"episodic": 1}
    assert mem.get(unused) is None and mem.get(used) is not None
    report_after = mem.verify()
    assert report_after.ok and report_after.keyword_rows == 1
    assert [r.id for r in mem.list_memories(time_range=(0, clock.now))] == [used]


def test_protected_memories_never_go(mem: Memory, clock) -> None:
    proc = mem.add_procedure("restart the router", ["unplug", "wait 30 s", "plug in"])
    for _ in range(4):
        mem.record_outcome(proc.id, True)
    lesson = mem.learn("Restarting fixes most wifi drops", confidence=0.6)
    mem.validate_learning(lesson.id, True)
    important = mem.observe("Ana's insulin dose is 12 units", importance=0.95)
    intention = mem.intend("remind Ana about the dentist", ["dentist"])
    faint = mem.observe("the cafe was busy", importance=0.25)
    clock.advance(days=2000)  # long enough for learned knowledge, which fades 8 times slower, too
    report = mem.prune()
    assert report.forgotten == (faint,)
    for kept in (proc.id, lesson.id, important, intention.id):
        assert mem.get(kept) is not None
    assert mem.get(proc.id).status is ProcedureStatus.ACTIVE  # type: ignore[union-attr]
    assert report.protected["working procedure"] == 1 and report.protected["validated learning"] == 1


def test_learned_knowledge_fades_slower_than_episodes(mem: Memory, clock) -> None:
    episode = mem.observe("Ana mentioned the bakery on Rua Augusta", importance=0.5)
    fact = mem.assert_fact("Ana", "likes", "the bakery on Rua Augusta", confidence=0.5, importance=0.5)
    clock.advance(days=120)  # the episode is long gone; the fact's stability counts 8 times over
    gone = mem.prune().forgotten
    assert episode in gone and fact.id not in gone


def test_a_pinned_memory_stays_until_unpinned(mem: Memory, clock) -> None:
    note = mem.observe("The spare key is under the blue pot", importance=0.3, user_id="ana")
    assert mem.pin(note, user_id="ana") and not mem.pin(note, user_id="bob") and not mem.pin("nope")
    clock.advance(days=365)
    report = mem.prune()
    assert note not in report.forgotten and report.protected == {"pinned": 1}
    assert mem.unpin(note)
    assert mem.prune().forgotten == (note,)


def test_fact_threshold_scales_with_confidence(mem: Memory, clock) -> None:
    sure = mem.assert_fact("Ana", "was born in", "Porto", confidence=1.0, importance=0.3)
    doubt = mem.assert_fact("Ana", "might like", "opera", confidence=0.1, importance=0.3)
    # both start with the same stability S, counted knowledge_decay_factor (F) times over; after
    # S * F * ln(10) days retention is 0.1, between the confident fact's threshold (0.1 * 0.5) and
    # the doubtful one's (0.1 * 1.4)
    assert sure.stability == doubt.stability
    clock.advance(days=sure.stability * CFG.knowledge_decay_factor * math.log(10))
    gone = mem.prune().forgotten
    assert doubt.id in gone and sure.id not in gone


def test_graph_central_memories_are_protected(keep_all: Memory, clock) -> None:
    hub = keep_all.observe("Project Atlas kickoff", importance=0.3)
    spokes = [keep_all.observe(f"Atlas task {i}", importance=0.3, session_id=f"s{i}") for i in range(8)]
    for spoke in spokes:
        keep_all.link(spoke, hub, "related_to", 1.0)
    clock.advance(days=60)
    report = keep_all.prune()
    assert hub not in report.forgotten
    assert set(spokes) <= set(report.forgotten)


def test_hard_ttl_expires_old_memories_regardless_of_protection(mem: Memory, clock) -> None:
    old = mem.observe("old but vital", importance=0.99, timestamp=clock.now - 90 * 86_400)
    new = mem.observe("fresh and vital", importance=0.99)
    assert mem.expire(timedelta(days=30), dry_run=True).forgotten == (old,)
    report = mem.expire(30 * 86_400.0, memory_types=["episodic"])
    assert report.forgotten == (old,) and mem.get(old) is None and mem.get(new) is not None
    with pytest.raises(InvalidInputError):
        mem.expire(-1)


def test_prune_respects_user_scope(mem: Memory, clock) -> None:
    a = mem.observe("Ana's note about lunch", user_id="ana", importance=0.3)
    b = mem.observe("Bob's note about lunch", user_id="bob", importance=0.3)
    clock.advance(days=60)
    assert mem.prune(user_id="bob").forgotten == (b,)
    assert mem.get(a) is not None


@settings(max_examples=200)
@given(
    kind=st.sampled_from(["episodic", "semantic", "procedural", "learning", "prospective"]),
    stability=st.floats(0.01, 1000),
    idle_days=st.floats(0, 10_000),
    importance=st.floats(0, 1),
    pagerank=st.floats(0, 1),
    confidence=st.floats(0, 1),
)
def test_forgetting_never_removes_protected_memories(
    kind, stability, idle_days, importance, pagerank, confidence
) -> None:
    protected_cases = [
        _attrs(memory_type=kind, pinned=True),
        _attrs(memory_type="semantic", about="user", confidence=max(confidence, CFG.profile_confidence)),
        _attrs(memory_type="semantic", about="relation", confidence=max(confidence, CFG.profile_confidence)),
        _attrs(memory_type="procedural", status="active", success_rate=0.51 + 0.49 * confidence),
        _attrs(memory_type="learning", validated=True),
        _attrs(memory_type="prospective", status="pending"),
        _attrs(memory_type="prospective", status="triggered"),
        _attrs(memory_type=kind, importance=max(importance, CFG.importance_protection)),
    ]
    for attrs in protected_cases:
        attrs.update(stability=stability, last_access=0.0)
        assert verdict(attrs, pagerank=pagerank, now=idle_days * 86_400, config=CFG) != "forget"
    central = _attrs(memory_type=kind, stability=stability, importance=importance)
    assert (
        verdict(
            central, pagerank=max(pagerank * 10, CFG.pagerank_protection), now=idle_days * 86_400, config=CFG
        )
        != "forget"
    )


def test_config_validation() -> None:
    from ucma_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        MemoryConfig(forgetting=ForgettingConfig(retention_threshold=0.0))
    with pytest.raises(ConfigurationError, match="knowledge_decay_factor"):
        ForgettingConfig(knowledge_decay_factor=0.5)
    with pytest.raises(ConfigurationError, match="profile_confidence"):
        ForgettingConfig(profile_confidence=1.5)
