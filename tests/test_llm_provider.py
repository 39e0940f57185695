"""The model-agnostic LLM provider, driven by scripted chat transports (no model, no network)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, InvalidInputError, ProviderError
from ucma_core.providers import (
    AsyncChatTransport,
    ChatTransport,
    DistilledLearning,
    ExtractedFact,
    ExtractedProcedure,
    LLMProvider,
    Provider,
    UnusableAnswerError,
)

JWT_STORY = [
    "JWT tokens expire after 5 minutes instead of 30.",
    "Added a 60-second leeway to jwt.decode().",
    "Fixed, works now.",
]
LESSON = {
    "title": "JWT expiry",
    "insight": "When tokens expire early, allow clock skew leeway.",
    "learning_type": "success_pattern",
    "applicability": ["JWT", "jwt"],
    "confidence": 0.7,
}
PROCEDURE = {
    "name": "Fix JWT clock skew",
    "description": "Tokens expired early.",
    "steps": ["Check for clock skew", "Add a 60-second leeway to jwt.decode()"],
    "trigger_tags": ["JWT", "clock skew"],
}

Reply = str | dict[str, Any] | Exception


class Scripted:
    """A chat transport that answers with canned replies, in order, and records what it was sent.

    A reply is the text to return, a dict to return as JSON, or an exception to raise.
    """

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def complete(self, system: str, user: str) -> str:
        self.sent.append((system, json.loads(user)))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, str) else json.dumps(reply)


class AsyncScripted(Scripted):
    """The same, with ``acomplete``; counts which method was used."""

    def __init__(self, *replies: Reply) -> None:
        super().__init__(*replies)
        self.awaited = 0

    async def acomplete(self, system: str, user: str) -> str:
        self.awaited += 1
        return self.complete(system, user)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def _fact(s: str, p: str, o: str, c: float = 0.9) -> dict[str, Any]:
    return {"subject": s, "predicate": p, "object": o, "confidence": c}


# -- every Provider method ---------------------------------------------------------------


def test_llm_provider_is_a_provider_and_transports_are_protocols() -> None:
    provider = LLMProvider(Scripted())
    assert isinstance(provider, Provider)
    assert isinstance(Scripted(), ChatTransport) and not isinstance(Scripted(), AsyncChatTransport)
    assert isinstance(AsyncScripted(), AsyncChatTransport)
    assert provider.transport.__class__ is Scripted
    assert repr(provider) == "LLMProvider('Scripted', llm_importance=False)"

    class Named(Scripted):
        name = "llama-3-8b"

    assert repr(LLMProvider(Named())) == "LLMProvider('llama-3-8b', llm_importance=False)"
    assert repr(LLMProvider(Named(), name="mine")) == "LLMProvider('mine', llm_importance=False)"


def test_every_method_sends_its_task_and_reads_the_answer() -> None:
    fact_answer = {
        "items": [
            {"index": 1, "facts": []},
            {"index": 0, "facts": [_fact("Ana", "Lives In", "Lisbon"), _fact("Ana", "likes", "jazz", 0.6)]},
        ]
    }
    transport = Scripted(
        {"importance": 0.9},
        {"items": [{"index": 0, "summary": "  Launch on\nSeptember 14. "}]},
        fact_answer,
        {"procedure": PROCEDURE},
        {"learning": LESSON},
        {"items": [{"index": 0, "conflict": True}, {"index": 1, "conflict": False}]},
    )
    provider = LLMProvider(transport, llm_importance=True)
    old = ExtractedFact("Ana", "lives in", "Lisbon", 0.8)
    pairs = [
        (old, ExtractedFact("Ana", "lives in", "Berlin", 0.8)),
        (old, ExtractedFact("Ana", "likes", "tea", 0.8)),
    ]

    assert provider.score_importance("My passport expires in May.", source="user") == 0.9
    assert provider.summarize([["We launch on September 14."], []], max_words=12) == [
        "Launch on September 14.",
        "",
    ]
    assert provider.extract_facts(["I live in Lisbon and like jazz", "ok"], speakers=["Ana", None]) == [
        [ExtractedFact("Ana", "lives in", "Lisbon", 0.9), ExtractedFact("Ana", "likes", "jazz", 0.6)],
        [],
    ]
    assert provider.extract_procedure(JWT_STORY) == ExtractedProcedure(
        name="Fix JWT clock skew",
        steps=("Check for clock skew", "Add a 60-second leeway to jwt.decode()"),
        description="Tokens expired early.",
        trigger_tags=("jwt", "clock skew"),
    )
    assert provider.distill_learning(JWT_STORY, succeeded=True) == DistilledLearning(
        title="JWT expiry",
        insight="When tokens expire early, allow clock skew leeway.",
        learning_type="success_pattern",
        applicability=("jwt",),
        confidence=0.7,
    )
    assert provider.conflicts(pairs) == [True, False]

    payloads = [user for _, user in transport.sent]
    assert payloads == [
        {"source": "user", "text": "My passport expires in May."},
        {"max_words": 12, "groups": [{"index": 0, "texts": ["We launch on September 14."]}]},
        {
            "items": [
                {"index": 0, "speaker": "Ana", "text": "I live in Lisbon and like jazz"},
                {"index": 1, "speaker": "user", "text": "ok"},
            ]
        },
        {"episodes": JWT_STORY},
        {"succeeded": True, "episodes": JWT_STORY},
        {
            "items": [
                {"index": 0, "older": _triple(old), "newer": _triple(pairs[0][1])},
                {"index": 1, "older": _triple(old), "newer": _triple(pairs[1][1])},
            ]
        },
    ]
    assert all("JSON" in system for system, _ in transport.sent)
    assert len({system for system, _ in transport.sent}) == 6  # one prompt per task
    assert transport.replies == []


def _triple(fact: ExtractedFact) -> dict[str, str]:
    return {"subject": fact.subject, "predicate": fact.predicate, "object": fact.object}


def test_null_answers_and_empty_input() -> None:
    transport = Scripted({"procedure": None}, {"learning": None})
    provider = LLMProvider(transport)
    assert provider.extract_procedure(["hello"]) is None
    assert provider.distill_learning(["hi"], succeeded=False) is None
    # nothing worth a request: no request at all
    assert provider.extract_facts(["", "  "], speakers=[None, None]) == [[], []]
    assert provider.summarize([[], [""]]) == ["", ""]
    assert provider.conflicts([]) == []
    assert provider.extract_procedure([]) is None
    assert provider.distill_learning([" "], succeeded=True) is None
    assert provider.score_importance("ok thanks", source="user") < 0.2  # offline unless llm_importance
    assert len(transport.sent) == 2


def test_batches_keep_order_and_summaries_are_capped() -> None:
    def reversed_items(n: int) -> dict[str, Any]:
        return {"items": [{"index": k, "facts": [_fact(f"s{k}", "said", "x")]} for k in reversed(range(n))]}

    transport = Scripted(reversed_items(2), reversed_items(2), reversed_items(1))
    found = LLMProvider(transport, batch_size=2).extract_facts(
        [f"text {i}" for i in range(5)], speakers=[None] * 5
    )
    assert [[f.subject for f in facts] for facts in found] == [["s0"], ["s1"], ["s0"], ["s1"], ["s0"]]
    assert [len(user["items"]) for _, user in transport.sent] == [2, 2, 1]

    capped = LLMProvider(Scripted({"items": [{"index": 0, "summary": "one two three four five six"}]}))
    assert capped.summarize([["x y z"]], max_words=4) == ["one two three four…"]


def test_self_naming_facts_from_the_model_are_dropped() -> None:
    answer = {
        "items": [
            {
                "index": 0,
                "facts": [_fact("michael", "is named", "Michael"), _fact("michael", "lives in", "Oslo")],
            }
        ]
    }
    [facts] = LLMProvider(Scripted(answer)).extract_facts(
        ["I'm Michael, I live in Oslo"], speakers=["michael"]
    )
    assert facts == [ExtractedFact("michael", "lives in", "Oslo", 0.9)]


# -- unusable answers and failing transports ---------------------------------------------------


def test_malformed_json_is_asked_again_then_succeeds(sleeps: Sleeps) -> None:
    transport = Scripted("not json {", '{"items": [{"index": 0, "conflict": false}]}')
    fact = ExtractedFact("Ana", "likes", "jazz", 0.8)
    assert LLMProvider(transport, sleep=sleeps).conflicts([(fact, fact)]) == [False]
    assert len(transport.sent) == 2 and transport.sent[0] == transport.sent[1]
    assert sleeps == [0.2]


def test_persistent_garbage_is_a_provider_error_saying_what_was_wrong(sleeps: Sleeps) -> None:
    transport = Scripted("", "[1, 2]", {"items": [{"index": 0, "facts": [_fact("Ana", "likes", "x", 1.7)]}]})
    provider = LLMProvider(transport, max_attempts=3, sleep=sleeps, name="test model")
    with pytest.raises(
        ProviderError, match=r"facts answer from test model is unusable after 3 attempt"
    ) as caught:
        provider.extract_facts(["I live in Lisbon"], speakers=["Ana"])
    assert "confidence must be a number in [0, 1], got 1.7" in str(caught.value)
    assert isinstance(caught.value.__cause__, UnusableAnswerError)
    assert sleeps == [0.2, 0.4]


@pytest.mark.parametrize(
    ("answer", "complaint"),
    [
        ("", "empty"),
        ("[1]", "not an object"),
        ({"facts": []}, '"items" must be a list'),
        ({"items": []}, "0 entries for 1 inputs"),
        ({"items": [{"index": True, "facts": []}]}, "index"),
        ({"items": [{"index": 0}]}, 'no "facts"'),
        ({"items": [{"index": 0, "facts": [{"subject": "a", "predicate": "b", "object": "c"}]}]}, "lacks"),
        ({"items": [{"index": 0, "facts": [_fact("Ana", "", "jazz")]}]}, "non-empty string"),
    ],
)
def test_each_unusable_answer_names_its_fault(answer: Reply, complaint: str) -> None:
    provider = LLMProvider(Scripted(answer), max_attempts=1)
    with pytest.raises(ProviderError, match="unusable after 1 attempt") as caught:
        provider.extract_facts(["x"], speakers=[None])
    assert complaint in str(caught.value)


def test_bad_learning_and_procedure_answers() -> None:
    provider = LLMProvider(
        Scripted(
            {"learning": {**LESSON, "learning_type": "made_up"}},
            {"learning": {**LESSON, "learning_type": ["a list"]}},
            {"procedure": {"name": "n", "steps": []}},
            {"nothing": None},
        ),
        max_attempts=1,
    )
    with pytest.raises(ProviderError, match="learning_type"):
        provider.distill_learning(JWT_STORY, succeeded=True)
    with pytest.raises(ProviderError, match="learning_type"):
        provider.distill_learning(JWT_STORY, succeeded=True)
    with pytest.raises(ProviderError, match="steps"):
        provider.extract_procedure(JWT_STORY)
    with pytest.raises(ProviderError, match='no "procedure"'):
        provider.extract_procedure(JWT_STORY)


def test_a_raising_transport_is_a_provider_error_chained_to_it(sleeps: Sleeps) -> None:
    boom = ConnectionError("connection reset by peer")
    provider = LLMProvider(Scripted(boom), sleep=sleeps, name="local llama")
    with pytest.raises(ProviderError, match="summarize request to local llama failed") as caught:
        provider.summarize([["some text"]])
    assert caught.value.__cause__ is boom
    assert "connection reset by peer" in str(caught.value)
    assert sleeps == []  # a failed request is not asked again


def test_transport_errors_in_ucma_terms_pass_through_and_unusable_ones_are_retried(sleeps: Sleeps) -> None:
    config = ConfigurationError("no API key")
    with pytest.raises(ConfigurationError) as caught:
        LLMProvider(Scripted(config)).summarize([["text"]])
    assert caught.value is config

    transport = Scripted(UnusableAnswerError("cut off"), {"items": [{"index": 0, "summary": "ok"}]})
    assert LLMProvider(transport, sleep=sleeps).summarize([["text"]]) == ["ok"]
    assert sleeps == [0.2]

    class NotText:
        def complete(self, system: str, user: str) -> str:
            return None  # type: ignore[return-value]

    with pytest.raises(ProviderError, match="returned NoneType"):
        LLMProvider(NotText()).summarize([["text"]])


def test_backoff_doubles_up_to_five_seconds(sleeps: Sleeps) -> None:
    transport = Scripted(*["garbage"] * 8)
    with pytest.raises(ProviderError, match="after 8 attempt"):
        LLMProvider(transport, max_attempts=8, sleep=sleeps).summarize([["text"]])
    assert sleeps == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_constructor_and_input_checks() -> None:
    with pytest.raises(InvalidInputError, match="complete"):
        LLMProvider(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_attempts"):
        LLMProvider(Scripted(), max_attempts=0)
    with pytest.raises(InvalidInputError, match="batch_size"):
        LLMProvider(Scripted(), batch_size=0)
    with pytest.raises(InvalidInputError, match="importance_fallback"):
        LLMProvider(Scripted(), importance_fallback=object())  # type: ignore[arg-type]
    provider = LLMProvider(Scripted())
    with pytest.raises(InvalidInputError, match="one speaker"):
        provider.extract_facts(["a", "b"], speakers=["Ana"])
    with pytest.raises(InvalidInputError, match="succeeded"):
        provider.distill_learning(JWT_STORY, succeeded="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_words"):
        provider.summarize([["a"]], max_words=0)
    with pytest.raises(InvalidInputError):
        provider.score_importance(3, source="user")  # type: ignore[arg-type]


def test_importance_fallback_and_llm_importance() -> None:
    class Always:
        def score_importance(self, content: str, *, source: str) -> float:
            return 0.42

    transport = Scripted({"importance": 2})
    assert LLMProvider(transport, importance_fallback=Always()).score_importance("x", source="user") == 0.42
    asking = LLMProvider(transport, llm_importance=True, max_attempts=1)
    assert asking.score_importance("  ", source="user") == 0.0
    with pytest.raises(ProviderError, match="importance"):
        asking.score_importance("x", source="user")


# -- async --------------------------------------------------------------------------------


def _all_calls(provider: LLMProvider, prefix: str) -> list[Callable[[], Any]]:
    fact = ExtractedFact("Ana", "lives in", "Lisbon", 0.8)
    return [
        lambda: getattr(provider, prefix + "score_importance")("I live in Lisbon", source="user"),
        lambda: getattr(provider, prefix + "summarize")([["We launch on September 14."]]),
        lambda: getattr(provider, prefix + "extract_facts")(["I live in Lisbon"], speakers=["Ana"]),
        lambda: getattr(provider, prefix + "extract_procedure")(JWT_STORY),
        lambda: getattr(provider, prefix + "distill_learning")(JWT_STORY, succeeded=True),
        lambda: getattr(provider, prefix + "conflicts")([(fact, fact)]),
    ]


ANSWERS: list[Reply] = [
    {"importance": 0.8},
    {"items": [{"index": 0, "summary": "Launch on September 14."}]},
    {"items": [{"index": 0, "facts": [_fact("Ana", "lives in", "Lisbon")]}]},
    {"procedure": PROCEDURE},
    {"learning": LESSON},
    {"items": [{"index": 0, "conflict": False}]},
]


async def test_async_methods_give_the_sync_results() -> None:
    sync_transport, async_transport, thread_transport = (
        Scripted(*ANSWERS),
        AsyncScripted(*ANSWERS),
        Scripted(*ANSWERS),
    )
    expected = [call() for call in _all_calls(LLMProvider(sync_transport, llm_importance=True), "")]
    awaited = [await call() for call in _all_calls(LLMProvider(async_transport, llm_importance=True), "a")]
    threaded = [await call() for call in _all_calls(LLMProvider(thread_transport, llm_importance=True), "a")]
    assert awaited == expected and threaded == expected
    assert async_transport.awaited == 6  # acomplete was used
    assert async_transport.sent == sync_transport.sent == thread_transport.sent
    for name in (
        "score_importance",
        "summarize",
        "extract_facts",
        "extract_procedure",
        "distill_learning",
        "conflicts",
    ):
        assert callable(getattr(LLMProvider, "a" + name))


async def test_async_retries_and_failures(sleeps: Sleeps) -> None:
    waits: list[float] = []

    async def asleep(seconds: float) -> None:
        waits.append(seconds)

    transport = AsyncScripted("{bad", {"items": [{"index": 0, "summary": "ok"}]})
    assert await LLMProvider(transport, asleep=asleep, sleep=sleeps).asummarize([["text"]]) == ["ok"]
    assert waits == [0.2] and sleeps == []

    boom = TimeoutError("model timed out")
    with pytest.raises(ProviderError, match="timed out") as caught:
        await LLMProvider(AsyncScripted(boom)).asummarize([["text"]])
    assert caught.value.__cause__ is boom


# -- consolidation end to end ---------------------------------------------------------------


class ByTask:
    """A scripted model for a whole consolidation cycle: a canned answer per task, shaped to the request."""

    def __init__(self) -> None:
        self.tasks: list[str] = []

    def complete(self, system: str, user: str) -> str:
        sent = json.loads(user)
        if "summaries" in system:
            self.tasks.append("summarize")
            answer: dict[str, Any] = {
                "items": [
                    {"index": g["index"], "summary": "Ana talked about Lisbon."} for g in sent["groups"]
                ]
            }
        elif "triples" in system:
            self.tasks.append("facts")
            answer = {
                "items": [
                    {
                        "index": it["index"],
                        "facts": [_fact(it["speaker"], "lives in", "Lisbon")]
                        if "Lisbon" in it["text"]
                        else [],
                    }
                    for it in sent["items"]
                ]
            }
        elif "procedure" in system:
            self.tasks.append("procedure")
            answer = {"procedure": PROCEDURE}
        elif "lesson" in system:
            self.tasks.append("learning")
            answer = {"learning": LESSON}
        else:
            self.tasks.append("other")
            answer = {"items": [{"index": it["index"], "conflict": True} for it in sent.get("items", [])]}
        return json.dumps(answer)


def test_consolidation_with_the_llm_provider_end_to_end(tmp_path: Path) -> None:
    model = ByTask()
    with Memory(
        tmp_path / "memory",
        embedder=HashingEmbedder(),
        provider=LLMProvider(model),
        config=MemoryConfig(importance_threshold=0.0),
    ) as mem:
        first = mem.observe("I just moved to Lisbon!", user_id="ana", session_id="s1")
        mem.observe("JWT tokens expire after 5 minutes instead of 30.", user_id="ana", session_id="s1")
        mem.observe("Added a 60-second leeway to jwt.decode().", user_id="ana", session_id="s1")
        mem.observe("Fixed, it works now!", user_id="ana", session_id="s1")
        report = mem.consolidate()
        assert report.errors == []
        facts = mem.facts_about("the user", user_id="ana")  # she gave no name: never her id
        assert [(f.subject, f.predicate, f.object, f.source_ids) for f in facts] == [
            ("the user", "lives in", "Lisbon", (first,))
        ]
        procedures = mem.find_procedures(["jwt"], user_id="ana")
        assert [p.name for p in procedures] == ["Fix JWT clock skew"]
    assert {"facts", "procedure", "learning"} <= set(model.tasks)
