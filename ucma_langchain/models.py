"""Bring the models already configured in LangChain to UCMA.

* :class:`LangChainEmbedder`: any LangChain ``Embeddings`` as UCMA's embedder.
* :class:`LangChainChatTransport`: any LangChain chat model as the transport of
  :class:`ucma_core.providers.LLMProvider`, which writes the prompts, asks for JSON,
  validates the answers, re-asks and backs off (the same logic as the OpenAI
  provider); :func:`langchain_provider` builds that provider in one call.

Examples:
    >>> import tempfile
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from ucma_core import Memory
    >>> embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=64))
    >>> (embedder.name, embedder.dimension)
    ('langchain:DeterministicFakeEmbedding', 64)
    >>> with Memory(tempfile.mkdtemp(), embedder=embedder) as mem:
    ...     mem.observe("Ana lives in Lisbon.", importance=0.9) is not None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from ucma_core.embedders.bridge import BridgedEmbedder
from ucma_core.errors import InvalidInputError, ProviderError
from ucma_core.providers import LLMProvider

__all__ = ["LangChainChatTransport", "LangChainEmbedder", "langchain_provider"]


def _model_label(model: object) -> str:
    for attribute in ("model", "model_name", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return f"{type(model).__name__}:{value}"
    return type(model).__name__


class LangChainEmbedder(BridgedEmbedder):
    """A LangChain ``Embeddings`` object used as UCMA's embedder.

    Args:
        embeddings: the LangChain embeddings (``OpenAIEmbeddings``,
            ``HuggingFaceEmbeddings``, ``OllamaEmbeddings``…).
        name: the name recorded in the memory folder, so the folder is never searched
            with another model's vectors; default ``"langchain:<class>[:<model>]"``.
            Give a stable name if you change the class but keep the model.
        dimension: the vector length; when omitted it is measured once, on first use,
            by embedding one short text.

    Raises:
        InvalidInputError: ``embeddings`` is not a LangChain ``Embeddings``, or a bad
            ``name`` / ``dimension``.
    """

    library = "LangChain embeddings"

    def __init__(
        self, embeddings: Embeddings, *, name: str | None = None, dimension: int | None = None
    ) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInputError(
                f"embeddings must be a LangChain Embeddings object, not {type(embeddings).__name__}"
            )
        super().__init__(
            name=f"langchain:{_model_label(embeddings)}" if name is None else name, dimension=dimension
        )
        self.embeddings = embeddings

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        return self.embeddings.embed_documents(texts)


class LangChainChatTransport:
    """A LangChain chat model as a :class:`~ucma_core.providers.ChatTransport`.

    Each request is one system and one user message; the answer is the model's text.
    The prompts ask for JSON; to make a model *enforce* JSON, pass the arguments its
    integration uses as ``bind`` (e.g. ``{"response_format": {"type": "json_object"}}``
    for ``ChatOpenAI``, ``{"format": "json"}`` for ``ChatOllama``). Errors the model
    raises reach :class:`~ucma_core.providers.LLMProvider`, which retries them and
    reports a :class:`~ucma_core.errors.ProviderError`.

    Args:
        model: any LangChain chat model (or a runnable that takes messages and returns
            an ``AIMessage``).
        bind: keyword arguments bound to the model for every call.
    """

    def __init__(
        self, model: BaseChatModel | Runnable[Any, Any], *, bind: Mapping[str, Any] | None = None
    ) -> None:
        if not isinstance(model, Runnable):
            raise InvalidInputError(f"model must be a LangChain chat model, not {type(model).__name__}")
        self.model = model
        self.name = _model_label(model)
        self._runnable: Runnable[Any, Any] = model.bind(**bind) if bind else model

    @staticmethod
    def _messages(system: str, user: str) -> list[BaseMessage]:
        return [SystemMessage(content=system), HumanMessage(content=user)]

    def _text(self, answer: object) -> str:
        if isinstance(answer, BaseMessage):
            return answer.text
        if isinstance(answer, str):
            return answer
        raise ProviderError(f"chat model {self.name!r} answered a {type(answer).__name__}, not a message")

    def complete(self, system: str, user: str) -> str:
        """Send one system and one user message; return the model's text."""
        return self._text(self._runnable.invoke(self._messages(system, user)))

    async def acomplete(self, system: str, user: str) -> str:
        """Async :meth:`complete` (the model's own async path)."""
        return self._text(await self._runnable.ainvoke(self._messages(system, user)))

    def __repr__(self) -> str:
        return f"LangChainChatTransport({self.name!r})"


def langchain_provider(
    model: BaseChatModel | Runnable[Any, Any], *, bind: Mapping[str, Any] | None = None, **options: Any
) -> LLMProvider:
    """UCMA's model provider (importance, summaries, facts, procedures, lessons) on a LangChain chat model.

    ``options`` go to :class:`~ucma_core.providers.LLMProvider` (``max_attempts``…);
    ``bind`` to :class:`LangChainChatTransport`. Pass the result as
    ``Memory(path, provider=...)``.
    """
    return LLMProvider(LangChainChatTransport(model, bind=bind), **options)
