"""Freeze the public names, and keep the core free of frameworks."""

from __future__ import annotations

import subprocess
import sys

import ucma_core
import ucma_core.embedders
import ucma_core.errors


def test_core_public_names() -> None:
    assert ucma_core.__all__ == [
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
    assert sorted(ucma_core.__all__) == ucma_core.__all__


def test_providers_public_names() -> None:
    import ucma_core.providers

    assert sorted(ucma_core.providers.__all__) == ucma_core.providers.__all__
    assert {
        "AsyncChatTransport",
        "ChatTransport",
        "LLMProvider",
        "OfflineProvider",
        "OpenAIProvider",
        "Provider",
    } <= set(ucma_core.providers.__all__)


def test_conversation_public_names() -> None:
    import ucma_core.conversation

    assert ucma_core.conversation.__all__ == [
        "DEFAULT_HEADER",
        "DEFAULT_K",
        "DEFAULT_MAX_TOKENS",
        "DEFAULT_ROLES",
        "MEMORY_TOOL_NAMES",
        "RECALL_NAME",
        "UNSET",
        "Cadence",
        "ChatTurn",
        "Conversation",
        "RecallOptions",
        "Recalled",
        "Target",
        "ToolSpec",
        "Unset",
        "WriteBehind",
        "WriteFailure",
        "aobserve_turns",
        "bind",
        "clean_text",
        "memory_tools",
        "observe_turns",
        "recall_query",
        "render_memories",
        "stated_user",
        "stated_view",
        "turn_items",
    ]


def test_embedders_and_errors_public_names() -> None:
    assert ucma_core.embedders.__all__ == [
        "CachedEmbedder",
        "HashingEmbedder",
        "LocalMiniLMEmbedder",
        "OpenAIEmbedder",
        "as_embedder",
    ]
    assert sorted(ucma_core.errors.__all__) == ucma_core.errors.__all__
    for name in ucma_core.errors.__all__:
        assert issubclass(getattr(ucma_core.errors, name), ucma_core.errors.UCMAError)


def test_core_imports_no_framework_or_optional_dependency() -> None:
    code = (
        "import sys, ucma_core, ucma_core.embedders;"
        "bad = [m for m in ('langchain', 'langchain_core', 'langgraph', 'llama_index', 'openai',"
        " 'onnxruntime', 'tokenizers', 'tiktoken', 'torch') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
