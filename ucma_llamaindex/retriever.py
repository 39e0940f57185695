"""``UCMARetriever``: UCMA's ``remember`` as a LlamaIndex retriever."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ucma_core.conversation import bind, recall_query
from ucma_core.errors import InvalidInputError
from ucma_core.memory import Memory
from ucma_core.records import MemoryType, RetrievalResult
from ucma_core.scoped import ScopedMemory

__all__ = ["UCMARetriever", "to_node"]

#: Node metadata keys an LLM sees with the memory's text (the rest is for code).
LLM_METADATA_KEYS = ("memory_type", "timestamp_iso", "source")


def to_node(
    result: RetrievalResult, *, llm_metadata_keys: Sequence[str] = LLM_METADATA_KEYS
) -> NodeWithScore:
    """A ``NodeWithScore`` for one recalled memory, scored with its rank score.

    The ``TextNode``'s ``id_`` is the memory id and its text the memory's content; its
    ``metadata`` is :meth:`~ucma_core.RetrievalResult.to_dict` without the text (the
    same keys every UCMA adapter gives): ``id``, ``memory_type``, ``score``,
    ``timestamp`` / ``timestamp_iso``, ``route`` (``{"kind", "reason"}``), ``source``,
    ``user_id`` / ``agent_id`` / ``session_id``, ``tags``, ``source_ids``, the ranking
    factors, ``signals`` and ``metadata`` (the caller's own metadata, unchanged). Only
    ``llm_metadata_keys`` are shown to an LLM with the text; none are embedded.
    """
    data = result.to_dict()
    text = data.pop("content")
    shown = set(llm_metadata_keys)
    node = TextNode(
        id_=result.id,
        text=text,
        metadata=data,
        excluded_llm_metadata_keys=[key for key in data if key not in shown],
        excluded_embed_metadata_keys=list(data),
    )
    return NodeWithScore(node=node, score=result.score)


class UCMARetriever(BaseRetriever):
    """Retrieve UCMA memories as LlamaIndex nodes (``remember`` underneath).

    Works wherever LlamaIndex takes a retriever: ``RetrieverQueryEngine``,
    ``ContextChatEngine``, ``CondensePlusContextChatEngine``, a ``RetrieverTool``.
    Each hit is a ``NodeWithScore`` whose ``TextNode`` has the memory id as its id and
    the metadata described in :func:`to_node`. The query router reads time phrases
    ("last week"), "how do I …" and "who is …" as ``remember`` does.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view from ``Memory.scope(...)``.
        user_id / agent_id / session_id: the scope (a view's own scope when omitted);
            the retriever never reads another user's memories.
        k: how many memories to return.
        memory_types: only these memory types (default: all).
        tags: only memories carrying any of these tags.
        metadata_filter: only memories whose metadata matches (see ``Memory.remember``).
        route: force the router's kind (``"hybrid"``, ``"temporal"``…).
        include_generated: include assistant text and consolidation output.
        llm_metadata_keys: the node metadata an LLM sees with each memory.
        callback_manager: LlamaIndex callbacks.
    """

    def __init__(
        self,
        memory: Memory | ScopedMemory,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        k: int = 5,
        memory_types: Sequence[MemoryType | str] | None = None,
        tags: Sequence[str] | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        route: str | None = None,
        include_generated: bool = True,
        llm_metadata_keys: Sequence[str] = LLM_METADATA_KEYS,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInputError(f"k must be an int in 1..1000, got {k!r}")
        self._view = bind(memory, user_id=user_id, agent_id=agent_id, session_id=session_id)
        self.k = k
        self._options: dict[str, Any] = {
            "memory_types": list(memory_types) if memory_types else None,
            "tags": list(tags) if tags else None,
            "metadata_filter": dict(metadata_filter) if metadata_filter else None,
            "route": route,
            "include_generated": include_generated,
        }
        self._options = {key: value for key, value in self._options.items() if value is not None}
        self.llm_metadata_keys = tuple(llm_metadata_keys)
        super().__init__(callback_manager=callback_manager)

    @property
    def memory(self) -> ScopedMemory:
        """The UCMA view this retriever reads."""
        return self._view

    def _nodes(self, results: list[RetrievalResult]) -> list[NodeWithScore]:
        return [to_node(r, llm_metadata_keys=self.llm_metadata_keys) for r in results]

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = recall_query(query_bundle.query_str) or query_bundle.query_str  # a pasted log is clipped
        return self._nodes(self._view.remember(query, k=self.k, **self._options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = recall_query(query_bundle.query_str) or query_bundle.query_str
        return self._nodes(await self._view.aremember(query, k=self.k, **self._options))
