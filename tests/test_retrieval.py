"""Each retrieval signal, the route on results, de-duplication and the embedding cache."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.config import FusionConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError
from ucma_core.retrieval.fusion import calibrated, fuse

DAY = 86_400.0


def test_keyword_signal_finds_rare_exact_terms_dense_misses(keep_all: Memory) -> None:
    target = keep_all.observe("the router serial number is QX-88213")
    for i in range(30):
        keep_all.observe(f"we chatted about the router and the wifi signal number {i}")
    hits = keep_all.remember("QX-88213", k=3)
    assert hits[0].id == target
    assert hits[0].signals["keyword"] > 0


def test_temporal_route_prefers_memories_inside_the_range(keep_all: Memory, clock) -> None:
    now = clock.now
    old = keep_all.observe("we discussed the garden fence", timestamp=now - 40 * DAY)
    recent = keep_all.observe("we discussed the garden fence again", timestamp=now - 1 * DAY)
    hits = keep_all.remember("what did we discuss about the fence yesterday?", k=2)
    assert hits[0].id == recent
    assert str(hits[0].route).startswith("temporal")
    assert hits[0].signals.get("time") == 1.0 and "time" not in hits[1].signals
    month_hits = keep_all.remember("garden fence in the last 3 months", k=2)
    assert {h.id for h in month_hits} == {old, recent}


def test_anchor_event_sets_the_range(keep_all: Memory, clock) -> None:
    now = clock.now
    before = keep_all.observe("Ana lived in a flat in Berlin Kreuzberg", timestamp=now - 300 * DAY)
    keep_all.observe("Ana moved to Lisbon, the big move finally happened", timestamp=now - 100 * DAY)
    after = keep_all.observe("Ana lives in a flat in Lisbon Alfama", timestamp=now - 50 * DAY)
    hits = keep_all.remember("where was Ana's flat after the big move?", k=3)
    assert hits[0].id == after
    assert hits[0].signals.get("time", 0) > 0.5
    assert "time" not in next(h for h in hits if h.id == before).signals
    assert "its day and session count as after it" in hits[0].route.reason


def test_speaker_signal(keep_all: Memory) -> None:
    carla = keep_all.observe("I think the adoption paperwork is nearly done", participants=["Carla"])
    keep_all.observe("I think the adoption paperwork will take months", participants=["Ben"])
    hits = keep_all.remember("What did Carla say about the adoption?", k=2)
    assert hits[0].id == carla and hits[0].signals.get("speaker") == 1.0


def test_entity_signal_brings_facts_and_their_episodes(mem: Memory) -> None:
    ep = mem.observe("My sister Marta just moved to Porto for work", user_id="ana", importance=0.9)
    fact = mem.assert_fact("Marta", "lives in", "Porto", user_id="ana", source_ids=[ep])
    for i in range(20):
        mem.observe(f"random note {i} about groceries and errands", user_id="ana", importance=0.9)
    hits = mem.remember("What do you know about Marta?", user_id="ana", k=3)
    ids = [h.id for h in hits]
    assert fact.id in ids and ep in ids
    assert str(hits[0].route).startswith("entity")
    assert next(h for h in hits if h.id == fact.id).signals["entity"] == 1.0


def test_procedural_route_surfaces_procedures(mem: Memory) -> None:
    proc = mem.add_procedure("reset a password", ["open settings", "choose security", "press reset"])
    for i in range(10):
        mem.observe(f"Ana reset her password on site {i} last month", importance=0.9)
    hits = mem.remember("how do I reset a password?", k=3)
    assert hits[0].id == proc.id and hits[0].signals.get("kind") == 1.0


def test_graph_expansion_brings_associated_memories(keep_all: Memory) -> None:
    cause = keep_all.observe("the nightly build ran out of disk space")
    effect = keep_all.observe("payments were delayed on Tuesday", session_id="other")
    keep_all.link(effect, cause, "caused_by", 1.0)
    hits = keep_all.remember("why was the nightly build failing", k=5)
    assert cause in [h.id for h in hits]
    linked = next((h for h in hits if h.id == effect), None)
    assert linked is not None and linked.signals.get("graph", 0) > 0


def test_route_can_be_overridden_and_is_validated(keep_all: Memory) -> None:
    keep_all.observe("we met yesterday about the budget")
    hits = keep_all.remember("budget yesterday", route="hybrid")
    assert str(hits[0].route).startswith("hybrid: set by caller") and "time" not in hits[0].signals
    with pytest.raises(InvalidInputError):
        keep_all.remember("budget", route="psychic")


def test_near_duplicates_do_not_crowd_the_top(keep_all: Memory) -> None:
    for _ in range(4):
        keep_all.observe("Ana's flight to Tokyo leaves at 9am on Friday")
    other = keep_all.observe("Ana's hotel in Tokyo is near Shinjuku station")
    hits = keep_all.remember("Ana Tokyo trip", k=3)
    assert sum(1 for h in hits if "flight" in h.content) == 1
    assert other in [h.id for h in hits]


def test_query_embeddings_hit_the_cache(keep_all: Memory) -> None:
    keep_all.observe("Ana likes green tea")
    before = keep_all.stats()["embedding_cache"]["hits"]
    keep_all.remember("what tea does Ana like")
    keep_all.remember("what tea does Ana like")
    assert keep_all.stats()["embedding_cache"]["hits"] > before


def test_fusion_is_normalised_and_ignores_signals_not_in_play() -> None:
    cfg = FusionConfig(
        dense=1.0, keyword=1.0, entity=0.5, speaker=0.5, graph=0.5, dense_floor=0.0, rank_fusion=0.0
    )
    signals = {"a": {"dense": 0.8, "keyword": 12.0}, "b": {"dense": 0.4, "keyword": 3.0, "speaker": 1.0}}
    without_speaker = fuse(signals, cfg, {"dense", "keyword"})
    assert without_speaker["a"] == pytest.approx(1.0)
    assert without_speaker["b"] == pytest.approx((0.5 + 0.25) / 2)
    with_speaker = fuse(signals, cfg, {"dense", "keyword", "speaker"})
    assert with_speaker["a"] == pytest.approx(2.0 / 2.5)
    assert with_speaker["b"] == pytest.approx((0.5 + 0.25 + 0.5) / 2.5)
    assert all(0.0 <= v <= 1.0 for v in with_speaker.values())


def test_dense_scores_are_spread_above_a_floor_and_ranks_blend_in() -> None:
    # twenty short generic candidates bunched at the top of dense search, and a specific one that
    # only keyword search ranks first
    signals = {f"g{i}": {"dense": 0.60 + i * 0.001} for i in range(20)}
    signals["specific"] = {"dense": 0.30, "keyword": 9.0}
    spread = calibrated(signals, FusionConfig(dense_floor=0.5))
    assert spread["g0"]["dense"] == 0.0 and spread["g19"]["dense"] == pytest.approx(1.0)
    assert calibrated(signals, FusionConfig(dense_floor=0.0))["g0"]["dense"] == pytest.approx(0.6 / 0.619)
    by_score = fuse(signals, FusionConfig(dense_floor=0.0, rank_fusion=0.0), {"dense", "keyword"})
    assert max(by_score, key=by_score.__getitem__) != "specific"  # scores alone: a generic turn wins
    by_rank = fuse(signals, FusionConfig(dense_floor=0.25, rank_fusion=0.5), {"dense", "keyword"})
    assert max(by_rank, key=by_rank.__getitem__) == "specific"  # first by keyword outweighs tied generics


def test_config_rejects_bad_fusion_weights() -> None:
    from ucma_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        FusionConfig(dense=0.0, keyword=0.0)
    with pytest.raises(ConfigurationError):
        MemoryConfig(timezone="Mars/Olympus")


def test_results_carry_the_route(tmp_path) -> None:
    now = datetime(2025, 6, 18, tzinfo=timezone.utc).timestamp()
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        clock=lambda: now,
        config=MemoryConfig(importance_threshold=0.0),
    ) as m:
        m.observe("we planned the offsite")
        assert str(m.remember("what did we plan last week?")[0].route).startswith("temporal: time: last week")


def test_tags_filter_candidates_found_only_by_keyword_or_graph(keep_all: Memory) -> None:
    tagged = keep_all.observe("invoice ZX-99 for the boiler", tags=["home"])
    untagged = keep_all.observe("invoice ZX-99 copy for the accountant")
    keep_all.link(untagged, tagged, "related_to", 1.0)
    hits = keep_all.remember("ZX-99", k=5, tags=["home"])
    assert [h.id for h in hits] == [tagged]


def test_ranking_reads_live_state_from_the_graph(keep_all: Memory, clock) -> None:
    fact = keep_all.assert_fact("Ana", "lives in", "Porto")
    assert fact.id in [h.id for h in keep_all.remember("where does Ana live", k=3)]
    clock.advance(seconds=60)
    keep_all.assert_fact("Ana", "lives in", "Lisbon", exclusive=True)  # Porto ends now
    ids = [h.id for h in keep_all.remember("where does Ana live", k=3)]
    assert fact.id not in ids


def test_remember_runs_on_the_callers_thread(folder, clock) -> None:
    # the keyword search runs on the caller's thread while Chroma's query runs on its own;
    # the only thread a remember starts writes its access marks later (stores/accessmarks.py)
    m = Memory(folder, embedder=HashingEmbedder(), clock=clock)
    m.observe("a memory to search", importance=0.9)
    m.flush()
    before = {t.ident for t in threading.enumerate()}
    assert [r.content for r in m.remember("memory")] == ["a memory to search"]
    assert {t.ident for t in threading.enumerate() if t.name != "ucma-access-marks"} <= before
    m.close()
