"""Behaviour of the model providers: offline rules, and OpenAI against the loopback fake."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ucma_core.providers
from tests.openai_server import CHAT_PATH, ChatAnswer, FakeOpenAIServer, error, malformed, slow
from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DependencyMissingError, InvalidInputError, ProviderError
from ucma_core.importance import HeuristicImportance
from ucma_core.outcomes import outcome
from ucma_core.providers import (
    DistilledLearning,
    ExtractedFact,
    ExtractedProcedure,
    OfflineProvider,
    OpenAIProvider,
    Provider,
)

JWT_STORY = [
    "JWT tokens expire after 5 minutes instead of 30.",
    "Suspected clock skew between the auth server and the API.",
    "Added a 60-second leeway to jwt.decode().",
    "Fixed, works now.",
]


@pytest.fixture
def offline() -> OfflineProvider:
    return OfflineProvider()


def _triples(facts: list[ExtractedFact]) -> set[tuple[str, str, str]]:
    return {(f.subject, f.predicate, f.object) for f in facts}


def test_public_names_and_protocol() -> None:
    assert ucma_core.providers.__all__ == sorted(ucma_core.providers.__all__)
    assert {"OfflineProvider", "OpenAIProvider", "Provider", "ExtractedFact"} <= set(
        ucma_core.providers.__all__
    )
    assert isinstance(OfflineProvider(), Provider)
    assert isinstance(OpenAIProvider(api_key="k"), Provider)


def test_importing_providers_does_not_import_openai() -> None:
    code = "import sys, ucma_core.providers; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- offline: facts ------------------------------------------------------------------

FACT_TABLE = [
    ("I'm a nurse.", {("Ana", "is", "a nurse")}),
    (
        "I'm a nurse at St. Mary's Hospital.",
        {("Ana", "is", "a nurse"), ("Ana", "works at", "St. Mary's Hospital")},
    ),
    ("My name is Ana.", set()),  # the speaker naming herself says nothing new
    ("My name is Ana Silva.", {("Ana", "is named", "Ana Silva")}),
    ("Call me Bob, everyone does.", {("Ana", "is named", "Bob")}),
    ("Hi, I'm Ana!", set()),
    ("Hi, I'm Anabel!", {("Ana", "is named", "Anabel")}),
    ("I'm vegetarian.", {("Ana", "is", "vegetarian")}),
    ("I live in Lisbon.", {("Ana", "lives in", "Lisbon")}),
    ("I moved to Berlin last year.", {("Ana", "lives in", "Berlin")}),
    ("I just moved to New York City, it's great", {("Ana", "lives in", "New York City")}),
    ("I work at Google as an engineer.", {("Ana", "works at", "Google"), ("Ana", "works as", "an engineer")}),
    ("I've been working at Shopify for three years.", {("Ana", "works at", "Shopify")}),
    ("I work as a software engineer.", {("Ana", "works as", "a software engineer")}),
    ("I really like jazz.", {("Ana", "likes", "jazz")}),
    (
        "I love hiking, cooking and good coffee.",
        {("Ana", "likes", "hiking"), ("Ana", "likes", "cooking"), ("Ana", "likes", "good coffee")},
    ),
    ("I prefer tea over coffee.", {("Ana", "prefers", "tea over coffee")}),  # a preference kept whole
    (
        "I don't like mushrooms, but I love olives.",
        {("Ana", "dislikes", "mushrooms"), ("Ana", "likes", "olives")},
    ),
    ("I can't stand loud music.", {("Ana", "dislikes", "loud music")}),
    ("I hate traffic because it wastes time", {("Ana", "dislikes", "traffic")}),
    (
        "I'm allergic to peanuts and shellfish.",
        {("Ana", "is allergic to", "peanuts"), ("Ana", "is allergic to", "shellfish")},
    ),
    ("My sister is Maria.", {("Ana", "has sister", "Maria")}),
    ("My dog's name is Rex.", {("Ana", "has dog", "Rex")}),
    ("My boss is Dr. Patel.", {("Ana", "has boss", "Dr. Patel")}),
    ("My sister Maria lives in Lisbon.", {("Ana", "has sister", "Maria"), ("Maria", "lives in", "Lisbon")}),
    ("my brother Tom works at Acme Corp", {("Ana", "has brother", "Tom"), ("Tom", "works at", "Acme Corp")}),
    ("Tom is my brother.", {("Ana", "has brother", "Tom")}),
    ("Maria works at Google.", {("Maria", "works at", "Google")}),
    ("Yesterday Maria moved to Berlin.", {("Maria", "lives in", "Berlin")}),
    ("Ana is Tom's sister.", {("Tom", "has sister", "Ana")}),
    ("Tom likes jazz and rock.", {("Tom", "likes", "jazz"), ("Tom", "likes", "rock")}),
    ("My birthday is March 3rd.", {("Ana", "has birthday", "March 3rd")}),
    ("My favourite food is sushi.", {("Ana", "has favorite food", "sushi")}),
    ("I like jazz and I live in Paris", {("Ana", "likes", "jazz"), ("Ana", "lives in", "Paris")}),
    ("We live in Rome.", {("Ana", "lives in", "Rome")}),
    ("I prefer short answers with code, by the way.", {("Ana", "prefers", "short answers with code")}),
    (
        "I'm vegetarian and allergic to cats.",
        {("Ana", "is", "vegetarian"), ("Ana", "is allergic to", "cats")},
    ),
    ("I'm 34.", {("Ana", "has age", "34")}),
    ("My mom lives in Busan.", {("Ana's mom", "lives in", "Busan")}),
    ("My brother Raj just turned 40.", {("Ana", "has brother", "Raj"), ("Raj", "has age", "40")}),
    ("I decided to take the job at Shopify.", {("Ana", "decided to", "take the job at Shopify")}),
    (
        "I have a dentist appointment on Friday at 3pm.",
        {("Ana", "has", "dentist appointment on Friday at 3pm")},
    ),
    ("My flight to Oslo is on May 14.", {("Ana", "has", "flight to Oslo on May 14")}),
    ("I go swimming every Tuesday morning.", {("Ana", "goes", "swimming every Tuesday morning")}),
    ("I speak French and Portuguese.", {("Ana", "speaks", "French"), ("Ana", "speaks", "Portuguese")}),
    ("I'm building a FastAPI app.", {("Ana", "is building", "a FastAPI app")}),
]

CHIT_CHAT = [
    "haha ok, see you tomorrow",
    "Thanks, that's really helpful!",
    "I love it!",
    "I like that.",
    "Do you like jazz?",
    "I'd like a coffee please",
    "I'm a bit tired today",
    "The weather is nice today",
    "Everyone likes pizza.",
    "We live in strange times.",
    "",
]


@pytest.mark.parametrize(("text", "expected"), FACT_TABLE)
def test_offline_extracts_common_statements(offline: OfflineProvider, text: str, expected: set[Any]) -> None:
    [facts] = offline.extract_facts([text], speakers=["Ana"])
    assert _triples(facts) == expected
    for fact in facts:
        assert 0.5 <= fact.confidence <= 0.8
        assert fact.predicate == fact.predicate.lower()


@pytest.mark.parametrize("text", CHIT_CHAT)
def test_offline_chit_chat_gives_no_facts(offline: OfflineProvider, text: str) -> None:
    assert offline.extract_facts([text], speakers=["Ana"]) == [[]]


def test_offline_first_person_is_the_speaker(offline: OfflineProvider) -> None:
    texts = ["I live in Lisbon.", "I live in Oslo.", "I live in Rome."]
    found = offline.extract_facts(texts, speakers=["Ana", None, "  "])
    assert [_triples(f) for f in found] == [
        {("Ana", "lives in", "Lisbon")},
        {("user", "lives in", "Oslo")},
        {("user", "lives in", "Rome")},
    ]


def test_offline_facts_are_deduplicated_ordered_and_deterministic(offline: OfflineProvider) -> None:
    text = "I live in Lisbon. I work at Acme. Honestly, I live in Lisbon!"
    first = offline.extract_facts([text], speakers=["Ana"])
    assert first == offline.extract_facts([text], speakers=["Ana"])
    assert [(f.predicate, f.object) for f in first[0]] == [("lives in", "Lisbon"), ("works at", "Acme")]


def test_offline_hedged_statements_get_less_confidence(offline: OfflineProvider) -> None:
    [[sure], [hedged]] = offline.extract_facts(
        ["I like jazz.", "I think I like jazz."], speakers=["Ana", "Ana"]
    )
    assert hedged.confidence < sure.confidence


def test_offline_fact_input_is_checked(offline: OfflineProvider) -> None:
    with pytest.raises(InvalidInputError, match="one speaker"):
        offline.extract_facts(["a", "b"], speakers=["Ana"])
    with pytest.raises(InvalidInputError, match="list"):
        offline.extract_facts("I live in Lisbon", speakers=["Ana"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"speakers\[0\]"):
        offline.extract_facts(["a"], speakers=[3])  # type: ignore[list-item]
    assert offline.extract_facts([], speakers=[]) == []


def test_offline_never_names_a_speaker_after_themselves(offline: OfflineProvider) -> None:
    texts = [
        "I'm Michael",
        "My name is Michael.",
        "Hi, I'm michael!",
        "Call me Mike",
        "My brother is Michael.",
    ]
    found = offline.extract_facts(texts, speakers=["michael"] * len(texts))
    assert found == [[], [], [], [ExtractedFact("michael", "is named", "Mike", 0.8)], []]
    [facts] = offline.extract_facts(["I'm Michael and I live in Oslo."], speakers=["Michael"])
    assert _triples(facts) == {("Michael", "lives in", "Oslo")}


def test_self_naming_gives_no_fact_after_consolidation(tmp_path: Path) -> None:
    config = MemoryConfig(importance_threshold=0.0)
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), provider=OfflineProvider(), config=config) as mem:
        mem.observe("Hi, I'm Michael! I live in Oslo.", user_id="michael")
        assert mem.consolidate(phases=["extract"]).errors == []
        facts = mem.facts_about("Michael", user_id="michael", role="subject")
        assert [(f.predicate, f.object) for f in facts] == [("lives in", "Oslo")]
        # the name he gave is kept about "the user" (how later turns know it), not "Michael is named Michael"
        named = mem.facts_about("Michael", user_id="michael", role="object")
        assert [(f.subject, f.predicate) for f in named] == [("the user", "is named")]


# -- offline: summaries --------------------------------------------------------------

MEETING = (
    "We met to plan the Q3 launch. Ana said the launch date is September 14. The weather was nice. "
    "Tom will prepare the launch checklist by Friday. Lunch was pizza. We agreed the launch needs a "
    "security review before September 14. Someone mentioned a movie."
)


@pytest.mark.parametrize("max_words", [5, 10, 20, 40])
def test_offline_summary_is_bounded_and_keeps_the_key_sentence(
    offline: OfflineProvider, max_words: int
) -> None:
    [summary] = offline.summarize([[MEETING]], max_words=max_words)
    assert 0 < len(summary.split()) <= max_words
    if max_words >= 10:
        assert "Ana said the launch date is September 14." in summary
    if max_words >= 20:
        assert "Lunch was pizza" not in summary
    assert offline.summarize([[MEETING]], max_words=max_words) == [summary]


def test_offline_summary_short_groups(offline: OfflineProvider) -> None:
    assert offline.summarize([["Short note."], [], ["a", "b"]], max_words=10) == ["Short note.", "", "a b"]
    assert offline.summarize([], max_words=10) == []
    with pytest.raises(InvalidInputError, match="max_words"):
        offline.summarize([["a"]], max_words=0)
    with pytest.raises(InvalidInputError):
        offline.summarize([["a", 1]])  # type: ignore[list-item]


def test_offline_summary_keeps_sentence_order(offline: OfflineProvider) -> None:
    group = [
        "Deploy failed with error 502 on the api gateway.",
        "We had coffee.",
        "Rolled back the api gateway to version 1.4 and the 502 error stopped.",
    ]
    [summary] = offline.summarize([group], max_words=25)
    assert summary.index("Deploy failed") < summary.index("Rolled back")


_sentence = st.lists(
    st.sampled_from("alpha beta gamma delta Ana 42 jazz Lisbon the of".split()), min_size=1
).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=60, deadline=None)
@given(group=st.lists(_sentence, min_size=1, max_size=6), max_words=st.integers(1, 30))
def test_offline_summary_never_empty_never_too_long(group: list[str], max_words: int) -> None:
    [summary] = OfflineProvider().summarize([group], max_words=max_words)
    assert summary.strip()
    assert len(summary.split()) <= max_words


# -- offline: procedures and lessons -------------------------------------------------


def test_offline_procedure_from_the_jwt_story(offline: OfflineProvider) -> None:
    procedure = offline.extract_procedure(JWT_STORY)
    assert procedure is not None
    assert "JWT" in procedure.name
    assert procedure.steps == (
        "Check for clock skew between the auth server and the API",
        "Add a 60-second leeway to jwt.decode()",
    )
    assert {"jwt", "clock", "skew"} <= set(procedure.trigger_tags)
    assert "expire" in procedure.description
    assert offline.extract_procedure(JWT_STORY) == procedure


def test_offline_no_procedure_without_success_or_actions(offline: OfflineProvider) -> None:
    assert offline.extract_procedure([*JWT_STORY[:3], "Still failing after that."]) is None
    assert offline.extract_procedure(["hi there", "how are you?", "great, thanks"]) is None
    assert offline.extract_procedure([]) is None


OUTCOMES = [
    ("Fixed, it works now!", "success"),
    ("Fixed, works now.", "success"),
    ("Tests pass now.", "success"),
    ("CI is green again", "success"),
    ("It works for me", "success"),
    ("Everything is back to normal.", "success"),
    ("I fixed it without restarting anything.", "success"),
    ("It works now, I don't know why.", "success"),
    ("Still failing. Cleared the cache and it works now.", "success"),
    ("Still failing after that.", "failure"),
    ("It isn't working yet", "failure"),
    ("That didn't help.", "failure"),
    ("The tests don't pass", "failure"),
    ("Nothing worked.", "failure"),
    ("Failed again.", "failure"),
    ("No luck, I gave up.", "failure"),
    ("It stopped working after the upgrade.", "failure"),
    ("It worked at first, but now it still fails.", "failure"),
    ("Is it fixed?", None),
    ("I'm working on it.", None),
    ("Maria works at Google.", None),
    ("I like green tea.", None),
    ("I passed the exam.", None),
    ("great, thanks", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), OUTCOMES)
def test_outcome_detector(text: str, expected: str | None) -> None:
    assert outcome(text) == expected


def test_offline_story_ends_where_the_outcome_detector_says(offline: OfflineProvider) -> None:
    broke = [*JWT_STORY[:3], "Then it stopped working after the upgrade."]
    assert offline.extract_procedure(broke) is None
    busy = [*JWT_STORY[:3], "I'm working on it."]
    assert offline.extract_procedure(busy) is None
    recovered = [*JWT_STORY[:3], "Still failing.", "Restarted the API.", "Works for me now."]
    procedure = offline.extract_procedure(recovered)
    assert procedure is not None and procedure.steps[-1] == "Restart the API"


def test_offline_learning_from_success_and_failure(offline: OfflineProvider) -> None:
    success = offline.distill_learning(JWT_STORY, succeeded=True)
    assert success is not None
    assert success.learning_type == "success_pattern"
    assert success.insight.startswith("When JWT tokens expire after 5 minutes instead of 30, ")
    assert "add a 60-second leeway to jwt.decode()" in success.insight
    assert 0.5 <= success.confidence <= 0.6
    assert "jwt" in success.applicability

    failure = offline.distill_learning([*JWT_STORY[:3], "Still failing."], succeeded=False)
    assert failure is not None
    assert failure.learning_type == "failure_analysis"
    assert "adding a 60-second leeway to jwt.decode()" in failure.insight
    assert failure.insight.endswith("did not work.")

    assert offline.distill_learning(["hi", "nice weather today"], succeeded=True) is None
    with pytest.raises(InvalidInputError):
        offline.distill_learning(JWT_STORY, succeeded="yes")  # type: ignore[arg-type]


# -- offline: conflicts --------------------------------------------------------------

CONFLICTS = [
    (("Ana", "lives in", "Lisbon"), ("Ana", "lives in", "Berlin"), True),
    (("Ana", "lives in", "Lisbon"), ("ana", "Lives_In", "  lisbon "), False),
    (("Ana", "lives in", "Paris"), ("Ana", "lives in", "Paris, France"), False),
    (("Ana", "works at", "Acme"), ("Ana", "works for", "Globex"), True),
    (("Ana", "is named", "Ana"), ("Ana", "is named", "Anna"), True),
    (("Ana", "has wife", "Sara"), ("Ana", "has wife", "Lena"), True),
    (("Ana", "has sister", "Maria"), ("Ana", "has sister", "Lena"), False),
    (("Ana", "has favorite food", "sushi"), ("Ana", "has favourite food", "pizza"), True),
    (("Ana", "is", "a nurse"), ("Ana", "is", "a teacher"), True),
    (("Ana", "is", "Canadian"), ("Ana", "is", "a nurse"), False),
    (("Ana", "is", "single"), ("Ana", "is", "married"), True),
    (("Ana", "likes", "jazz"), ("Ana", "likes", "tea"), False),
    (("Ana", "likes", "jazz"), ("Ana", "dislikes", "jazz"), True),
    (("Ana", "hates", "the beach"), ("Ana", "loves", "beach"), True),
    (("Ana", "likes", "jazz"), ("Ana", "dislikes", "rock"), False),
    (("Ana", "lives in", "Lisbon"), ("Tom", "lives in", "Berlin"), False),
]


def test_offline_conflicts_table(offline: OfflineProvider) -> None:
    pairs = [(ExtractedFact(*old, 0.8), ExtractedFact(*new, 0.8)) for old, new, _ in CONFLICTS]
    assert offline.conflicts(pairs) == [expected for *_, expected in CONFLICTS]
    with pytest.raises(InvalidInputError, match="pairs"):
        offline.conflicts([("a", "b")])  # type: ignore[list-item]


def test_offline_importance_is_the_heuristic(offline: OfflineProvider) -> None:
    text = "I'm Ana and I prefer concise answers."
    assert offline.score_importance(text, source="user") == HeuristicImportance().score_importance(
        text, source="user"
    )


# -- OpenAI against the loopback server ----------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake
        assert fake.errors == []


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make(server: FakeOpenAIServer, sleeps: Sleeps) -> Iterator[Any]:
    pytest.importorskip("openai")
    made: list[OpenAIProvider] = []

    def build(**kwargs: Any) -> OpenAIProvider:
        kwargs.setdefault("max_retries", 0)
        provider = OpenAIProvider(api_key="test-key", base_url=server.url, sleep=sleeps, **kwargs)
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.close()


def _sent(server: FakeOpenAIServer, n: int = -1) -> dict[str, Any]:
    """The JSON payload of the n-th chat request's user message."""
    body = server.requests_to(CHAT_PATH)[n].body
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["role"] == "system" and "JSON" in system["content"]
    return dict(json.loads(user["content"]))


