"""Each query-router rule, resolved against a fixed clock (Wednesday 2025-06-18 15:00 UTC)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ucma_core.retrieval.router import RouteKind, route

NOW = datetime(2025, 6, 18, 15, 0, tzinfo=timezone.utc).timestamp()


def _day(y: int, m: int, d: int, h: int = 0) -> float:
    return datetime(y, m, d, h, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("what did we discuss today?", _day(2025, 6, 18), NOW),
        ("what did I eat yesterday?", _day(2025, 6, 17), _day(2025, 6, 18) - 1e-3),
        ("What happened last week?", _day(2025, 6, 9), _day(2025, 6, 16) - 1e-3),
        ("anything this week?", _day(2025, 6, 16), NOW),
        ("what did Ana do in May?", _day(2025, 5, 1), _day(2025, 6, 1) - 1e-3),
        ("plans in September", _day(2024, 9, 1), _day(2024, 10, 1) - 1e-3),
        ("in May 2023", _day(2023, 5, 1), _day(2023, 6, 1) - 1e-3),
        ("3 days ago", _day(2025, 6, 15), _day(2025, 6, 16) - 1e-3),
        ("what happened on Monday", _day(2025, 6, 16), _day(2025, 6, 17) - 1e-3),
        ("what happened on Wednesday", _day(2025, 6, 11), _day(2025, 6, 12) - 1e-3),
        ("since March", _day(2025, 3, 1), NOW),
        ("before March", 0.0, _day(2025, 3, 1)),
        ("last month", _day(2025, 5, 1), _day(2025, 6, 1) - 1e-3),
        ("in the last 3 days", NOW - 3 * 86_400, NOW),
        ("in 2024", _day(2024, 1, 1), _day(2025, 1, 1) - 1e-3),
        ("on 2025-02-14", _day(2025, 2, 14), _day(2025, 2, 15) - 1e-3),
        ("on March 3rd", _day(2025, 3, 3), _day(2025, 3, 4) - 1e-3),
        ("what did we say recently", NOW - 14 * 86_400, NOW),
    ],
)
def test_time_expressions_resolve_against_the_clock(query: str, start: float, end: float) -> None:
    r = route(query, NOW)
    assert r.kind is RouteKind.TEMPORAL
    assert r.time_range == pytest.approx((start, end))


def test_relative_weeks_ago_is_a_window_around_that_week() -> None:
    r = route("two weeks ago we talked about tents", NOW)
    assert r.time_range is not None
    lo, hi = r.time_range
    assert lo == pytest.approx(NOW - 2.5 * 7 * 86_400) and hi == pytest.approx(NOW - 1.5 * 7 * 86_400)


def test_timezone_moves_day_boundaries() -> None:
    r = route("yesterday", NOW, timezone="America/New_York")
    assert r.time_range is not None
    assert r.time_range[0] == pytest.approx(datetime(2025, 6, 17, 4, tzinfo=timezone.utc).timestamp())


def test_when_questions_and_event_anchors_are_temporal_without_a_range() -> None:
    r = route("When did Ana move to Lisbon?", NOW)
    assert r.kind is RouteKind.TEMPORAL and r.time_range is None
    a = route("Where did Ana live before the move to Lisbon?", NOW)
    assert a.kind is RouteKind.TEMPORAL and a.anchor == "the move to Lisbon" and a.anchor_side == "before"
    b = route("what changed after our trip to Rome?", NOW)
    assert b.anchor == "our trip to Rome" and b.anchor_side == "after"


@pytest.mark.parametrize(
    "query",
    [
        "How do I reset my password?",
        "how to deploy the service",
        "steps to rotate keys",
        "What are the steps to onboard a hire?",
        "walk me through the release",
    ],
)
def test_how_to_questions_go_to_procedures(query: str) -> None:
    assert route(query, NOW).kind is RouteKind.PROCEDURAL


@pytest.mark.parametrize(
    ("query", "entity"),
    [
        ("What do you know about Marta?", "Marta"),
        ("who is Bill", "Bill"),
        ("Tell me about the Lisbon office", "Lisbon office"),
    ],
)
def test_entity_questions_name_the_entity(query: str, entity: str) -> None:
    r = route(query, NOW)
    assert r.kind is RouteKind.ENTITY and r.entity == entity


def test_speaker_is_found_and_other_queries_are_hybrid() -> None:
    r = route("What did Caroline say about the adoption?", NOW)
    assert r.kind is RouteKind.HYBRID and r.speaker == "Caroline"
    assert route("according to Bob, is the API stable?", NOW).speaker == "Bob"
    assert route("What did you say about it?", NOW).speaker is None
    plain = route("Ana's favourite band", NOW)
    assert plain.kind is RouteKind.HYBRID and plain.time_range is None and plain.speaker is None
    assert route("I may go hiking", NOW).kind is RouteKind.HYBRID
