"""Every rule that reads text is total: any text gives a result or nothing, never an exception,
and never a time outside what the clock and ``datetime`` can hold.

Property tests (hypothesis) feed each rule arbitrary text and number-heavy phrases (huge
day counts, years before the year 1, ordinals, decimals, ranges, unicode digits) read
against clocks anywhere in the range UCMA accepts (``EPOCH_MIN`` .. ``EPOCH_MAX``) and in
time zones far west and east of UTC. Regression tests pin each crash found.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma_core import Memory, MemoryConfig
from ucma_core.conversation import clean_text, memory_tools, recall_query, render_memories
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError, ProviderError
from ucma_core.importance import HeuristicImportance
from ucma_core.outcomes import outcome
from ucma_core.providers import ExtractedFact, ExtractedProcedure, LLMProvider, OfflineProvider
from ucma_core.retrieval.filters import check_metadata_filter, metadata_matches
from ucma_core.retrieval.markers import about_user
from ucma_core.retrieval.router import Route, RouteKind, route
from ucma_core.retrieval.timefit import TimeAsk, fit
from ucma_core.retrieval.timesignal import Span, TimePhrase, mentions, read, strip
from ucma_core.validation import EPOCH_MAX, EPOCH_MIN

DAY = 86_400.0
NOW = datetime(2025, 6, 18, 15, 0, tzinfo=timezone.utc).timestamp()
FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ strategies
_UNICODE_DIGITS = ["٣", "۷", "४", "๓", "１２", "𝟗", "²", "½", "Ⅻ", "০৯"]
_NUMBER_WORDS = ["a", "an", "a few", "several", "a couple of", "twelve", "zero", "none"]
numbers = st.one_of(
    st.integers(-(10**15), 10**15).map(str),
    st.sampled_from(["0", "00", "0000", "1", "9999", "10000", "99999", "4000", "1e308", "1e9", "-5", "+3"]),
    st.text(alphabet="0123456789", min_size=6, max_size=5000),  # huge digit strings
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(_UNICODE_DIGITS + _NUMBER_WORDS),
)
_TEMPLATES = [
    "{n} days ago", "{n} day ago", "{n} weeks ago", "{n} months ago", "{n} years ago",
    "about {n} years ago", "the oldest pyramids were built about {n} years ago",
    "last {n} days", "last {n} weeks", "last {n} months",
    "in the last {n} years", "over the past {n} years", "{n} days before March 4, 2025",
    "{n} weeks after 2025-03-04", "{n} months before the 4th of March 2025", "the weekend before {n} June",
    "the {n}th of March", "the {n}th", "the {n}st", "March {n}, 2025", "March {n}", "{n} March {m}",
    "{n}-{m}-{n}", "{m}-{n}-{n}", "in the year {n}", "in {n}", "since {n}", "before {n}", "after {n}",
    "back in {n}", "in March {n}", "since March {m}", "before March {m}", "summer of {m}",
    "last summer {m}", "from {n} BC to {m} BC", "between {n} and {m} years ago", "{n}-{m} days ago",
    "{n}–{m} weeks ago", "{n} to {m} days ago", "{n} weeks", "{n} hours", "{n}:{m}", "{n}%",
    "{n}.{m} days ago",
    "I am {n} years old", "I'm {n}", "I turned {n}", "she is {n}", "step {n}", "{n}. mix it {m}. bake it",
    "set the oven to {n} degrees, then wait {m} minutes", "I ran {n} km in {m} minutes",
    "it costs ${n}.{m}", "version {n}.{m}.{n}", "meeting at {n}:{m} pm on Monday", "every {n} days",
    "remind me in {n} days", "{n}th anniversary", "the {n}th time it failed, still failing",
    "on {n}/{m}/{n}", "Q{n} {m}", "FY{m}", "{n}s", "the {m}s", "around {n} AD", "last night at {n}",
    "recently {n}", "what is new right now, {m}?", "before Christmas {n}", "{n} weeks before last Christmas",
]  # fmt: skip
phrases = st.builds(
    lambda template, n, m: template.format(n=n, m=m), st.sampled_from(_TEMPLATES), numbers, numbers
)
_MONTHS = ["March", "Dec", "sept.", "May"]
texts = st.one_of(
    st.text(max_size=300),
    phrases,
    st.lists(st.one_of(phrases, st.text(max_size=40), st.sampled_from(_MONTHS)), max_size=5).map(" ".join),
)
moments = st.one_of(
    st.sampled_from([EPOCH_MIN, EPOCH_MIN + 1.0, EPOCH_MIN + DAY, EPOCH_MAX, EPOCH_MAX - 1.0, 0.0, NOW]),
    st.floats(min_value=EPOCH_MIN, max_value=EPOCH_MAX, allow_nan=False),
)
ZONES: list[tzinfo] = [
    timezone.utc,
    timezone(timedelta(hours=-12)),
    timezone(timedelta(hours=14)),
    ZoneInfo("America/Los_Angeles"),
    ZoneInfo("Asia/Kolkata"),
]
zones = st.sampled_from(ZONES)


def _check_span(span: Span | None) -> None:
    if span is None:
        return
    for value in (span.start, span.end, span.margin):
        assert math.isfinite(value)
    assert EPOCH_MIN <= span.start <= span.end <= EPOCH_MAX, span
    assert span.margin >= 0
    for at in (EPOCH_MIN, NOW, EPOCH_MAX):
        assert 0.0 <= span.membership(at) <= 1.0


def _check_phrase(text: str, phrase: TimePhrase) -> None:
    assert 0 <= phrase.begin <= phrase.end <= len(text)
    assert phrase.words == text[phrase.begin : phrase.end].strip()
    assert isinstance(phrase.label, str)
    _check_span(phrase.span)
    assert isinstance(strip(text, phrase), str)


# ------------------------------------------------------------------ the time grammar
@FAST
@given(texts, moments, zones)
def test_reading_a_question_is_total(text: str, now: float, tz: tzinfo) -> None:
    found = read(text, now, tz)
    if found is not None:
        _check_phrase(text, found)


@FAST
@given(texts, moments, zones)
def test_reading_a_memory_is_total(text: str, at: float, tz: tzinfo) -> None:
    for phrase in mentions(text, at, tz):
        assert phrase.span is not None
        _check_phrase(text, phrase)


@FAST
@given(texts, moments, st.sampled_from([None, "UTC", "Pacific/Kiritimati", "Etc/GMT+12", "Europe/Lisbon"]))
def test_routing_is_total(query: str, now: float, tz: str | None) -> None:
    decided = route(query, now, timezone=tz)
    assert isinstance(decided, Route) and isinstance(decided.kind, RouteKind)
    if decided.time_range is not None:
        start, end = decided.time_range
        assert math.isfinite(start) and math.isfinite(end) and start <= end
        assert start >= EPOCH_MIN and end <= EPOCH_MAX
    if decided.time is not None:
        _check_phrase(query, decided.time)


@FAST
@given(
    st.sampled_from(["last week", "yesterday", "in March", "two years ago", "since 2020"]),
    texts,
    moments,
    zones,
)
def test_fitting_a_memory_to_a_time_is_total(question: str, text: str, at: float, tz: tzinfo) -> None:
    asked = read(question, NOW, tz)
    assert asked is not None and asked.span is not None
    fits = fit(TimeAsk(asked.span, asked.words), {"m": at}, {"m": text}, tz)
    assert 0.0 <= fits["m"] <= 1.0


# ------------------------------------------------------------------ facts, procedures, lessons, outcomes
_PROVIDER = OfflineProvider()


@FAST
@given(st.lists(texts, min_size=1, max_size=4), st.sampled_from([None, "Ana", "", "user-42"]))
def test_offline_provider_rules_are_total(episodes: list[str], speaker: str | None) -> None:
    facts = _PROVIDER.extract_facts(episodes, speakers=[speaker] * len(episodes))
    assert len(facts) == len(episodes)
    flat = [f for found in facts for f in found]
    assert all(isinstance(f, ExtractedFact) for f in flat)
    if len(flat) >= 2:
        assert len(_PROVIDER.conflicts([(flat[0], flat[1])])) == 1
    procedure = _PROVIDER.extract_procedure(episodes)
    assert procedure is None or isinstance(procedure, ExtractedProcedure)
    for succeeded in (True, False):
        lesson = _PROVIDER.distill_learning(episodes, succeeded=succeeded)
        assert lesson is None or 0.0 <= lesson.confidence <= 1.0
    [summary] = _PROVIDER.summarize([episodes], max_words=12)
    assert len(summary.split()) <= 12


@FAST
@given(texts, st.sampled_from(["user", "assistant", "system", "tool", "consolidation", "import"]))
def test_importance_is_a_number_in_range(text: str, source: str) -> None:
    score = HeuristicImportance().score_importance(text, source=source)
    assert math.isfinite(score) and 0.0 <= score <= 1.0
    assert _PROVIDER.score_importance(text, source=source) == score


@FAST
@given(texts)
def test_outcomes_and_query_markers_are_total(text: str) -> None:
    assert outcome(text) in (None, "success", "failure")
    assert isinstance(about_user(text), bool)


# a model's answer: arbitrary text, or JSON of the right shape holding arbitrary values
_JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**400), 10**400),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = ["index", "facts", "summary", "conflict", "subject", "predicate", "object", "confidence",
           "revises", "replaces", "importance", "procedure", "learning", "name", "steps", "title",
           "insight", "learning_type", "applicability", "trigger_tags"]  # fmt: skip
_SHAPED = st.recursive(
    _JSON_VALUES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_FIELDS), inner, max_size=6)
    ),
    max_leaves=20,
)
answers = st.one_of(
    st.text(max_size=200),
    st.builds(lambda items: json.dumps({"items": items}), _SHAPED),
    st.builds(lambda key, value: json.dumps({key: value}), st.sampled_from(_FIELDS), _SHAPED),
    st.builds(json.dumps, _SHAPED),
)


class _Scripted:
    """A chat model that answers every request with one given text."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def complete(self, system: str, user: str) -> str:
        return self.answer


