"""What a model provider does for UCMA: contracts and the plain records they return.

A provider is any object with these methods; :class:`Provider` bundles them. The
offline heuristics (:mod:`ucma_core.providers.offline`) and the LLM provider
(:mod:`ucma_core.providers.llm`, which the OpenAI provider builds on) implement all of
them. Methods take batches so a remote provider can answer many items in one request.
A provider signals a failed or unusable answer with
:class:`~ucma_core.errors.ProviderError`; the consolidation cycle then leaves the
episodes unconsolidated and retries them on its next run.

A :class:`ChatTransport` is the one thing :class:`~ucma_core.providers.LLMProvider`
needs from a model: send a system and a user message, get the model's text back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ucma_core.protocols import ImportanceScorer

__all__ = [
    "AsyncChatTransport",
    "ChatTransport",
    "ConflictJudge",
    "DistilledLearning",
    "ExtractedFact",
    "ExtractedProcedure",
    "FactExtractor",
    "LearningDistiller",
    "ProcedureExtractor",
    "Provider",
    "Summarizer",
]


@dataclass(frozen=True)
class ExtractedFact:
    """A subject–predicate–object statement found in text, with a confidence in [0, 1].

    ``revises`` marks a statement that corrects or updates an earlier one ("actually I
    decided on…", "we moved to…", "not … anymore"); ``replaces`` is the earlier value it
    names, when it names one ("instead of the ThinkPad", "switched from vim"). The sleep
    cycle uses both to let the revision supersede the stale fact.
    """

    subject: str
    predicate: str
    object: str
    confidence: float
    revises: bool = False
    replaces: str | None = None


@dataclass(frozen=True)
class ExtractedProcedure:
    """A reusable procedure found in a successful sequence of episodes."""

    name: str
    steps: tuple[str, ...]
    description: str = ""
    trigger_tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class DistilledLearning:
    """A lesson drawn from episodes; ``learning_type`` is a :class:`~ucma_core.LearningType` value."""

    title: str
    insight: str
    learning_type: str
    applicability: tuple[str, ...] = ()
    confidence: float = 0.5


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, groups: list[list[str]], *, max_words: int = 60) -> list[str]:
        """One summary (at most about ``max_words`` words) per group of texts."""
        ...


@runtime_checkable
class FactExtractor(Protocol):
    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        """Facts stated in each text. ``speakers[i]`` names who wrote ``texts[i]`` so that
        first-person statements ("I'm a nurse") get the right subject; ``None`` means unknown."""
        ...


@runtime_checkable
class ProcedureExtractor(Protocol):
    def extract_procedure(self, episodes: list[str]) -> ExtractedProcedure | None:
        """A procedure from a sequence of episodes that ended in success, or ``None``."""
        ...


@runtime_checkable
class LearningDistiller(Protocol):
    def distill_learning(self, episodes: list[str], *, succeeded: bool) -> DistilledLearning | None:
        """A lesson from episodes that ended in success or failure, or ``None``."""
        ...


@runtime_checkable
class ConflictJudge(Protocol):
    def conflicts(self, pairs: list[tuple[ExtractedFact, ExtractedFact]]) -> list[bool]:
        """For each (older, newer) pair about the same subject: does the newer contradict the older?"""
        ...


@runtime_checkable
class Provider(
    ImportanceScorer,
    Summarizer,
    FactExtractor,
    ProcedureExtractor,
    LearningDistiller,
    ConflictJudge,
    Protocol,
):
    """Everything the memory asks of a model, in one object."""


@runtime_checkable
class ChatTransport(Protocol):
    """Sends one chat request to a model: what :class:`~ucma_core.providers.LLMProvider` needs.

    A LangChain chat model, a LlamaIndex LLM or an HTTP client becomes a transport in a
    few lines. The transport does no parsing and no retrying of unusable answers: the
    provider checks every answer and asks again. A ``name`` string attribute, when the
    transport has one, names the model in the provider's error messages.
    """

    def complete(self, system: str, user: str) -> str:
        """Send one system message and one user message; return the model's reply text.

        The provider asks for JSON in ``system`` and sends JSON in ``user``; a transport
        that can, should request JSON output from the model (a "JSON mode").

        Raises:
            UnusableAnswerError: An answer arrived but cannot be used (cut off, no message);
                the provider asks again.
            Exception: Anything else fails the provider call with a
                :class:`~ucma_core.errors.ProviderError` chained to it (a
                :class:`~ucma_core.errors.UCMAError` passes through unchanged).
        """
        ...


@runtime_checkable
class AsyncChatTransport(Protocol):
    """The async twin of :class:`ChatTransport`; the provider's ``a``-methods use it when present."""

    async def acomplete(self, system: str, user: str) -> str:
        """Like :meth:`ChatTransport.complete`, awaited."""
        ...
