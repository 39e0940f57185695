"""Model providers: what the memory asks of a model, and two ways to answer it.

``OfflineProvider`` answers with deterministic rules (no model, no network);
``OpenAIProvider`` asks an OpenAI chat model (``ucma[openai]``). Both implement the
:class:`Provider` protocol. Importing this package imports no optional dependency.
"""

from ucma_core.providers.offline import OfflineProvider
from ucma_core.providers.openai import OpenAIProvider
from ucma_core.providers.protocols import (
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
    "ConflictJudge",
    "DistilledLearning",
    "ExtractedFact",
    "ExtractedProcedure",
    "FactExtractor",
    "LearningDistiller",
    "OfflineProvider",
    "OpenAIProvider",
    "ProcedureExtractor",
    "Provider",
    "Summarizer",
]