@FAST
@given(answers)
def test_reading_a_models_answer_is_total(answer: str) -> None:
    provider = LLMProvider(_Scripted(answer), max_attempts=1, llm_importance=True, sleep=lambda _: None)
    fact = ExtractedFact("Ana", "lives in", "Lisbon", 0.9)
    calls = [
        lambda: provider.score_importance("I moved to Porto", source="user"),
        lambda: provider.summarize([["a", "b"]], max_words=5),
        lambda: provider.extract_facts(["I live in Porto"], speakers=["Ana"]),
        lambda: provider.extract_procedure(["how do I reset it?", "hold the button"]),
        lambda: provider.distill_learning(["it broke", "restarted, works"], succeeded=True),
        lambda: provider.conflicts([(fact, fact)]),
    ]
    for call in calls:
        # an unusable answer is a ProviderError that says what was wrong, never a raw exception
        with contextlib.suppress(ProviderError):
            call()


# ------------------------------------------------------------------ conversation text and filters
@FAST
@given(texts)
def test_conversation_text_rules_are_total(text: str) -> None:
    cleaned, removed = clean_text(text)
    assert isinstance(cleaned, str) and all(isinstance(r, str) for r in removed)
    assert isinstance(recall_query(text), str)


_SCALARS = st.one_of(
    st.integers(-(10**400), 10**400),
    st.sampled_from([10**400, -(10**400), 2**1024, 0, -0.0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.booleans(),
)


@FAST
@given(
    st.dictionaries(st.text(min_size=1, max_size=5), _SCALARS, max_size=3),
    st.text(min_size=1, max_size=5),
    st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]),
    _SCALARS,
)
def test_metadata_filters_compare_any_numbers(
    metadata: dict[str, object], key: str, op: str, operand: object
) -> None:
    value = [operand] if op in ("$in", "$nin") else operand
    conditions = check_metadata_filter({key: {op: value}})
    metadata.setdefault(key, operand)
    assert isinstance(metadata_matches(metadata, conditions), bool)


