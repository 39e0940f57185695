"""A provider backed by any chat model, through a small :class:`~ucma_core.providers.ChatTransport`.

:class:`LLMProvider` holds everything UCMA asks of a model that does not depend on
which model answers: the prompts (:mod:`~ucma_core.providers.prompts`), batching, the
strict checks of every answer (:mod:`~ucma_core.providers.answers`), asking again
with exponential backoff, and errors that say what went wrong. A transport only sends
a system and a user message and returns the reply text; the OpenAI provider is one,
and a LangChain chat model or a LlamaIndex LLM becomes one in a few lines.

Every method sends one request per batch and checks the answer strictly: a reply
that is not JSON, has the wrong shape, misses or repeats an item, or carries a
confidence outside [0, 1] is asked again (up to ``max_attempts`` requests in all,
waiting 0.2 s, 0.4 s, 0.8 s… up to 5 s in between) and then raises
:class:`~ucma_core.errors.ProviderError`. A transport that raises fails the call at
once with a :class:`~ucma_core.errors.ProviderError` chained to its exception.

Importance is scored on every ``observe``, so by default it stays offline (the
rule-based scorer, or ``importance_fallback``); pass ``llm_importance=True`` to ask
the model.

The request logic of each method is written once, as a plan that yields requests and
receives parsed answers; :meth:`LLMProvider._run` carries a plan out with the
transport's ``complete`` and :meth:`LLMProvider._arun` with ``acomplete``, so the
``a``-prefixed async methods are thin twins of the sync ones.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar, cast

from ucma_core.embedders.cache import check_int
from ucma_core.errors import InvalidInputError, ProviderError, UCMAError
from ucma_core.importance import HeuristicImportance
from ucma_core.protocols import ImportanceScorer
from ucma_core.providers.answers import (
    UnusableAnswerError,
    check_facts,
    check_flag,
    check_text,
    json_object,
    parse_importance,
    parse_items,
    parse_learning,
    parse_procedure,
)
from ucma_core.providers.checks import (
    check_episodes,
    check_fact_pairs,
    check_groups,
    check_texts_and_speakers,
)
from ucma_core.providers.prompts import PROMPTS
from ucma_core.providers.protocols import (
    ChatTransport,
    DistilledLearning,
    ExtractedFact,
    ExtractedProcedure,
)
from ucma_core.providers.text import same_name

__all__ = ["LLMProvider"]

_BACKOFF_S = 0.2  # first wait before asking again after an unusable answer; doubles each time
_MAX_BACKOFF_S = 5.0
_T = TypeVar("_T")


@dataclass(frozen=True)
class _Request:
    """One question to the model: the task (which prompt), its JSON payload, how to read the answer."""

    task: str
    payload: dict[str, Any]
    parse: Callable[[dict[str, Any]], Any]


#: A method's request logic: yields requests, receives each one's parsed answer, returns the result.
_Plan = Generator[_Request, Any, _T]


class LLMProvider:
    """A :class:`~ucma_core.providers.protocols.Provider` backed by any chat model.

    Args:
        transport: Sends a system and a user message to the model and returns its text
            (a :class:`~ucma_core.providers.ChatTransport`; an ``acomplete`` method, when
            present, serves the async methods).
        max_attempts: Requests per question at most: an unusable answer is asked again
            until this many were sent (at least 1).
        batch_size: Items (texts, groups, pairs) per request.
        importance_fallback: Scores importance when ``llm_importance`` is off
            (default :class:`~ucma_core.importance.HeuristicImportance`).
        llm_importance: Ask the model for importance, one request per observation. Off by
            default: importance is scored on every ``observe``.
        name: What error messages call the model (default: the transport's ``name``
            attribute when it is a string, else its class name).
        sleep: Called with the seconds to wait between attempts (tests pass a fake).
        asleep: Awaited with the seconds to wait between attempts in the async methods.

    Raises:
        InvalidInputError: ``transport`` has no ``complete`` method, a number is out of
            range, or ``importance_fallback`` cannot score importance.

    Examples:
        >>> import json
        >>> class Canned:
        ...     def complete(self, system: str, user: str) -> str:
        ...         fact = {"subject": "Ana", "predicate": "lives in", "object": "Lisbon", "confidence": 0.9}
        ...         return json.dumps({"items": [{"index": 0, "facts": [fact]}]})
        >>> provider = LLMProvider(Canned())
        >>> [[fact]] = provider.extract_facts(["I live in Lisbon"], speakers=["Ana"])
        >>> fact.subject, fact.predicate, fact.object, fact.confidence
        ('Ana', 'lives in', 'Lisbon', 0.9)
    """

    def __init__(
        self,
        transport: ChatTransport,
        *,
        max_attempts: int = 3,
        batch_size: int = 10,
        importance_fallback: ImportanceScorer | None = None,
        llm_importance: bool = False,
        name: str | None = None,
        sleep: Callable[[float], object] = time.sleep,
        asleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        if not callable(getattr(transport, "complete", None)):
            raise InvalidInputError(
                f"transport must have a complete(system, user) -> str method, got {type(transport).__name__}"
            )
        check_int("max_attempts", max_attempts, 1, None)
        check_int("batch_size", batch_size, 1, None)
        if importance_fallback is not None and not callable(
            getattr(importance_fallback, "score_importance", None)
        ):
            raise InvalidInputError(
                "importance_fallback must have a score_importance(content, *, source) method"
            )
        self._transport = transport
        self._max_attempts = max_attempts
        self._batch_size = batch_size
        self._fallback: ImportanceScorer = importance_fallback or HeuristicImportance()
        self._llm_importance = bool(llm_importance)
        label = getattr(transport, "name", None)
        self._name = name or (label if isinstance(label, str) and label else type(transport).__name__)
        self._sleep = sleep
        self._asleep = asleep

    @property
    def transport(self) -> ChatTransport:
        """The transport the model is asked through."""
        return self._transport

    def __repr__(self) -> str:
        return f"LLMProvider({self._name!r}, llm_importance={self._llm_importance})"

    # -- Provider ------------------------------------------------------------------

    def score_importance(self, content: str, *, source: str) -> float:
        """Importance in [0, 1]: from ``importance_fallback`` unless ``llm_importance`` is on.

        Raises:
            InvalidInputError: ``content`` or ``source`` is not a string.
            ProviderError: (``llm_importance`` only) the request failed or the answer is unusable.
        """
        return self._run(self._importance(content, source))

    def summarize(self, groups: list[list[str]], *, max_words: int = 60) -> list[str]:
        """One summary of at most ``max_words`` words per group ("" for an empty group).

        Raises:
            InvalidInputError: ``groups`` is not a list of lists of strings, or ``max_words`` < 1.
            ProviderError: A request failed or its answer is unusable.
        """
        return self._run(self._summarize(groups, max_words))

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        """Facts stated in each text, first person resolved to the speaker (``"user"`` when ``None``).

        Facts whose subject and object are the same name are dropped.

        Raises:
            InvalidInputError: ``texts`` is not a list of strings, or ``speakers`` does not
                hold one string or ``None`` per text.
            ProviderError: A request failed or its answer is unusable.
        """
        return self._run(self._facts(texts, speakers))

    def extract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """A procedure from episodes that ended in success, or ``None``.

        Raises:
            InvalidInputError: ``episodes`` is not a list of strings.
            ProviderError: The request failed or its answer is unusable.
        """
        return self._run(self._procedure(episodes))

    def distill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """A lesson from episodes that ended in success or failure, or ``None``.

        Raises:
            InvalidInputError: ``episodes`` is not a list of strings or ``succeeded`` not a bool.
            ProviderError: The request failed or its answer is unusable.
        """
        return self._run(self._learning(episodes, succeeded))

    def conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        """For each (older, newer) pair: does the newer fact contradict the older one?

        Raises:
            InvalidInputError: ``pairs`` is not a list of (older, newer) fact tuples.
            ProviderError: A request failed or its answer is unusable.
        """
        return self._run(self._conflicts(pairs))

    # -- the same, async -------------------------------------------------------------

    async def ascore_importance(self, content: str, *, source: str) -> float:
        """Async :meth:`score_importance`."""
        return await self._arun(self._importance(content, source))

    async def asummarize(self, groups: list[list[str]], *, max_words: int = 60) -> list[str]:
        """Async :meth:`summarize`."""
        return await self._arun(self._summarize(groups, max_words))

    async def aextract_facts(
        self, texts: list[str], *, speakers: list[str | None]
    ) -> list[list[ExtractedFact]]:
        """Async :meth:`extract_facts`."""
        return await self._arun(self._facts(texts, speakers))

    async def aextract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """Async :meth:`extract_procedure`."""
        return await self._arun(self._procedure(episodes))

    async def adistill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """Async :meth:`distill_learning`."""
        return await self._arun(self._learning(episodes, succeeded))

    async def aconflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        """Async :meth:`conflicts`."""
        return await self._arun(self._conflicts(pairs))

    # -- plans: what each method asks, written once ------------------------------------

    def _importance(self, content: str, source: str) -> _Plan[float]:
        if not isinstance(content, str) or not isinstance(source, str):
            raise InvalidInputError("score_importance takes a str content and a str source")
        if not self._llm_importance:
            return self._fallback.score_importance(content, source=source)
        if not content.strip():
            return 0.0
        score: float = yield _Request("importance", {"source": source, "text": content}, parse_importance)
        return score

    def _summarize(self, groups: list[list[str]], max_words: int) -> _Plan[list[str]]:
        checked = check_groups(groups)
        check_int("max_words", max_words, 1)
        out = [""] * len(checked)
        todo = [i for i, group in enumerate(checked) if any(t.strip() for t in group)]
        for batch in _chunks(todo, self._batch_size):
            payload = {
                "max_words": max_words,
                "groups": [{"index": k, "texts": checked[i]} for k, i in enumerate(batch)],
            }
            parse = partial(parse_items, count=len(batch), key="summary", check=check_text)
            summaries = yield _Request("summarize", payload, parse)
            for i, summary in zip(batch, summaries, strict=True):
                out[i] = _cap_words(summary, max_words)
        return out

    def _facts(self, texts: list[str], speakers: list[str | None]) -> _Plan[list[list[ExtractedFact]]]:
        items, who = check_texts_and_speakers(texts, speakers)
        out: list[list[ExtractedFact]] = [[] for _ in items]
        todo = [i for i, text in enumerate(items) if text.strip()]
        for batch in _chunks(todo, self._batch_size):
            payload = {
                "items": [
                    {"index": k, "speaker": (who[i] or "").strip() or "user", "text": items[i]}
                    for k, i in enumerate(batch)
                ]
            }
            parse = partial(parse_items, count=len(batch), key="facts", check=check_facts)
            found = yield _Request("facts", payload, parse)
            for i, facts in zip(batch, found, strict=True):
                out[i] = _as_speaker(facts, (who[i] or "").strip() or "user")
        return out

    def _procedure(self, episodes: list[str]) -> _Plan[ExtractedProcedure | None]:
        checked = check_episodes(episodes)
        if not any(e.strip() for e in checked):
            return None
        procedure: ExtractedProcedure | None = yield _Request(
            "procedure", {"episodes": checked}, parse_procedure
        )
        return procedure

    def _learning(self, episodes: list[str], succeeded: bool) -> _Plan[DistilledLearning | None]:
        checked = check_episodes(episodes)
        if not isinstance(succeeded, bool):
            raise InvalidInputError(f"succeeded must be a bool, got {type(succeeded).__name__}")
        if not any(e.strip() for e in checked):
            return None
        lesson: DistilledLearning | None = yield _Request(
            "learning", {"succeeded": succeeded, "episodes": checked}, parse_learning
        )
        return lesson

    def _conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> _Plan[list[bool]]:
        checked = check_fact_pairs(pairs)
        out: list[bool] = []
        for batch in _chunks(checked, self._batch_size):
            payload = {
                "items": [
                    {"index": k, "older": _triple(old), "newer": _triple(new, revision=True)}
                    for k, (old, new) in enumerate(batch)
                ]
            }
            parse = partial(parse_items, count=len(batch), key="conflict", check=check_flag)
            flags = yield _Request("conflicts", payload, parse)
            out.extend(flags)
        return out

    # -- carrying plans out ----------------------------------------------------------

    def _run(self, plan: _Plan[_T]) -> _T:
        answer: Any = None
        while True:
            try:
                request = plan.send(answer)
            except StopIteration as done:
                return cast(_T, done.value)
            answer = self._ask(request)

    async def _arun(self, plan: _Plan[_T]) -> _T:
        answer: Any = None
        while True:
            try:
                request = plan.send(answer)
            except StopIteration as done:
                return cast(_T, done.value)
            answer = await self._aask(request)

    def _ask(self, request: _Request) -> Any:
        """Send ``request``; ask again (with backoff) while the answer is unusable."""
        system, user = PROMPTS[request.task], _dumps(request.payload)
        attempt = 0
        while True:
            attempt += 1
            try:
                return request.parse(json_object(self._complete(request.task, system, user)))
            except UnusableAnswerError as e:
                self._sleep(self._backoff(request.task, attempt, e))

    async def _aask(self, request: _Request) -> Any:
        """:meth:`_ask`, awaiting the transport and the waits."""
        system, user = PROMPTS[request.task], _dumps(request.payload)
        attempt = 0
        while True:
            attempt += 1
            try:
                return request.parse(json_object(await self._acomplete(request.task, system, user)))
            except UnusableAnswerError as e:
                await self._asleep(self._backoff(request.task, attempt, e))

    def _complete(self, task: str, system: str, user: str) -> str:
        try:
            answer = self._transport.complete(system, user)
        except UCMAError:  # an unusable answer (asked again) or an error already in UCMA's terms
            raise
        except Exception as e:
            raise self._failed(task, e) from e
        return self._text(task, answer)

    async def _acomplete(self, task: str, system: str, user: str) -> str:
        """:meth:`_complete` through the transport's ``acomplete``, or ``complete`` in a worker thread."""
        acomplete = getattr(self._transport, "acomplete", None)
        try:
            if callable(acomplete):
                answer = await acomplete(system, user)
            else:
                answer = await asyncio.to_thread(self._transport.complete, system, user)
        except UCMAError:
            raise
        except Exception as e:
            raise self._failed(task, e) from e
        return self._text(task, answer)

    def _failed(self, task: str, error: Exception) -> ProviderError:
        return ProviderError(f"the {task} request to {self._name} failed: {type(error).__name__}: {error}")

    def _text(self, task: str, answer: object) -> str:
        if not isinstance(answer, str):
            raise ProviderError(
                f"the {task} transport of {self._name} returned {type(answer).__name__}, not the reply text"
            )
        return answer

    def _backoff(self, task: str, attempt: int, error: UnusableAnswerError) -> float:
        """Seconds to wait before attempt ``attempt + 1``, or the error once attempts are used up."""
        if attempt >= self._max_attempts:
            raise ProviderError(
                f"the {task} answer from {self._name} is unusable after {attempt} attempt(s): {error}"
            ) from error
        return min(_MAX_BACKOFF_S, _BACKOFF_S * 2.0 ** (attempt - 1))


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _chunks(items: list[_T], size: int) -> list[list[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _cap_words(text: str, max_words: int) -> str:
    """Models do not count words exactly; keep the summary within ``max_words``."""
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]).rstrip(".,;:") + "…"


def _triple(fact: ExtractedFact, *, revision: bool = False) -> dict[str, Any]:
    """The fact as JSON; with ``revision``, whether it revises an earlier one and what it replaces."""
    out: dict[str, Any] = {"subject": fact.subject, "predicate": fact.predicate, "object": fact.object}
    if revision and fact.revises:
        out["revises"] = True
    if revision and fact.replaces:
        out["replaces"] = fact.replaces
    return out


#: Subjects a model may write for the speaker instead of their name.
_FIRST_PERSON = frozenset({"i", "me", "myself", "user", "the user", "speaker", "the speaker"})


def _as_speaker(facts: list[ExtractedFact], speaker: str) -> list[ExtractedFact]:
    """Facts with a first-person subject ("I", "the user") given to the speaker; self-naming
    facts that this reveals ("the user is named Ana", said by Ana) are dropped."""
    out = []
    for fact in facts:
        if fact.subject.strip().lower() in _FIRST_PERSON:
            fact = dataclasses.replace(fact, subject=speaker)
        if not same_name(fact.subject, fact.object):
            out.append(fact)
    return out
