"""A provider backed by an OpenAI chat model (or any server that speaks the API) through the ``openai`` SDK.

:class:`OpenAIProvider` is an :class:`~ucma_core.providers.LLMProvider` whose
transport is itself: :meth:`OpenAIProvider.complete` sends one chat completion in
JSON mode. Prompts, answer checks, re-asking and backoff are the LLM provider's: an
unusable answer (not JSON, wrong shape, cut off) is asked again at most
``max_retries`` more times, then raises :class:`~ucma_core.errors.ProviderError`.
HTTP failures and timeouts are retried by the SDK itself (``max_retries`` times) and
then raise :class:`~ucma_core.errors.ProviderError` too.

Importance is scored on every ``observe``, so by default it stays offline (the rule-based
scorer, or ``importance_fallback``); pass ``llm_importance=True`` to ask the model.

The SDK is imported on the first request, so importing this module costs nothing when
``ucma[openai]`` is not installed. With no ``api_key`` the SDK reads ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ucma_core.errors import ConfigurationError, InvalidInputError, ProviderError
from ucma_core.openai_client import OpenAIClientOwner, import_openai
from ucma_core.protocols import ImportanceScorer
from ucma_core.providers.answers import UnusableAnswerError
from ucma_core.providers.llm import LLMProvider

__all__ = ["OpenAIProvider"]


class OpenAIProvider(LLMProvider, OpenAIClientOwner):
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
            (default :class:`~ucma_core.importance.HeuristicImportance`).
        llm_importance: Ask the model for importance, one request per observation. Off by
            default: importance is scored on every ``observe``.
        temperature: Sampling temperature sent with each request; ``None`` sends none (for
            models that accept only their default).
        sleep: Called with the seconds to wait between attempts (tests pass a fake).

    Nothing is imported or connected until the first request.

    Raises:
        ConfigurationError: ``client`` together with ``api_key``/``base_url``, or an empty model.
        InvalidInputError: A numeric argument is out of range.

    Examples:
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
        OpenAIClientOwner.__init__(
            self, client=client, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        LLMProvider.__init__(
            self,
            self,
            max_attempts=max_retries + 1,
            batch_size=batch_size,
            importance_fallback=importance_fallback,
            llm_importance=llm_importance,
            name=f"OpenAI {model}",
            sleep=sleep,
        )
        self._model = model
        self._temperature = temperature

    @property
    def model(self) -> str:
        """The chat model asked."""
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self._model!r}, llm_importance={self._llm_importance})"

    def complete(self, system: str, user: str) -> str:
        """Send one chat completion in JSON mode; return the reply text (the transport).

        Raises:
            DependencyMissingError: The ``openai`` package is not installed.
            UnusableAnswerError: The response body is not JSON, has no message, or the
                answer was cut off.
            ProviderError: The model refused to answer.
            openai.OpenAIError: The request failed (the provider wraps it in a ProviderError).
        """
        openai = import_openai("OpenAIProvider")
        client = self._get_client(openai)
        request: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {"type": "json_object"},
        }
        if self._temperature is not None:
            request["temperature"] = self._temperature
        try:
            response = client.chat.completions.create(**request)
        except openai.OpenAIError:
            raise
        except ValueError as e:  # a body that is not JSON
            raise UnusableAnswerError(f"the response body is not valid JSON: {e}") from e
        try:
            choice = response.choices[0]
            content, finish = choice.message.content, choice.finish_reason
            refusal = getattr(choice.message, "refusal", None)
        except (AttributeError, IndexError, TypeError) as e:
            raise UnusableAnswerError(f"the response has no message: {e}") from e
        if refusal:
            raise ProviderError(f"{self._model} refused the request: {refusal}")
        if finish == "length":
            raise UnusableAnswerError("the answer was cut off (finish_reason 'length')")
        return content if isinstance(content, str) else ""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