# ------------------------------------------------------------------ regressions, one per crash found
@pytest.mark.parametrize(
    "text",
    [
        "the oldest pyramids were built about 4000 years ago",  # ValueError: year -1975 is out of range
        "99999999999 days ago",  # OverflowError: date value out of range (timedelta)
        "9" * 5000 + " days ago",  # ValueError: exceeds the limit (4300 digits) for integer string conversion
        "the dinosaurs died out 66000000 years ago",
        "about 2026 years ago",  # the year 0
    ],
)
def test_a_time_before_the_year_1_names_no_time(text: str) -> None:
    assert mentions(text, NOW, timezone.utc) == []
    assert read(text, NOW, timezone.utc) is None


@pytest.mark.parametrize(
    ("question", "until"),
    [
        ("what happened before 1950?", datetime(1950, 1, 1)),
        ("anything before March 1960?", datetime(1960, 3, 1)),
    ],
)
def test_before_a_time_before_1970_is_a_proper_span(question: str, until: datetime) -> None:
    found = read(question, NOW, timezone.utc)
    assert found is not None and found.span is not None
    _check_span(found.span)  # was Span(0.0, <1950>): start after end
    assert found.span.start == EPOCH_MIN
    assert found.span.end == until.replace(tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize("tz", ZONES)
def test_a_clock_at_the_first_moment_still_reads(tz: tzinfo) -> None:
    for text in ("yesterday", "last week", "last Christmas", "3 days ago", "on Monday", "in March"):
        found = read(text, EPOCH_MIN, tz)
        if found is not None:
            _check_span(found.span)
        for phrase in mentions(text, EPOCH_MIN, tz):
            _check_span(phrase.span)


def test_huge_numbers_in_a_metadata_filter_compare_without_overflow() -> None:
    conditions = check_metadata_filter({"n": {"$gt": 10**400}})
    assert metadata_matches({"n": 1.5}, conditions) is False
    assert metadata_matches({"n": 10**401}, conditions) is True


# ------------------------------------------------------------------ remember over hostile text
_HOSTILE = [
    "the oldest pyramids were built about 4000 years ago",
    "99999999999 days ago I planted a tree",
    "in the year 0 nothing happened",
    "she finished 10000th in the race",
    "we waited 1e308 weeks for the bus",
    "from 3000 BC to 2500 BC the climate changed",
    "-5 days ago it rained",
    "in the last 1e9 months prices rose",
    "٣ days ago I met Sam",
    "9" * 4400 + " years ago",
    "the 2nd of March 1900, 12000 weeks before 2025-03-04",
    "I turned 999 and moved 3.5 km, version 1.2.3 costs $4.99",
    "last Christmas, the weekend before 31 December, 3 days after February 29 2023",
]
_QUESTIONS = [
    "what did I do last week?",
    "what happened yesterday?",
    "what did I do in March?",
    "what happened two years ago?",
    "what happened 4000 years ago?",
    "anything 99999999999 days ago?",
    "what happened before 1950?",
    "what did I do recently?",
    "what happened in the last 3 days?",
]


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Memory]:
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        clock=lambda: NOW,
        config=MemoryConfig(importance_threshold=0.0),
    ) as mem:
        stamps = [NOW - 3 * DAY, NOW - 400 * DAY, EPOCH_MIN, EPOCH_MAX]
        mem.observe_many(
            [
                {"content": text, "timestamp": stamps[i % len(stamps)], "user_id": "ana"}
                for i, text in enumerate(_HOSTILE)
            ]
        )
        yield mem


