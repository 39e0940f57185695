"""UCMA for LlamaIndex: chat memory, memory block, retriever, tools and model bridges.

Install with ``pip install 'ucma[llamaindex]'``; importing this package without
llama-index-core raises :class:`~ucma_core.errors.DependencyMissingError`.

* :class:`UCMAChatMemory`: ``memory=`` of chat engines and workflow agents.
* :class:`UCMAMemoryBlock`: a long-term block of ``llama_index.core.memory.Memory``.
* :class:`UCMARetriever`: memories as ``NodeWithScore`` for query and chat engines.
* :class:`UCMAToolSpec`: recall / save / forget / facts tools for agents.
* :class:`LlamaIndexEmbedder`, :class:`LlamaIndexChatTransport` and
  :func:`llamaindex_provider`: a LlamaIndex embedding model as UCMA's embedder, a
  LlamaIndex LLM as UCMA's model provider.
"""

from ucma_llamaindex._dependency import require_llama_index

require_llama_index()

from ucma_llamaindex.chat_memory import UCMAChatMemory  # noqa: E402
from ucma_llamaindex.memory_block import UCMAMemoryBlock  # noqa: E402
from ucma_llamaindex.models import LlamaIndexChatTransport, LlamaIndexEmbedder, llamaindex_provider  # noqa: E402
from ucma_llamaindex.retriever import UCMARetriever  # noqa: E402
from ucma_llamaindex.tool_spec import UCMAToolSpec  # noqa: E402

__all__ = [
    "LlamaIndexChatTransport",
    "LlamaIndexEmbedder",
    "UCMAChatMemory",
    "UCMAMemoryBlock",
    "UCMARetriever",
    "UCMAToolSpec",
    "llamaindex_provider",
]
