"""The sleep cycle with offline providers, a failing provider, and the OpenAI provider on loopback."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from tests.openai_server import FakeOpenAIServer, malformed
from ucma_core import Fact, Memory, MemoryConfig, Tier
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError, ProviderError
from ucma_core.providers import OfflineProvider, OpenAIProvider
from ucma_core.storage.graph import EdgeType

DAY = 86_400.0
STORY = [
    ("user", "I'm Ana and I live in Berlin."),
    ("user", "I work at Initech as a nurse."),
    ("assistant", "Nice to meet you Ana!"),
    ("user", "JWT tokens expire after 5 minutes instead of 30."),
    ("user", "I suspect clock skew between the servers."),
    ("tool", "Added a 60-second leeway to jwt.decode()."),
    ("user", "Fixed, it works now!"),
    ("user", "ok thanks"),
    ("user", "ok thanks"),
]


def _story(mem: Memory, clock: Any) -> list[str]:
    ids = []
    for src, text in STORY:
        ids.append(mem.observe(text, source=src, user_id="ana", session_id="s1", importance=0.5))
        clock.advance(seconds=30)
    clock.advance(days=3)
    ids.append(mem.observe("I moved to Lisbon last month.", user_id="ana", session_id="s2", importance=0.8))
    clock.advance(days=1)
    return [i for i in ids if i]


def test_a_cycle_compresses_groups_extracts_supersedes_and_learns(keep_all: Memory, clock) -> None:
    ids = _story(keep_all, clock)
    report = keep_all.consolidate()
    assert report.errors == [] and not report.interrupted
    p = report.phases
    assert p["compress"]["moved_to_medium_term"] == 9
    assert p["group"] == {"consolidated_episodes": 1, "episodes_grouped": 9}
    assert p["extract"]["superseded"] == 1
    assert p["patterns"] == {"procedures": 1, "learnings": 1}
    assert p["merge"]["merged"] == 1  # the repeated "ok thanks"

    originals = ids[:9]
    summary_id = keep_all.get(originals[0]).consolidated_into  # type: ignore[union-attr]
    summary = keep_all.get(summary_id)  # type: ignore[arg-type]
    assert summary is not None and summary.source == "consolidation" and summary.tier is Tier.MEDIUM_TERM
    assert set(summary.source_ids) == set(originals)
    linked = {
        v for _, v, _, _ in keep_all.edges(summary.id, edge_type=EdgeType.CONSOLIDATES, direction="out")
    }
    assert linked == set(originals) - {originals[8]}  # the merged duplicate is gone, its twin stays
    assert keep_all.get(originals[0]).tier is Tier.MEDIUM_TERM  # type: ignore[union-attr]

    current = {(f.predicate, f.object) for f in keep_all.facts_about("Ana", user_id="ana")}
    assert ("lives in", "Lisbon") in current and ("lives in", "Berlin") not in current
    history = keep_all.facts_about("Ana", user_id="ana", include_superseded=True)
    berlin = next(f for f in history if f.object == "Berlin")
    lisbon = next(f for f in history if f.object == "Lisbon")
    assert berlin.valid_to == lisbon.valid_from and berlin.superseded_by == lisbon.id
    assert berlin.source_ids == (originals[0],)
    hits = keep_all.remember("where does Ana live", user_id="ana", memory_types=["semantic"])
    assert [h.content for h in hits if "lives in" in h.content] == [lisbon.content]

    procedures = keep_all.find_procedures(["jwt"], user_id="ana")
    assert procedures and "leeway" in " ".join(procedures[0].steps).lower()
    assert procedures[0].source == "consolidation"


def test_second_cycle_does_not_redo_work(keep_all: Memory, clock) -> None:
    _story(keep_all, clock)
    keep_all.consolidate()
    again = keep_all.consolidate()
    assert again.phases["extract"] == {} and again.phases["group"] == {} and again.phases["patterns"] == {}


def test_generated_memories_can_be_left_out_or_down_weighted(keep_all: Memory, clock) -> None:
    _story(keep_all, clock)
    keep_all.consolidate()
    everything = keep_all.remember("JWT clock skew leeway", user_id="ana", k=20)
    observed = keep_all.remember("JWT clock skew leeway", user_id="ana", k=20, include_generated=False)
    assert any(h.record.source == "consolidation" for h in everything)
    assert observed and all(h.record.source in ("user", "tool", "environment") for h in observed)


class FlakyProvider(OfflineProvider):
    """Fails fact extraction ``failures`` times, then behaves."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.calls = 0

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[Any]]:
        self.calls += 1
        if self.failures:
            self.failures -= 1
            raise ProviderError("model unavailable")
        return super().extract_facts(texts, speakers=speakers)


