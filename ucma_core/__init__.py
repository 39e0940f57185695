"""UCMA core: a persistent cognitive memory for LLM applications and agents.

Framework-neutral: nothing here imports LangChain, LangGraph or LlamaIndex.
"""

from ucma_core.config import ChromaConfig, GraphConfig, MemoryConfig, RankingConfig, RetentionConfig
from ucma_core.errors import UCMAError
from ucma_core.graph.memory_graph import EdgeType
from ucma_core.memory import Memory
from ucma_core.records import (
    Episode,
    Fact,
    Intention,
    IntentionStatus,
    Learning,
    LearningType,
    MemoryRecord,
    MemoryType,
    Procedure,
    ProcedureStatus,
    RetrievalResult,
    Source,
    Tier,
)
from ucma_core.scope import ANY

__all__ = [
    "ANY",
    "ChromaConfig",
    "EdgeType",
    "Episode",
    "Fact",
    "GraphConfig",
    "Intention",
    "IntentionStatus",
    "Learning",
    "LearningType",
    "Memory",
    "MemoryConfig",
    "MemoryRecord",
    "MemoryType",
    "Procedure",
    "ProcedureStatus",
    "RankingConfig",
    "RetentionConfig",
    "RetrievalResult",
    "Source",
    "Tier",
    "UCMAError",
]

__version__ = "0.1.0"
