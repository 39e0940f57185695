"""UCMA as the ``memory=`` of classic LangChain chains (``langchain_classic``)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage, get_buffer_string
from pydantic import ConfigDict, Field, PrivateAttr

from ucma_langchain._deps import missing

try:
    from langchain_classic.base_memory import BaseMemory
    from langchain_classic.memory.utils import get_prompt_input_key
except ImportError as e:
    raise missing(e, extra="langchain", feature="ucma_langchain.UCMAMemory") from e

from ucma_core import Memory, ScopedMemory
from ucma_core.conversation import (
    DEFAULT_HEADER,
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    UNSET,
    ChatTurn,
    Conversation,
    RecallOptions,
    Unset,
    stated_view,
)
from ucma_core.errors import InvalidInputError
from ucma_core.records import Episode
from ucma_langchain._scope import MemoryLike
from ucma_langchain.messages import from_episodes

__all__ = ["UCMAMemory"]


class UCMAMemory(BaseMemory):
    """Long-term memory for a classic chain: recalled memories plus the recent turns.

    ``load_memory_variables`` gives two variables: ``memory_key`` (default
    ``"history"``), the last ``recent_turns`` messages of the session, as text
    (``Human: …`` / ``AI: …``) or, with ``return_messages=True``, as messages; and
    ``recall_key`` (default ``"memories"``), the memories recalled for the new input
    from every session of the user, rendered as one dated block within
    ``max_tokens`` by :class:`ucma_core.conversation.Conversation` (memories already
    among the recent turns, duplicates and content-free turns are left out). With
    ``recall_key=None`` the block goes at the start of the history variable instead
    (as a ``SystemMessage`` with ``return_messages=True``), so prompts that only have
    ``{history}``, like ``ConversationChain``'s default, get it too.

    ``save_context`` stores the input as a user turn and the output as an assistant
    turn; ``clear`` forgets the session.

    Args:
        memory: a :class:`~ucma_core.Memory`, or a view bound with ``Memory.scope(...)``.
        user_id: whose memories; required with a :class:`~ucma_core.Memory`
            (:class:`~ucma_core.errors.UserNotStatedError` without one), ``None`` for an
            app without users.
        agent_id: the agent (``None``: any agent).
        session_id: the conversation; give one to continue it after a restart
            (default: the memory's current session).
        k: how many memories to recall.
        recent_turns: how many of the session's last messages ``memory_key`` holds.
        max_tokens: token budget of the recalled block.
        input_key / output_key: the chain's input and output keys (found
            automatically when there is only one).

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> memory = UCMAMemory(memory=mem, user_id="ana", session_id="s1")
        >>> memory.save_context({"input": "My cat is called Miso."}, {"output": "Lovely name!"})
        >>> print(memory.load_memory_variables({"input": "What is my cat called?"})["history"])
        Human: My cat is called Miso.
        AI: Lovely name!
        >>> mem.close()
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: MemoryLike
    user_id: str | Unset | None = UNSET
    agent_id: str | None = None
    session_id: str | None = None
    k: int = Field(default=DEFAULT_K, ge=1, le=1000)
    recent_turns: int = Field(default=10, ge=0)
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    header: str = DEFAULT_HEADER
    memory_key: str = "history"
    recall_key: str | None = "memories"
    input_key: str | None = None
    output_key: str | None = None
    return_messages: bool = False
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    _view: ScopedMemory = PrivateAttr()
    _talk: Conversation = PrivateAttr()

    def __init__(self, **data: Any) -> None:
        # checked before pydantic runs, so the error reaches the caller as it is
        memory, user_id = data.get("memory"), data.get("user_id", UNSET)
        if isinstance(memory, (Memory, ScopedMemory)) and (
            user_id is None or isinstance(user_id, (str, Unset))
        ):
            stated_view(memory, user_id, adapter="UCMAMemory")
        super().__init__(**data)

    def model_post_init(self, context: Any, /) -> None:
        self._view = stated_view(
            self.memory,
            self.user_id,
            adapter="UCMAMemory",
            agent_id=self.agent_id,
            session_id=self.session_id,
        )
        options = RecallOptions(k=self.k, max_tokens=self.max_tokens, header=self.header)
        self._talk = Conversation(self._view, options)

    @property
    def memory_variables(self) -> list[str]:
        return [self.memory_key] if self.recall_key is None else [self.memory_key, self.recall_key]

    # ------------------------------------------------------------------ conversion
    def _query(self, inputs: dict[str, Any]) -> str:
        key = self.input_key or get_prompt_input_key(inputs, self.memory_variables)
        value = inputs.get(key)
        if not isinstance(value, str):
            raise InvalidInputError(f"the chain input {key!r} must be a str, not {type(value).__name__}")
        return value

    def _load_query(self, inputs: dict[str, Any]) -> str | None:
        """The query of a load, or ``None`` for inputs without a prompt input (an inspection
        such as ``load_memory_variables({})``, ``CombinedMemory``): then nothing is recalled."""
        if self.input_key is None and not [
            k for k in inputs if k not in self.memory_variables and k != "stop"
        ]:
            return None
        return self._query(inputs)

    def _turns(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> list[ChatTurn]:
        if self.output_key is not None:
            output_key = self.output_key
        elif len(outputs) == 1:
            output_key = next(iter(outputs))
        elif "output" in outputs:
            output_key = "output"
        elif not outputs:
            raise InvalidInputError("the chain gave no output to save; save_context needs the chain's answer")
        else:
            raise InvalidInputError(
                f"several chain outputs {sorted(outputs)}; set output_key to the one to save"
            )
        answer = outputs[output_key]
        if not isinstance(answer, str):
            raise InvalidInputError(
                f"the chain output {output_key!r} must be a str, not {type(answer).__name__}"
            )
        return [ChatTurn("user", self._query(inputs)), ChatTurn("assistant", answer)]

    def _variables(self, recent: list[Episode], block: str) -> dict[str, Any]:
        messages = from_episodes(recent)
        history: str | list[BaseMessage]
        if self.return_messages:
            history = [SystemMessage(block), *messages] if block and self.recall_key is None else messages
        else:
            history = get_buffer_string(messages, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)
            if block and self.recall_key is None:
                history = f"{block}\n\n{history}" if history else block
        if self.recall_key is None:
            return {self.memory_key: history}
        return {self.memory_key: history, self.recall_key: block}

    # ------------------------------------------------------------------ BaseMemory
    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The recent turns and the memories recalled for ``inputs``' user message."""
        query = self._load_query(inputs)
        recent = self._view.history(limit=self.recent_turns)
        if query is None:
            return self._variables(recent, "")
        recalled = self._talk.recall(_window(recent), query=query, shown=[e.id for e in recent])
        return self._variables(recent, recalled.block)

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        query = self._load_query(inputs)
        recent = await self._view.ahistory(limit=self.recent_turns)
        if query is None:
            return self._variables(recent, "")
        recalled = await self._talk.arecall(_window(recent), query=query, shown=[e.id for e in recent])
        return self._variables(recent, recalled.block)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Store the user's input and the chain's answer as two turns of the session."""
        self._talk.observe(self._turns(inputs, outputs))

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        await self._talk.aobserve(self._turns(inputs, outputs))

    def clear(self) -> None:
        """Forget every memory of the session."""
        self._view.forget_session()

    async def aclear(self) -> None:
        await self._view.aforget_session()


def _window(recent: list[Episode]) -> list[ChatTurn]:
    return [ChatTurn.from_record(e) for e in recent]