def test_provider_failure_leaves_episodes_for_the_next_cycle(folder, clock) -> None:
    provider = FlakyProvider(failures=1)
    with Memory(
        folder,
        embedder=HashingEmbedder(),
        clock=clock,
        provider=provider,
        config=MemoryConfig(importance_threshold=0.0),
    ) as mem:
        mem.observe("I live in Berlin.", user_id="ana")
        first = mem.consolidate(phases=["extract"])
        assert first.errors and "model unavailable" in first.errors[0]
        assert mem.facts_about("the user", user_id="ana") == []
        second = mem.consolidate(phases=["extract"])
        assert second.errors == [] and second.phases["extract"]["facts"] == 1
        assert [f.object for f in mem.facts_about("the user", user_id="ana")] == ["Berlin"]


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """A well-behaved model: answers every UCMA task in the shape the provider asks for."""
    system, user = body["messages"][0]["content"], json.loads(body["messages"][1]["content"])
    if "summaries" in system:
        return {
            "items": [{"index": g["index"], "summary": " ".join(g["texts"])[:80]} for g in user["groups"]]
        }
    if "triples" in system:
        return {
            "items": [
                {
                    "index": it["index"],
                    "facts": [
                        {
                            "subject": it["speaker"],
                            "predicate": "lives in",
                            "object": "Lisbon",
                            "confidence": 0.9,
                        }
                    ]
                    if "Lisbon" in it["text"]
                    else [],
                }
                for it in user["items"]
            ]
        }
    if "procedure" in system:
        return {"procedure": None}
    if "lesson" in system:
        return {"learning": None}
    return {"items": [{"index": it["index"], "conflict": True} for it in user.get("items", [])]}


def test_openai_provider_cycle_retries_malformed_answers_next_cycle(folder, clock) -> None:
    with FakeOpenAIServer() as server:
        provider = OpenAIProvider(api_key="test", base_url=server.url, max_retries=0, sleep=lambda s: None)
        with Memory(
            folder,
            embedder=HashingEmbedder(),
            clock=clock,
            provider=provider,
            config=MemoryConfig(importance_threshold=0.0),
        ) as mem:
            episode = mem.observe("We finally moved to Lisbon!", user_id="ana", participants=["Ana"])
            server.script(malformed(), path="/v1/chat/completions")
            first = mem.consolidate(phases=["extract"])
            assert first.errors and mem.facts_about("Ana", user_id="ana") == []
            server.on_chat = _answer
            second = mem.consolidate(phases=["extract"])
            assert second.errors == []
            facts = mem.facts_about("Ana", user_id="ana")
            assert [(f.predicate, f.object, f.source_ids) for f in facts] == [
                ("lives in", "Lisbon", (episode,))
            ]
            # observe never called the model: every chat request came from consolidate
            assert len(server.requests_to("/v1/chat/completions")) == 2


def test_cycle_is_interruptible_and_resumes(keep_all: Memory, clock) -> None:
    _story(keep_all, clock)
    stop = threading.Event()
    stop.set()
    report = keep_all.consolidate(stop=stop)
    assert report.interrupted and report.phases == {}
    partial = keep_all.consolidate(phases=["compress", "group"])
    assert not partial.interrupted and partial.phases["group"]["consolidated_episodes"] == 1
    rest = keep_all.consolidate()
    assert rest.phases["group"] == {} and rest.phases["extract"]["facts"] >= 1
    with pytest.raises(InvalidInputError):
        keep_all.consolidate(phases=["dream"])


def test_background_consolidation_runs_without_blocking_reads_and_writes(keep_all: Memory, clock) -> None:
    _story(keep_all, clock)
    keep_all.start_consolidation(interval_seconds=0.05)
    try:
        with pytest.raises(InvalidInputError):
            keep_all.start_consolidation(1.0)
        deadline = time.monotonic() + 10
        while keep_all.last_consolidation is None and time.monotonic() < deadline:
            keep_all.observe("still talking while the memory sleeps", user_id="ana")
            keep_all.remember("talking", user_id="ana")
            time.sleep(0.01)
        assert keep_all.last_consolidation is not None
        assert keep_all.consolidation_running
    finally:
        assert keep_all.stop_consolidation()
    assert not keep_all.consolidation_running


def test_working_memory_items_move_to_long_term(folder, clock) -> None:
    class Words:
        def count(self, text: str) -> int:
            return len(text.split())

    with Memory(folder, embedder=HashingEmbedder(), clock=clock, token_counter=Words()) as mem:
        important = mem.working.set_slot(
            "t", "plan", "Book the Lisbon flat viewing for Friday", relevance=0.9
        )
        casual = mem.working.add("scratch note", importance=0.2)
        assert important and casual
        report = mem.consolidate(phases=["transitions"])
        assert report.phases["transitions"]["moved_to_long_term"] == 1
        stored = mem.working.get(important.id)
        assert stored is not None and stored.memory_id is not None
        assert mem.get(stored.memory_id).content == "Book the Lisbon flat viewing for Friday"  # type: ignore[union-attr]
        assert mem.consolidate(phases=["transitions"]).phases["transitions"] == {}


def test_weeks_without_use_fade_memories_during_the_cycle(mem: Memory, clock) -> None:
    faint = mem.observe("the cafe on the corner was busy", importance=0.25)
    kept = mem.observe("the cafe on the corner sells Ana's favourite cake", importance=0.6)
    for _ in range(5):
        clock.advance(days=10)
        mem.remember("Ana's favourite cake", k=1)
    report = mem.consolidate()
    assert faint in mem.prune(dry_run=True).forgotten or report.phases["prune"]["forgotten"] >= 1
    assert mem.get(kept) is not None
    assert isinstance(mem.facts_about, object) and Fact  # records stay importable
