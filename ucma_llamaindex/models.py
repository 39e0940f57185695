"""Bring the models already configured in LlamaIndex to UCMA.

* :class:`LlamaIndexEmbedder`: any LlamaIndex ``BaseEmbedding`` as UCMA's embedder.
* :class:`LlamaIndexChatTransport`: any LlamaIndex ``LLM`` as the transport of
  :class:`ucma_core.providers.LLMProvider`, which writes the prompts, asks for JSON,
  validates the answers, re-asks and backs off (the same logic as the OpenAI
  provider); :func:`llamaindex_provider` builds that provider in one call.

Examples:
    >>> import tempfile
    >>> from llama_index.core.embeddings import MockEmbedding
    >>> from ucma_core import Memory
    >>> embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=8))
    >>> (embedder.name, embedder.dimension)
    ('llamaindex:MockEmbedding', 8)
    >>> with Memory(tempfile.mkdtemp(), embedder=embedder) as mem:
    ...     mem.observe("Ana lives in Lisbon.", importance=0.9) is not None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms.llm import LLM

from ucma_core.embedders.bridge import BridgedEmbedder
from ucma_core.errors import InvalidInputError
from ucma_core.providers import LLMProvider, UnusableAnswerError

__all__ = ["LlamaIndexChatTransport", "LlamaIndexEmbedder", "llamaindex_provider"]


def _label(class_name: str, model_name: object) -> str:
    """``<class>:<model>``, or ``<class>`` when the model is unnamed (LlamaIndex says "unknown")."""
    named = isinstance(model_name, str) and model_name and model_name != "unknown"
    return f"{class_name}:{model_name}" if named else class_name


class LlamaIndexEmbedder(BridgedEmbedder):
    """A LlamaIndex embedding model (``OpenAIEmbedding``, ``HuggingFaceEmbedding``,
    ``OllamaEmbedding``…) used as UCMA's embedder.

    UCMA embeds memories and queries with the same model, through
    ``get_text_embedding_batch``.

    Args:
        embed_model: the LlamaIndex ``BaseEmbedding``.
        name: the name recorded in the memory folder, so the folder is never searched
            with another model's vectors; default ``"llamaindex:<class>[:<model_name>]"``.
            Give a stable name if you change the class but keep the model.
        dimension: the vector length; when omitted it is measured once, on first use,
            by embedding one short text.

    Raises:
        InvalidInputError: ``embed_model`` is not a ``BaseEmbedding``, or a bad ``name``
            or ``dimension``.
    """

    library = "LlamaIndex embedding model"

    def __init__(
        self, embed_model: BaseEmbedding, *, name: str | None = None, dimension: int | None = None
    ) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise InvalidInputError(
                f"embed_model must be a LlamaIndex BaseEmbedding, not {type(embed_model).__name__}"
            )
        label = f"llamaindex:{_label(type(embed_model).__name__, embed_model.model_name)}"
        super().__init__(name=label if name is None else name, dimension=dimension)
        self.embed_model = embed_model

    def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        return self.embed_model.get_text_embedding_batch(texts)


class LlamaIndexChatTransport:
    """A LlamaIndex LLM (``OpenAI``, ``Anthropic``, ``Ollama``…) as a
    :class:`~ucma_core.providers.ChatTransport`.

    Each request is one system and one user message (``llm.chat`` / ``llm.achat``);
    the answer is the reply's text. The prompts ask for JSON; to make a model
    *enforce* it, pass the keyword arguments its integration takes per call as
    ``chat_kwargs`` (e.g. ``{"response_format": {"type": "json_object"}}`` for
    ``OpenAI``). Errors the model raises reach
    :class:`~ucma_core.providers.LLMProvider`, which reports a
    :class:`~ucma_core.errors.ProviderError` chained to them; an empty reply is
    an unusable answer, asked again.

    Args:
        llm: any LlamaIndex ``LLM`` (chat or completion model).
        chat_kwargs: keyword arguments passed to every ``chat`` / ``achat`` call.
    """

    def __init__(self, llm: LLM, *, chat_kwargs: Mapping[str, Any] | None = None) -> None:
        if not isinstance(llm, LLM):
            raise InvalidInputError(f"llm must be a LlamaIndex LLM, not {type(llm).__name__}")
        self.llm = llm
        self.name = _label(type(llm).__name__, llm.metadata.model_name)
        self._kwargs = dict(chat_kwargs or {})

    @staticmethod
    def _messages(system: str, user: str) -> list[ChatMessage]:
        return [
            ChatMessage(role=MessageRole.SYSTEM, content=system),
            ChatMessage(role=MessageRole.USER, content=user),
        ]

    def _text(self, response: ChatResponse) -> str:
        text = response.message.content
        if not text or not text.strip():
            raise UnusableAnswerError(f"LLM {self.name!r} returned no text")
        return text

    def complete(self, system: str, user: str) -> str:
        """Send one system and one user message; return the model's text."""
        return self._text(self.llm.chat(self._messages(system, user), **self._kwargs))

    async def acomplete(self, system: str, user: str) -> str:
        """Async :meth:`complete` (the model's own async path, ``llm.achat``)."""
        return self._text(await self.llm.achat(self._messages(system, user), **self._kwargs))

    def __repr__(self) -> str:
        return f"LlamaIndexChatTransport({self.name!r})"


def llamaindex_provider(
    llm: LLM, *, chat_kwargs: Mapping[str, Any] | None = None, **options: Any
) -> LLMProvider:
    """UCMA's model provider (importance, summaries, facts, procedures, lessons) on a LlamaIndex LLM.

    ``options`` go to :class:`~ucma_core.providers.LLMProvider` (``max_attempts``,
    ``batch_size``, ``llm_importance``…; errors name the model unless ``name=`` is
    given); ``chat_kwargs`` to :class:`LlamaIndexChatTransport`. Pass the result as
    ``Memory(path, provider=...)``.

    Examples:
        >>> import json
        >>> from llama_index.core.llms import CustomLLM, CompletionResponse, LLMMetadata
        >>> answer = json.dumps({"items": [{"index": 0, "summary": "Ana moved."}]})
        >>> class Canned(CustomLLM):  # stands in for OpenAI(model=...)
        ...     @property
        ...     def metadata(self) -> LLMMetadata:
        ...         return LLMMetadata(model_name="canned")
        ...     def complete(self, prompt, formatted=False, **kwargs):
        ...         return CompletionResponse(text=answer)
        ...     def stream_complete(self, prompt, formatted=False, **kwargs):
        ...         raise NotImplementedError
        >>> provider = llamaindex_provider(Canned())
        >>> provider.summarize([["Ana moved to Lisbon in May."]])
        ['Ana moved.']
    """
    transport = LlamaIndexChatTransport(llm, chat_kwargs=chat_kwargs)
    options.setdefault("name", f"LlamaIndex {transport.name}")
    return LLMProvider(transport, **options)
