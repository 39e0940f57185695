"""A provider backed by an OpenAI chat model (or any server that speaks the API) through the ``openai`` SDK.

Every method sends one chat completion per batch in JSON mode and checks the answer
strictly: a reply that is not JSON, has the wrong shape, misses or repeats an item, or
carries a confidence outside [0, 1] is asked again (at most ``max_retries`` more times,
with exponential backoff) and then raises :class:`~ucma_core.errors.ProviderError`.
HTTP failures and timeouts are retried by the SDK itself (``max_retries`` times) and
then raise :class:`~ucma_core.errors.ProviderError` too.

Importance is scored on every ``observe``, so by default it stays offline (the rule-based
scorer, or ``importance_fallback``); pass ``llm_importance=True`` to ask the model.

The SDK is imported on the first request, so importing this module costs nothing when
``ucma[openai]`` is not installed. With no ``api_key`` the SDK reads ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

from ucma_core.dynamics.importance import HeuristicImportance
from ucma_core.embedders.cache import check_int
from ucma_core.errors import ConfigurationError, InvalidInputError, ProviderError
from ucma_core.openai_client import OpenAIClientOwner, import_openai
from ucma_core.protocols import ImportanceScorer
from ucma_core.providers.offline import (
    check_episodes,
    check_fact_pairs,
    check_groups,
    check_texts_and_speakers,
)
from ucma_core.providers.protocols import DistilledLearning, ExtractedFact, ExtractedProcedure
from ucma_core.records import LearningType

__all__ = ["OpenAIProvider"]

_BACKOFF_S = 0.2  # first wait before asking again after an unusable answer; doubles each time
_MAX_BACKOFF_S = 5.0
_MAX_FIELD_CHARS = 2000
_LEARNING_TYPES = frozenset(t.value for t in LearningType)
_T = TypeVar("_T")

_PROMPTS = {
    "importance": (
        "You rate how worth remembering a message is for a personal assistant's long-term memory. "
        "High: facts about the person, preferences, decisions, commitments, dates, fixes to problems. "
        'Low: greetings, thanks, small talk. The input is JSON {"source": str, "text": str}. '
        'Reply with JSON only: {"importance": <number from 0 to 1>}.'
    ),
    "summarize": (
        "You write short, faithful summaries for an assistant's memory. The input is JSON "
        '{"max_words": int, "groups": [{"index": int, "texts": [str]}]}. For every group write one '
        "summary of at most max_words words that keeps names, numbers, dates, decisions and outcomes and "
        "adds nothing that is not in the texts. Reply with JSON only: "
        '{"items": [{"index": int, "summary": str}]}, one item per input group, same indexes.'
    ),
    "facts": (
        "You extract durable facts from messages as subject-predicate-object triples. The input is JSON "
        '{"items": [{"index": int, "speaker": str, "text": str}]}. First-person words (I, me, my) refer '
        "to the speaker: use the speaker's name as the subject. Use short lowercase predicates such as "
        '"lives in", "works at", "works as", "is named", "is", "likes", "dislikes", "prefers", '
        '"is allergic to", "has sister" (has + relation). Keep objects short, without articles or '
        "filler. Only state what the text says; small talk, questions and opinions about the "
        "conversation give no facts. Confidence is a number from 0 to 1. Reply with JSON only: "
        '{"items": [{"index": int, "facts": [{"subject": str, "predicate": str, "object": str, '
        '"confidence": number}]}]}, one item per input item, same indexes, "facts" empty when there is none.'
    ),
    "procedure": (
        "You turn a log of episodes into a reusable procedure, if the episodes show a sequence of "
        'actions that ended in success. The input is JSON {"episodes": [str]}. Reply with JSON only: '
        '{"procedure": {"name": str, "description": str, "steps": [str], "trigger_tags": [str]}} with '
        "short imperative steps in order and a few lowercase tags saying when it applies, or "
        '{"procedure": null} when there is no successful sequence of actions.'
    ),
    "learning": (
        "You distil one lesson from a log of episodes for an agent's memory. The input is JSON "
        '{"succeeded": bool, "episodes": [str]}. Say what the problem was and what worked (when '
        'succeeded) or what was tried and did not work (when not). Reply with JSON only: {"learning": '
        '{"title": str, "insight": str, "learning_type": str, "applicability": [str], "confidence": number}} '
        "where learning_type is one of " + ", ".join(sorted(_LEARNING_TYPES)) + ", applicability is a few "
        'lowercase tags and confidence is from 0 to 1, or {"learning": null} when there is no lesson.'
    ),
    "conflicts": (
        "You judge whether a newer fact contradicts an older fact about the same subject, so the older "
        "one should be retired. Facts that can both be true (likes jazz, likes tea) do not conflict; a "
        "changed single value (lives in Paris, then lives in Berlin) does. The input is JSON "
        '{"items": [{"index": int, "older": {"subject", "predicate", "object"}, "newer": {...}}]}. '
        'Reply with JSON only: {"items": [{"index": int, "conflict": bool}]}, one item per input item.'
    ),
}


class _BadAnswer(ProviderError):
    """An answer that arrived but cannot be used; worth asking again."""


class OpenAIProvider(OpenAIClientOwner):
    """A :class:`~ucma_core.providers.protocols.Provider` backed by an OpenAI chat model.

    Args:
        model: The chat model; it must support ``response_format={"type": "json_object"}``.
        client: A ready ``openai.OpenAI`` (or ``AzureOpenAI``) client. When given,
            ``api_key``, ``base_url``, ``timeout`` and the SDK's ``max_retries`` are its own.
        api_key: API key; by default the SDK reads ``OPENAI_API_KEY``.
        base_url: API root, for proxies and OpenAI-compatible servers.
        timeout: Seconds per HTTP request.
        max_retries: Retries the SDK makes on connection errors, timeouts, 429 and 5xx, and
            the number of times an unusable answer is asked again.
        batch_size: Items (texts, groups, pairs) per request.
        importance_fallback: Scores importance when ``llm_importance`` is off
            (default :class:`~ucma_core.dynamics.importance.HeuristicImportance`).
        llm_importance: Ask the model for importance, one request per observation. Off by
            default: importance is scored on every ``observe``.
        temperature: Sampling temperature sent with each request; ``None`` sends none (for
            models that accept only their default).
        sleep: Called with the seconds to wait between attempts (tests pass a fake).

    Nothing is imported or connected until the first request.

    Raises:
        ConfigurationError: ``client`` together with ``api_key``/``base_url``, or an empty model.
        InvalidInputError: A numeric argument is out of range.

    Example:
        >>> provider = OpenAIProvider("gpt-4o-mini", api_key="sk-...")
        >>> provider.score_importance("ok thanks", source="user") < 0.2  # offline by default
        True
    """

    def __init__(
        self,
        model: str = "gpt-4o-mini",
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        batch_size: int = 10,
        importance_fallback: ImportanceScorer | None = None,
        llm_importance: bool = False,
        temperature: float | None = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError("model must be a non-empty string such as 'gpt-4o-mini'")
        if temperature is not None and not (_is_number(temperature) and 0 <= temperature <= 2):
            raise InvalidInputError(f"temperature must be None or a number in [0, 2], got {temperature!r}")
        check_int("batch_size", batch_size, 1, None)
        if importance_fallback is not None and not callable(
            getattr(importance_fallback, "score_importance", None)
        ):
            raise InvalidInputError(
                "importance_fallback must have a score_importance(content, *, source) method"
            )
        OpenAIClientOwner.__init__(
            self, client=client, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self._model = model
        self._max_retries = max_retries
        self._batch_size = batch_size
        self._fallback: ImportanceScorer = importance_fallback or HeuristicImportance()
        self._llm_importance = bool(llm_importance)
        self._temperature = temperature
        self._sleep = sleep

    @property
    def model(self) -> str:
        """The chat model asked."""
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self._model!r}, llm_importance={self._llm_importance})"

    # -- Provider ------------------------------------------------------------------

    def score_importance(self, content: str, *, source: str) -> float:
        """Importance in [0, 1]: from ``importance_fallback`` unless ``llm_importance`` is on.

        Raises:
            InvalidInputError: ``content`` or ``source`` is not a string.
            ProviderError: (``llm_importance`` only) the request failed or the answer is unusable.
        """
        if not isinstance(content, str) or not isinstance(source, str):
            raise InvalidInputError("score_importance takes a str content and a str source")
        if not self._llm_importance:
            return self._fallback.score_importance(content, source=source)
        if not content.strip():
            return 0.0
        return self._ask("importance", {"source": source, "text": content}, _parse_importance)

    def summarize(self, groups: list[list[str]], *, max_words: int = 60) -> list[str]:
        """One summary of at most ``max_words`` words per group ("" for an empty group)."""
        checked = check_groups(groups)
        check_int("max_words", max_words, 1)
        out = [""] * len(checked)
        todo = [i for i, group in enumerate(checked) if any(t.strip() for t in group)]
        for batch in _chunks(todo, self._batch_size):
            payload = {
                "max_words": max_words,
                "groups": [{"index": k, "texts": checked[i]} for k, i in enumerate(batch)],
            }
            summaries = self._ask(
                "summarize", payload, partial(_parse_items, count=len(batch), key="summary", check=_text)
            )
            for i, summary in zip(batch, summaries, strict=True):
                out[i] = _cap_words(summary, max_words)
        return out

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        """Facts stated in each text, first person resolved to the speaker (``"user"`` when ``None``)."""
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
            found = self._ask(
                "facts", payload, partial(_parse_items, count=len(batch), key="facts", check=_facts)
            )
            for i, facts in zip(batch, found, strict=True):
                out[i] = facts
        return out

    def extract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """A procedure from episodes that ended in success, or ``None``."""
        checked = check_episodes(episodes)
        if not any(e.strip() for e in checked):
            return None
        return self._ask("procedure", {"episodes": checked}, _parse_procedure)

    def distill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """A lesson from episodes that ended in success or failure, or ``None``."""
        checked = check_episodes(episodes)
        if not isinstance(succeeded, bool):
            raise InvalidInputError(f"succeeded must be a bool, got {type(succeeded).__name__}")
        if not any(e.strip() for e in checked):
            return None
        return self._ask("learning", {"succeeded": succeeded, "episodes": checked}, _parse_learning)

    def conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        """For each (older, newer) pair: does the newer fact contradict the older one?"""
        checked = check_fact_pairs(pairs)
        out: list[bool] = []
        for batch in _chunks(checked, self._batch_size):
            payload = {
                "items": [
                    {"index": k, "older": _triple(old), "newer": _triple(new)}
                    for k, (old, new) in enumerate(batch)
                ]
            }
            parse = partial(_parse_items, count=len(batch), key="conflict", check=_flag)
            out.extend(self._ask("conflicts", payload, parse))
        return out

    # -- requests ------------------------------------------------------------------

    def _ask(self, task: str, payload: dict[str, Any], parse: Callable[[dict[str, Any]], _T]) -> _T:
        """Send one request; ask again (with backoff) while the answer is unusable."""
        openai = import_openai("OpenAIProvider")
        client = self._get_client(openai)
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": _PROMPTS[task]},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
            ],
            "response_format": {"type": "json_object"},
        }
        if self._temperature is not None:
            request["temperature"] = self._temperature
        attempt = 0
        while True:
            try:
                return parse(_json_object(self._complete(openai, client, task, request)))
            except _BadAnswer as e:
                attempt += 1
                if attempt > self._max_retries:
                    raise ProviderError(
                        f"OpenAI {task} answer from {self._model} is unusable after {attempt} attempt(s): {e}"
                    ) from e
                self._sleep(min(_MAX_BACKOFF_S, _BACKOFF_S * 2 ** (attempt - 1)))

    def _complete(self, openai: Any, client: Any, task: str, request: dict[str, Any]) -> str:
        try:
            response = client.chat.completions.create(**request)
        except openai.APITimeoutError as e:
            raise ProviderError(f"OpenAI {task} request to {self._model} timed out: {e}") from e
        except openai.OpenAIError as e:
            raise ProviderError(f"OpenAI {task} request to {self._model} failed: {e}") from e
        except ValueError as e:  # a body that is not JSON
            raise _BadAnswer(f"the response body is not valid JSON: {e}") from e
        try:
            choice = response.choices[0]
            content, finish = choice.message.content, choice.finish_reason
            refusal = getattr(choice.message, "refusal", None)
        except (AttributeError, IndexError, TypeError) as e:
            raise _BadAnswer(f"the response has no message: {e}") from e
        if refusal:
            raise ProviderError(f"{self._model} refused the {task} request: {refusal}")
        if finish == "length":
            raise _BadAnswer("the answer was cut off (finish_reason 'length')")
        if not isinstance(content, str) or not content.strip():
            raise _BadAnswer("the answer is empty")
        return content


# -- answer checks: each raises _BadAnswer --------------------------------------------


def _json_object(content: str) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError as e:
        raise _BadAnswer(f"the answer is not valid JSON ({e}): {content[:200]!r}") from e
    if not isinstance(value, dict):
        raise _BadAnswer(f"the answer is JSON {type(value).__name__}, not an object")
    return value


def _parse_items(
    answer: dict[str, Any], count: int, key: str, check: Callable[[object, str], _T]
) -> list[_T]:
    """``answer["items"]``: exactly one ``{"index": i, key: ...}`` per index ``0..count-1``."""
    items = answer.get("items")
    if not isinstance(items, list):
        raise _BadAnswer(f'"items" must be a list, got {type(items).__name__}')
    if len(items) != count:
        raise _BadAnswer(f'"items" has {len(items)} entries for {count} inputs')
    out: dict[int, _T] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or index in out:
            raise _BadAnswer(f"item {item!r:.200} has a missing, repeated or out-of-range index")
        if key not in item:
            raise _BadAnswer(f'item {index} has no "{key}"')
        out[index] = check(item[key], f"item {index} {key}")
    return [out[i] for i in range(count)]


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _BadAnswer(f"{where} must be a non-empty string, got {value!r:.100}")
    if len(value) > _MAX_FIELD_CHARS:
        raise _BadAnswer(f"{where} is {len(value)} characters long (at most {_MAX_FIELD_CHARS})")
    return " ".join(value.split())


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise _BadAnswer(f"{where} must be true or false, got {value!r:.100}")
    return value


def _unit(value: object, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)  # NaN fails the range test
    raise _BadAnswer(f"{where} must be a number in [0, 1], got {value!r:.100}")


def _tags(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _BadAnswer(f"{where} must be a list of strings, got {type(value).__name__}")
    return tuple(dict.fromkeys(_text(tag, where).lower() for tag in value))


def _fields(value: object, where: str, required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _BadAnswer(f"{where} must be an object, got {type(value).__name__}")
    missing = [k for k in required if k not in value]
    if missing:
        raise _BadAnswer(f"{where} lacks {', '.join(missing)}")
    return value


def _facts(value: object, where: str) -> list[ExtractedFact]:
    if not isinstance(value, list):
        raise _BadAnswer(f"{where} must be a list, got {type(value).__name__}")
    out: dict[tuple[str, str, str], ExtractedFact] = {}
    for n, raw in enumerate(value):
        at = f"{where}[{n}]"
        fact = _fields(raw, at, ("subject", "predicate", "object", "confidence"))
        subject, obj = _text(fact["subject"], f"{at} subject"), _text(fact["object"], f"{at} object")
        predicate = _text(fact["predicate"], f"{at} predicate").lower()
        confidence = _unit(fact["confidence"], f"{at} confidence")
        key = (subject.lower(), predicate, obj.lower())
        if key not in out or out[key].confidence < confidence:
            out[key] = ExtractedFact(subject, predicate, obj, confidence)
    return list(out.values())


def _parse_importance(answer: dict[str, Any]) -> float:
    return _unit(answer.get("importance"), '"importance"')


def _parse_procedure(answer: dict[str, Any]) -> ExtractedProcedure | None:
    if "procedure" not in answer:
        raise _BadAnswer('the answer has no "procedure"')
    if answer["procedure"] is None:
        return None
    raw = _fields(answer["procedure"], '"procedure"', ("name", "steps"))
    steps = raw["steps"]
    if not isinstance(steps, list) or not steps:
        raise _BadAnswer(f'"procedure" steps must be a non-empty list of strings, got {steps!r:.100}')
    description = raw.get("description") or ""
    return ExtractedProcedure(
        name=_text(raw["name"], '"procedure" name'),
        steps=tuple(_text(step, '"procedure" step') for step in steps),
        description=_text(description, '"procedure" description') if description else "",
        trigger_tags=_tags(raw.get("trigger_tags"), '"procedure" trigger_tags'),
    )


def _parse_learning(answer: dict[str, Any]) -> DistilledLearning | None:
    if "learning" not in answer:
        raise _BadAnswer('the answer has no "learning"')
    if answer["learning"] is None:
        return None
    raw = _fields(answer["learning"], '"learning"', ("title", "insight", "learning_type", "confidence"))
    kind = raw["learning_type"]
    if kind not in _LEARNING_TYPES:
        raise _BadAnswer(f'"learning" learning_type {kind!r:.60} is not one of {sorted(_LEARNING_TYPES)}')
    return DistilledLearning(
        title=_text(raw["title"], '"learning" title'),
        insight=_text(raw["insight"], '"learning" insight'),
        learning_type=kind,
        applicability=_tags(raw.get("applicability"), '"learning" applicability'),
        confidence=_unit(raw["confidence"], '"learning" confidence'),
    )


# -- small helpers ---------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _chunks(items: list[_T], size: int) -> list[list[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _cap_words(text: str, max_words: int) -> str:
    """Models do not count words exactly; keep the summary within ``max_words``."""
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]).rstrip(".,;:") + "…"


def _triple(fact: ExtractedFact) -> dict[str, str]:
    return {"subject": fact.subject, "predicate": fact.predicate, "object": fact.object}
