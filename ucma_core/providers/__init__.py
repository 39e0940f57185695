"""Model providers: what the memory asks of a model, and the ways to answer it.

``OfflineProvider`` answers with deterministic rules (no model, no network);
``LLMProvider`` asks any chat model through a small ``ChatTransport`` (send a system
and a user message, get text back); ``OpenAIProvider`` is an ``LLMProvider`` that
talks to an OpenAI chat model (``ucma[openai]``). All implement the :class:`Provider`
protocol. Importing this package imports no optional dependency.
"""

from ucma_core.providers.answers import UnusableAnswerError
from ucma_core.providers.llm import LLMProvider
from ucma_core.providers.offline import OfflineProvider
from ucma_core.providers.openai import OpenAIProvider
from ucma_core.providers.protocols import (
    AsyncChatTransport,
    ChatTransport,
    ConflictJudge,
    DistilledLearning,
    ExtractedFact,
    ExtractedProcedure,
    FactExtractor,
    LearningDistiller,
    ProcedureExtractor,
    Provider,
    Summarizer,
)

__all__ = [
    "AsyncChatTransport",
    "ChatTransport",
    "ConflictJudge",
    "DistilledLearning",
    "ExtractedFact",
    "ExtractedProcedure",
    "FactExtractor",
    "LLMProvider",
    "LearningDistiller",
    "OfflineProvider",
    "OpenAIProvider",
    "ProcedureExtractor",
    "Provider",
    "Summarizer",
    "UnusableAnswerError",
]
