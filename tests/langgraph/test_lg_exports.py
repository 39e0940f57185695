"""Freeze the public names of ucma_langchain.langgraph."""

from __future__ import annotations

import ucma_langchain.langgraph


def test_langgraph_public_names() -> None:
    assert ucma_langchain.langgraph.__all__ == [
        "ConsolidationNode",
        "InvalidNamespaceError",
        "NamespaceRule",
        "NamespaceScope",
        "RecallNode",
        "RunScope",
        "ScopeKeys",
        "UCMACheckpointer",
        "UCMAStore",
        "consolidation_node",
        "create_memory_agent",
        "find_memory",
        "recall_node",
    ]
    assert sorted(ucma_langchain.langgraph.__all__) == ucma_langchain.langgraph.__all__
    for name in ucma_langchain.langgraph.__all__:
        assert getattr(ucma_langchain.langgraph, name) is not None


def test_the_test_model_lives_in_the_testing_module() -> None:
    import ucma_langchain.testing

    assert ucma_langchain.testing.__all__ == ["ScriptedChatModel"]
    assert not hasattr(ucma_langchain.langgraph, "ScriptedChatModel")
