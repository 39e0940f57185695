"""UCMA for LangChain: retriever, memory tools, agent middleware, chat memory and model bridges.

Needs ``pip install 'ucma[langchain]'`` (langchain-core, langchain-classic);
:class:`UCMAMiddleware` also needs ``'ucma[agents]'`` (langchain). Each is
imported when first used, so a missing extra gives one clear
:class:`~ucma_core.errors.DependencyMissingError` naming what to install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ucma_langchain._deps import missing

try:
    import langchain_core  # noqa: F401
except ImportError as e:
    raise missing(e, extra="langchain", feature="ucma_langchain") from e

from ucma_langchain.chat_history import UCMAChatMessageHistory
from ucma_langchain.messages import from_episode, from_episodes, to_turn, to_turns
from ucma_langchain.models import LangChainChatTransport, LangChainEmbedder, langchain_provider
from ucma_langchain.retriever import UCMARetriever, to_document
from ucma_langchain.tools import MEMORY_TOOL_NAMES, create_memory_tools, to_langchain_tool

if TYPE_CHECKING:
    from ucma_langchain.memory import UCMAMemory
    from ucma_langchain.middleware import UCMAMiddleware

__all__ = [
    "MEMORY_TOOL_NAMES",
    "LangChainChatTransport",
    "LangChainEmbedder",
    "UCMAChatMessageHistory",
    "UCMAMemory",
    "UCMAMiddleware",
    "UCMARetriever",
    "create_memory_tools",
    "from_episode",
    "from_episodes",
    "langchain_provider",
    "to_document",
    "to_langchain_tool",
    "to_turn",
    "to_turns",
]

#: Names imported on first use (their modules check their own extras).
_LAZY = {"UCMAMemory": "ucma_langchain.memory", "UCMAMiddleware": "ucma_langchain.middleware"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'ucma_langchain' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
