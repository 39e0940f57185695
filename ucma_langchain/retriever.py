"""UCMA as a LangChain retriever: ``Memory.remember`` behind ``BaseRetriever``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from ucma_core import Memory, ScopedMemory
from ucma_core.conversation import bind
from ucma_core.records import RetrievalResult
from ucma_core.scope import AnyScope

__all__ = ["UCMARetriever", "to_document"]


def to_document(result: RetrievalResult) -> Document:
    """A LangChain ``Document`` for one recalled memory.

    ``page_content`` is the memory's text and ``id`` its memory id; ``metadata`` is
    :meth:`~ucma_core.RetrievalResult.to_dict` without the text: ``id``,
    ``memory_type``, ``score``, ``timestamp`` / ``timestamp_iso``, ``route``
    (``{"kind", "reason"}``), ``source``, ``user_id`` / ``agent_id`` / ``session_id``,
    ``tags``, ``source_ids`` (the episodes it was derived from), the ranking factors
    and ``metadata`` (the caller's own metadata, unchanged).
    """
    data = result.to_dict()
    data.pop("content", None)
    return Document(page_content=result.content, id=result.id, metadata=data)


class UCMARetriever(BaseRetriever):
    """Recall memories for a query, as LangChain ``Document`` objects, best first.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``
            (then a ``user_id`` / ``agent_id`` given must be the view's, and a
            ``session_id`` narrows the read to that session).
        user_id: whose memories to read: a str is that user only, ``None`` the memories
            stored without a user, :data:`~ucma_core.ANY` every user.
        agent_id / session_id: narrow the read to one agent / session (``None``: any).
        k: how many documents to return (``invoke(query, k=n)`` overrides it per call).
        memory_types: only these kinds (``"episodic"``, ``"semantic"``…); ``None``: all.
        route: force the query route (``"temporal"``, ``"procedural"``, ``"entity"``,
            ``"hybrid"``) instead of the router's choice.
        include_generated: ``False`` leaves out assistant / system text and
            consolidation output.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> _ = mem.observe("Ana loves the trams of Lisbon.", user_id="ana", importance=0.9)
        >>> docs = UCMARetriever(memory=mem, user_id="ana", k=3).invoke("what does Ana love?")
        >>> docs[0].page_content, docs[0].metadata["memory_type"]
        ('Ana loves the trams of Lisbon.', 'episodic')
        >>> mem.close()
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory | ScopedMemory
    user_id: str | AnyScope | None = None
    agent_id: str | AnyScope | None = None
    session_id: str | AnyScope | None = None
    k: int = Field(default=4, ge=1, le=1000)
    memory_types: Sequence[str] | None = None
    route: str | None = None
    include_generated: bool = True

    def _search_args(self, k: int | None) -> dict[str, Any]:
        args: dict[str, Any] = {
            "k": self.k if k is None else k,
            "memory_types": self.memory_types,
            "route": self.route,
            "include_generated": self.include_generated,
        }
        scope = {"user_id": self.user_id, "agent_id": self.agent_id, "session_id": self.session_id}
        if isinstance(self.memory, Memory):
            args.update(scope)
        else:  # a bound view: a user or agent given must be the view's; a session narrows the read
            bind(self.memory, user_id=self.user_id, agent_id=self.agent_id)
            if self.session_id is not None:
                args["session_id"] = self.session_id
        return args

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return [to_document(r) for r in self.memory.remember(query, **self._search_args(k))]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        results = await self.memory.aremember(query, **self._search_args(k))
        return [to_document(r) for r in results]