def _fact(s: str, p: str, o: str, c: float = 0.9) -> dict[str, Any]:
    return {"subject": s, "predicate": p, "object": o, "confidence": c}


def test_openai_extract_facts(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat(
        {
            "items": [
                {"index": 1, "facts": []},
                {
                    "index": 0,
                    "facts": [_fact("Ana", "Lives In", "Lisbon"), _fact("Ana", "likes", "jazz", 0.6)],
                },
            ]
        }
    )
    found = make(model="gpt-test").extract_facts(
        ["I live in Lisbon and like jazz", "ok"], speakers=["Ana", None]
    )
    assert found == [
        [ExtractedFact("Ana", "lives in", "Lisbon", 0.9), ExtractedFact("Ana", "likes", "jazz", 0.6)],
        [],
    ]
    assert server.requests_to(CHAT_PATH)[0].body["model"] == "gpt-test"
    assert _sent(server)["items"] == [
        {"index": 0, "speaker": "Ana", "text": "I live in Lisbon and like jazz"},
        {"index": 1, "speaker": "user", "text": "ok"},
    ]


def test_openai_summarize(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat({"items": [{"index": 0, "summary": "Launch on September 14."}]})
    assert make().summarize([[MEETING], []], max_words=12) == ["Launch on September 14.", ""]
    assert _sent(server) == {"max_words": 12, "groups": [{"index": 0, "texts": [MEETING]}]}


def test_openai_summary_over_the_limit_is_cut(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat({"items": [{"index": 0, "summary": "one two three four five six"}]})
    assert make().summarize([["x y z"]], max_words=4) == ["one two three four…"]


def test_openai_extract_procedure(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat(
        {
            "procedure": {
                "name": "Fix JWT clock skew",
                "description": "Tokens expired early.",
                "steps": ["Check for clock skew", "Add a 60-second leeway to jwt.decode()"],
                "trigger_tags": ["JWT", "clock skew"],
            }
        },
        {"procedure": None},
    )
    provider = make()
    assert provider.extract_procedure(JWT_STORY) == ExtractedProcedure(
        name="Fix JWT clock skew",
        steps=("Check for clock skew", "Add a 60-second leeway to jwt.decode()"),
        description="Tokens expired early.",
        trigger_tags=("jwt", "clock skew"),
    )
    assert _sent(server) == {"episodes": JWT_STORY}
    assert provider.extract_procedure(["hello"]) is None
    assert provider.extract_procedure([]) is None
    assert len(server.requests) == 2


def test_openai_distill_learning(server: FakeOpenAIServer, make: Any) -> None:
    lesson = {
        "title": "JWT expiry",
        "insight": "When tokens expire early, allow clock skew leeway.",
        "learning_type": "success_pattern",
        "applicability": ["jwt"],
        "confidence": 0.7,
    }
    server.queue_chat({"learning": lesson}, {"learning": None})
    provider = make()
    assert provider.distill_learning(JWT_STORY, succeeded=True) == DistilledLearning(
        title="JWT expiry",
        insight="When tokens expire early, allow clock skew leeway.",
        learning_type="success_pattern",
        applicability=("jwt",),
        confidence=0.7,
    )
    assert _sent(server) == {"succeeded": True, "episodes": JWT_STORY}
    assert provider.distill_learning(["hi"], succeeded=False) is None


def test_openai_conflicts(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat({"items": [{"index": 0, "conflict": True}, {"index": 1, "conflict": False}]})
    old = ExtractedFact("Ana", "lives in", "Lisbon", 0.8)
    pairs = [
        (old, ExtractedFact("Ana", "lives in", "Berlin", 0.8)),
        (old, ExtractedFact("Ana", "likes", "tea", 0.8)),
    ]
    assert make().conflicts(pairs) == [True, False]
    sent = _sent(server)["items"]
    assert sent[0] == {
        "index": 0,
        "older": {"subject": "Ana", "predicate": "lives in", "object": "Lisbon"},
        "newer": {"subject": "Ana", "predicate": "lives in", "object": "Berlin"},
    }


def test_openai_batches_keep_order(server: FakeOpenAIServer, make: Any) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        items = json.loads(body["messages"][1]["content"])["items"]
        return {
            "items": [
                {"index": it["index"], "facts": [_fact(it["speaker"], "said", it["text"])]}
                for it in reversed(items)
            ]
        }

    server.on_chat = answer
    texts = [f"text {i}" for i in range(5)]
    found = make(batch_size=2).extract_facts(texts, speakers=[f"s{i}" for i in range(5)])
    assert [[(f.subject, f.object) for f in facts] for facts in found] == [
        [(f"s{i}", f"text {i}")] for i in range(5)
    ]
    assert [[it["text"] for it in _sent(server, n)["items"]] for n in range(3)] == [
        ["text 0", "text 1"],
        ["text 2", "text 3"],
        ["text 4"],
    ]


def test_openai_server_error_is_a_provider_error(server: FakeOpenAIServer, make: Any) -> None:
    server.script(error(500), path=CHAT_PATH)
    with pytest.raises(ProviderError, match="failed") as caught:
        make().extract_facts(["I live in Lisbon"], speakers=["Ana"])
    assert caught.value.__cause__ is not None
    assert len(server.requests) == 1


def test_openai_timeout_is_a_provider_error(server: FakeOpenAIServer, make: Any) -> None:
    server.script(slow(3.0), path=CHAT_PATH)
    with pytest.raises(ProviderError, match="timed out"):
        make(timeout=0.2).conflicts([(ExtractedFact("a", "b", "c", 1.0), ExtractedFact("a", "b", "d", 1.0))])


def test_openai_malformed_answers_are_retried_then_fail(
    server: FakeOpenAIServer, make: Any, sleeps: Sleeps
) -> None:
    server.queue_chat("not json {", "[1, 2]")
    server.script(malformed(), path=CHAT_PATH)  # a response body that is not JSON at all
    with pytest.raises(ProviderError, match="after 3 attempt") as caught:
        make(max_retries=2).summarize([["some text"]])
    assert len(server.requests) == 3
    assert sleeps == [0.2, 0.4]
    assert isinstance(caught.value.__cause__, ProviderError)


def test_openai_malformed_then_good_answer_succeeds(
    server: FakeOpenAIServer, make: Any, sleeps: Sleeps
) -> None:
    server.queue_chat("{truncated", {"items": [{"index": 0, "conflict": False}]})
    fact = ExtractedFact("Ana", "likes", "jazz", 0.8)
    assert make(max_retries=1).conflicts([(fact, fact)]) == [False]
    assert len(server.requests) == 2
    assert sleeps == [0.2]


BAD_FACT_ANSWERS: dict[str, Any] = {
    "no items": {"facts": []},
    "items not a list": {"items": {"index": 0}},
    "too few items": {"items": []},
    "index out of range": {"items": [{"index": 1, "facts": []}]},
    "bool index": {"items": [{"index": True, "facts": []}]},
    "no facts key": {"items": [{"index": 0}]},
    "confidence 1.7": {"items": [{"index": 0, "facts": [_fact("Ana", "likes", "jazz", 1.7)]}]},
    "negative confidence": {"items": [{"index": 0, "facts": [_fact("Ana", "likes", "jazz", -0.1)]}]},
    "no confidence": {
        "items": [{"index": 0, "facts": [{"subject": "Ana", "predicate": "likes", "object": "jazz"}]}]
    },
    "empty predicate": {"items": [{"index": 0, "facts": [_fact("Ana", "", "jazz")]}]},
    "numeric object": {"items": [{"index": 0, "facts": [{**_fact("Ana", "likes", "x"), "object": 3}]}]},
    "text confidence": {
        "items": [{"index": 0, "facts": [{**_fact("Ana", "likes", "jazz"), "confidence": "high"}]}]
    },
    "cut off": ChatAnswer(content='{"items": [{"index": 0, "facts": [', finish_reason="length"),
}


def test_openai_wrong_shape_is_a_provider_error(server: FakeOpenAIServer, make: Any) -> None:
    provider = make()  # max_retries=0: every bad answer fails at once
    for case, answer in BAD_FACT_ANSWERS.items():
        server.queue_chat(answer)
        with pytest.raises(ProviderError, match="unusable"):
            provider.extract_facts(["I live in Lisbon"], speakers=["Ana"])
            pytest.fail(f"answer with {case} was accepted")
    assert len(server.requests) == len(BAD_FACT_ANSWERS)


def test_openai_non_finite_confidence_is_rejected(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat(
        '{"items": [{"index": 0, "facts": [{"subject": "a", "predicate": "b", "object": "c", '
        '"confidence": NaN}]}]}'
    )
    with pytest.raises(ProviderError, match="confidence"):
        make().extract_facts(["x"], speakers=[None])


def test_openai_bad_learning_and_procedure_answers(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat(
        {"learning": {"title": "t", "insight": "i", "learning_type": "made_up", "confidence": 0.5}},
        {"procedure": {"name": "n", "steps": []}},
        {"nothing": None},
    )
    provider = make()
    with pytest.raises(ProviderError, match="learning_type"):
        provider.distill_learning(JWT_STORY, succeeded=True)
    with pytest.raises(ProviderError, match="steps"):
        provider.extract_procedure(JWT_STORY)
    with pytest.raises(ProviderError, match="procedure"):
        provider.extract_procedure(JWT_STORY)


def test_openai_importance_stays_offline_by_default(server: FakeOpenAIServer, make: Any) -> None:
    text = "I'm Ana and I prefer concise answers."
    assert make().score_importance(text, source="user") == HeuristicImportance().score_importance(
        text, source="user"
    )

    class Always:
        def score_importance(self, content: str, *, source: str) -> float:
            return 0.42

    assert make(importance_fallback=Always()).score_importance(text, source="user") == 0.42
    assert server.requests == []


def test_openai_importance_from_the_model_when_asked(server: FakeOpenAIServer, make: Any) -> None:
    server.queue_chat({"importance": 0.9}, {"importance": 2})
    provider = make(llm_importance=True)
    assert provider.score_importance("My passport expires in May.", source="user") == 0.9
    assert _sent(server) == {"source": "user", "text": "My passport expires in May."}
    with pytest.raises(ProviderError, match="importance"):
        provider.score_importance("x", source="user")


def test_openai_empty_input_sends_nothing(server: FakeOpenAIServer, make: Any) -> None:
    provider = make()
    assert provider.extract_facts(["", "   "], speakers=[None, None]) == [[], []]
    assert provider.summarize([[], [""]]) == ["", ""]
    assert provider.conflicts([]) == []
    assert provider.distill_learning([], succeeded=True) is None
    assert server.requests == []
    with pytest.raises(InvalidInputError):
        provider.extract_facts(["a"], speakers=[])


def test_openai_client_lifecycle(server: FakeOpenAIServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="k", base_url=server.url, max_retries=0)
    server.queue_chat({"items": [{"index": 0, "conflict": True}]})
    fact = ExtractedFact("a", "b", "c", 1.0)
    with OpenAIProvider(client=client) as provider:
        assert provider.conflicts([(fact, fact)]) == [True]
    assert not client.is_closed()
    client.close()

    server.queue_chat({"items": [{"index": 0, "conflict": False}]})
    own = OpenAIProvider(api_key="k", base_url=server.url, max_retries=0)
    own.conflicts([(fact, fact)])
    created = own._client
    own.close()
    assert created.is_closed()


def test_openai_constructor_checks() -> None:
    from ucma_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="either client"):
        OpenAIProvider(client=object(), api_key="k")
    with pytest.raises(ConfigurationError):
        OpenAIProvider("")
    with pytest.raises(InvalidInputError, match="batch_size"):
        OpenAIProvider(batch_size=0)
    with pytest.raises(InvalidInputError, match="timeout"):
        OpenAIProvider(timeout=0)
    with pytest.raises(InvalidInputError, match="max_retries"):
        OpenAIProvider(max_retries=-1)
    with pytest.raises(InvalidInputError, match="importance_fallback"):
        OpenAIProvider(importance_fallback=object())  # type: ignore[arg-type]


def test_openai_missing_sdk_is_a_dependency_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    provider = OpenAIProvider(api_key="k")
    with pytest.raises(DependencyMissingError, match=r"ucma\[openai\]"):
        provider.extract_facts(["I live in Lisbon"], speakers=["Ana"])
