"""UCMA core: a persistent cognitive memory for LLM applications and agents.

Framework-neutral: nothing here imports LangChain, LangGraph or LlamaIndex.
"""

from ucma_core.config import (
    ChromaConfig,
    ConsolidationConfig,
    ForgettingConfig,
    FusionConfig,
    GraphConfig,
    GroupCommitConfig,
    LimitsConfig,
    MemoryConfig,
    RankingConfig,
    RetentionConfig,
    SharedConfig,
    WorkingMemoryConfig,
)
from ucma_core.consolidation import ConsolidationReport
from ucma_core.dynamics.forgetting import ForgettingReport
from ucma_core.errors import UCMAError
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
    RouteDecision,
    Source,
    Tier,
)
from ucma_core.scope import ANY, Scope
from ucma_core.scoped import ScopedMemory
from ucma_core.shared import shared_memory
from ucma_core.storage.graph import EdgeType
from ucma_core.storage.verify import RepairReport, VerifyReport
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
    "GroupCommitConfig",
    "Intention",
    "IntentionStatus",
    "Learning",
    "LearningType",
    "LimitsConfig",
    "Memory",
    "MemoryConfig",
    "MemoryRecord",
    "MemoryType",
    "Procedure",
    "ProcedureStatus",
    "RankingConfig",
    "RepairReport",
    "RetentionConfig",
    "RetrievalResult",
    "RouteDecision",
    "Scope",
    "ScopedMemory",
    "SharedConfig",
    "Source",
    "Tier",
    "UCMAError",
    "VerifyReport",
    "WorkingItem",
    "WorkingMemory",
    "WorkingMemoryConfig",
    "shared_memory",
]

__version__ = "0.1.0"
