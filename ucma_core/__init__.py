"""UCMA core: a persistent cognitive memory for LLM applications and agents.

Framework-neutral: nothing here imports LangChain, LangGraph or LlamaIndex.
"""

from ucma_core.config import (
    ChromaConfig,
    ConsolidationConfig,
    ForgettingConfig,
    FusionConfig,
    GraphConfig,
    MemoryConfig,
    RankingConfig,
    RetentionConfig,
    WorkingMemoryConfig,
)
from ucma_core.dynamics.consolidation import ConsolidationReport
from ucma_core.dynamics.forgetting import ForgettingReport
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
from ucma_core.working_memory import WorkingItem, WorkingMemory

__all__ = [
    "ANY",
    "ChromaConfig",
    "ConsolidationConfig",
    "ConsolidationReport",
    "EdgeType",
    "Episode",
    "Fact",
    "ForgettingConfig",
    "ForgettingReport",
    "FusionConfig",
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
    "WorkingItem",
    "WorkingMemory",
    "WorkingMemoryConfig",
]

__version__ = "0.1.0"
