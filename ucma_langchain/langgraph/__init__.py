"""UCMA for LangGraph: a checkpointer whose threads survive restarts and feed the memory,
a ``BaseStore`` on UCMA, and recall / consolidation nodes.

Install with ``pip install 'ucma[langgraph]'``.
"""

from ucma_langchain._deps import missing

try:
    import langgraph.checkpoint.sqlite
    import langgraph.graph  # noqa: F401
except ImportError as e:
    raise missing(e, extra="langgraph", feature="ucma_langchain.langgraph") from e

from ucma_langchain.langgraph.checkpointer import UCMACheckpointer
from ucma_langchain.langgraph.namespaces import InvalidNamespaceError, NamespaceRule, NamespaceScope
from ucma_langchain.langgraph.nodes import (
    ConsolidationNode,
    RecallNode,
    consolidation_node,
    find_memory,
    recall_node,
)
from ucma_langchain.langgraph.prebuilt import create_memory_agent
from ucma_langchain.langgraph.scope import RunScope, ScopeKeys
from ucma_langchain.langgraph.store import UCMAStore

__all__ = [
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