def test_remember_with_a_time_question_answers_over_any_text(hostile: Memory) -> None:
    for question in _QUESTIONS:
        for now in (NOW, EPOCH_MIN, EPOCH_MAX):
            hits = hostile.remember(question, user_id="ana", now=now, k=20)
            assert hits, (question, now)
            block = render_memories(hits, now=now, timezone="America/Los_Angeles")
            assert block.startswith("Relevant memories:")


def test_the_recall_tool_reads_any_time_phrase(hostile: Memory) -> None:
    recall = next(t for t in memory_tools(hostile, user_id="ana") if t.name == "recall_memory")
    for phrase in ("4000 years ago", "99999999999 days ago", "last week", "in the year 0", "٣ days ago"):
        try:
            answer = recall.func(query="pyramids", time_phrase=phrase)
        except InvalidInputError:
            continue  # a phrase the tool cannot read is refused with a message, never a crash
        assert isinstance(answer, (list, dict, str))


def test_consolidating_hostile_text_finishes(hostile: Memory) -> None:
    every_phrase = [
        f"I said {template.format(n=n, m=m)}"
        for template in _TEMPLATES
        for n, m in (("4000", "-5"), ("9" * 40, "٣"), ("1e308", "0"))
    ]
    hostile.observe_many(every_phrase, user_id="ana", session_id="numbers", timestamp=NOW - 2 * DAY)
    report = hostile.consolidate()
    assert not report.errors
    assert hostile.remember("what happened last week?", user_id="ana")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """One memory the end-to-end property test keeps adding to (a fresh one per example is slow)."""
    with Memory(
        tmp_path_factory.mktemp("shared") / "m",
        embedder=HashingEmbedder(),
        clock=lambda: NOW,
        config=MemoryConfig(importance_threshold=0.0),
    ) as mem:
        mem.observe_many([{"content": text, "timestamp": NOW - 3 * DAY} for text in _HOSTILE])
        yield mem


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, moments, texts)
def test_observe_and_remember_take_any_text(shared: Memory, text: str, at: float, question: str) -> None:
    with contextlib.suppress(InvalidInputError):  # blank or NUL text is refused with a message
        shared.observe(text, timestamp=at)
    for asked in (question, f"what did I do last week? {question}", f"{question} two years ago"):
        try:
            hits = shared.remember(asked, k=5)
        except InvalidInputError:
            continue
        assert all(math.isfinite(h.score) for h in hits)
        render_memories(hits, now=NOW, timezone="Etc/GMT+12")


def test_a_long_run_on_sentence_gives_its_facts() -> None:
    # each statement read the whole rest of the sentence for its object: minutes at this length
    text = "I live in Lisbon and I love jazz, and " * 2000 + "that is all"
    [facts] = _PROVIDER.extract_facts([text], speakers=["Ana"])
    assert {("lives in", "Lisbon"), ("likes", "jazz")} <= {(f.predicate, f.object) for f in facts}
    lists = _PROVIDER.extract_facts(
        ["I love jazz, " + "hiking, " * 200 + "and good coffee"], speakers=["Ana"]
    )
    assert ("likes", "jazz") in {(f.predicate, f.object) for f in lists[0]}


def test_many_time_phrases_in_one_memory_are_each_read() -> None:
    # phrases taken are looked up by position (not each against all before it): still each one once
    text = "we met 3 days ago, then on the 2nd of March, " * 3000
    found = mentions(text, NOW, timezone.utc)
    assert len(found) == 6000
    assert all(p.begin >= q.end for q, p in itertools.pairwise(found))
