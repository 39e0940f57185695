"""Each query-router rule, resolved against a fixed clock (Wednesday 2025-06-18 15:00 UTC)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ucma_core.retrieval.router import RouteKind, route
from ucma_core.validation import EPOCH_MIN

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
        ("before March", EPOCH_MIN, _day(2025, 3, 1)),  # memories dated before 1970 are before March too
        ("last month", _day(2025, 5, 1), _day(2025, 6, 1) - 1e-3),
        ("in the last 3 days", NOW - 3 * 86_400, NOW),
        ("in 2024", _day(2024, 1, 1), _day(2025, 1, 1) - 1e-3),
        ("on 2025-02-14", _day(2025, 2, 14), _day(2025, 2, 15) - 1e-3),
        ("on March 3rd", _day(2025, 3, 3), _day(2025, 3, 4) - 1e-3),
        ("on 3 March", _day(2025, 3, 3), _day(2025, 3, 4) - 1e-3),
        ("the 3rd of March", _day(2025, 3, 3), _day(2025, 3, 4) - 1e-3),
        ("last summer", _day(2024, 6, 1), _day(2024, 9, 1) - 1e-3),
        ("last winter", _day(2024, 12, 1), _day(2025, 3, 1) - 1e-3),
        ("what did we do last Christmas", _day(2024, 12, 24), _day(2024, 12, 27) - 1e-3),
        ("two years ago", _day(2023, 1, 1), _day(2024, 1, 1) - 1e-3),
        ("the weekend before 12 June", _day(2025, 6, 7), _day(2025, 6, 9) - 1e-3),
        ("the week after 2 June", _day(2025, 6, 3), _day(2025, 6, 10) - 1e-3),
        ("three days before 4 March", _day(2025, 3, 1), _day(2025, 3, 2) - 1e-3),
    ],
)
def test_time_expressions_resolve_against_the_clock(query: str, start: float, end: float) -> None:
    r = route(query, NOW)
    assert r.kind is RouteKind.TEMPORAL
    assert r.time_range == pytest.approx((start, end))


@pytest.mark.parametrize(
    "query",
    [
        "what did we say recently",
        "how is the knee lately",
        "any recent news",
        "which gym does she go to now",
        "what's the latest on the boat",
    ],
)
def test_vague_recency_is_a_preference_not_a_range(query: str) -> None:
    r = route(query, NOW)
    assert r.kind is RouteKind.TEMPORAL and r.time is not None and r.time.recency
    assert r.time_range == (EPOCH_MIN, NOW)  # everything up to now: newer is preferred, nothing is cut
    assert r.reason.startswith("recency")


def test_a_date_in_the_question_anchors_its_relative_phrase() -> None:
    r = route("what did she submit last Monday, on 3 March?", NOW)
    assert r.time_range == pytest.approx((_day(2025, 3, 3), _day(2025, 3, 4) - 1e-3))
    assert r.time is not None and r.time.anchored
    assert "anchoring 'last Monday'" in r.reason
    assert route("what did she submit last Monday?", NOW).time_range == pytest.approx(
        (_day(2025, 6, 16), _day(2025, 6, 17) - 1e-3)
    )


def test_time_words_leave_the_dense_topic_but_not_the_query() -> None:
    r = route("where did we go on the road trip last summer?", NOW)
    assert r.time is not None and r.time.words == "last summer"
    assert "last summer" not in r.topic and "road trip" in r.topic


def test_edges_are_graded() -> None:
    r = route("what did we do in May?", NOW)
    assert r.time is not None and r.time.span is not None
    span = r.time.span
    assert span.membership(_day(2025, 5, 15)) == 1.0
    assert 0.5 < span.membership(_day(2025, 6, 2)) < 1.0  # told a day after the month ended
    assert span.membership(_day(2025, 6, 20)) < 0.01


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
