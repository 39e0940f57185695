"""The conversation loop every adapter wraps: recall → render before the model, observe after.

A framework adapter converts its messages to :class:`~ucma_core.conversation.ChatTurn`
and hands them to a :class:`Conversation`; it never decides what to recall, what was
already shown, how the block looks, what is stored or when to consolidate:

* **Recall** (:meth:`Conversation.recall`): the query is the latest user turn (one that
  has text of its own, not a placeholder for an image), clipped by
  :func:`~ucma_core.conversation.recall_query`, so a pasted log never fails; the memories
  are those of the bound user from every session, ``RecallOptions.k`` at most, less what
  :func:`~ucma_core.conversation.shown.fresh` leaves out (messages already in the window,
  duplicates, content-free turns, copies of recall output).
* **Render**: one header (:data:`DEFAULT_HEADER`) and one budget (:data:`DEFAULT_MAX_TOKENS`)
  for every adapter, counted with the memory's own ``token_counter``.
* **Observe** (:meth:`Conversation.observe`): the turns whose role is in ``roles``
  (default :data:`DEFAULT_ROLES`: what the user and the assistant said). Tool results are
  not stored unless ``"tool"`` is in ``roles`` (then an assistant turn that only calls
  tools is kept too, so calls and results stay paired); the calls and results of UCMA's
  own memory tools and recall messages never are: they are copies of memories.
* **Cadence** (:class:`~ucma_core.conversation.cadence.Cadence`): a consolidation cycle
  every ``consolidate_every`` turns, reported by :meth:`Conversation.after_turn`.

Turn metadata the loop reads (adapters set it when converting): ``"placeholder": True``
for a turn whose text only stands for something else (tool calls, an image), ``"tool_calls"``
(a list of ``{"name": ..., "id": ...}``) for an assistant turn that calls tools, and
``"tool_call_id"`` for a tool result.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ucma_core.consolidation import ConsolidationReport
from ucma_core.conversation.binding import Target, bind
from ucma_core.conversation.cadence import Cadence
from ucma_core.conversation.render import render_memories
from ucma_core.conversation.seam import recall_query
from ucma_core.conversation.shown import fresh
from ucma_core.conversation.tools import MEMORY_TOOL_NAMES
from ucma_core.conversation.turns import ROLES, ChatTurn, aobserve_turns, observe_turns
from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryType, RetrievalResult
from ucma_core.scope import ScopeId
from ucma_core.scoped import ScopedMemory
from ucma_core.tokens import TokenCounter

__all__ = [
    "DEFAULT_HEADER",
    "DEFAULT_K",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_ROLES",
    "RECALL_NAME",
    "Conversation",
    "RecallOptions",
    "Recalled",
    "check_roles",
    "kept_turns",
    "latest_user_text",
]

#: How many memories a recall block holds at most, in every adapter.
DEFAULT_K: Final = 5
#: Token budget of a recall block, header included, in every adapter.
DEFAULT_MAX_TOKENS: Final = 800
#: The first line of every recall block.
DEFAULT_HEADER: Final = "Relevant memories:"
#: The roles whose turns are stored by default: what the user and the assistant said.
DEFAULT_ROLES: Final = ("user", "assistant")
#: The name an adapter gives a message that carries a recall block (never stored).
RECALL_NAME: Final = "ucma_recall"


@dataclass(frozen=True)
class RecallOptions:
    """What a recall block holds: the same defaults in every adapter.

    Args:
        k: memories in the block at most (1..1000).
        max_tokens: token budget of the block, header included.
        header: the block's first line (``""`` for none).
        memory_types: recall only these kinds (``None``: all).
        include_generated: ``False`` leaves out what the assistant said.

    Raises:
        InvalidInputError: a value out of range or of the wrong type.
    """

    k: int = DEFAULT_K
    max_tokens: int = DEFAULT_MAX_TOKENS
    header: str = DEFAULT_HEADER
    memory_types: tuple[MemoryType | str, ...] | None = None
    include_generated: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= 1000:
            raise InvalidInputError(f"k must be an int in 1..1000, got {self.k!r}")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be a positive int, got {self.max_tokens!r}")
        if not isinstance(self.header, str):
            raise InvalidInputError(f"header must be a str, not {type(self.header).__name__}")
        if not isinstance(self.include_generated, bool):
            raise InvalidInputError(
                f"include_generated must be a bool, not {type(self.include_generated).__name__}"
            )
        if self.memory_types is not None:
            if isinstance(self.memory_types, (str, MemoryType)):
                raise InvalidInputError("memory_types must be a list of memory types, not one")
            object.__setattr__(self, "memory_types", tuple(self.memory_types))


@dataclass(frozen=True)
class Recalled:
    """What one recall gave: the query asked, the memories shown, and their block."""

    query: str
    results: list[RetrievalResult] = field(default_factory=list)
    block: str = ""


def check_roles(roles: Iterable[str]) -> frozenset[str]:
    """``roles`` as a set of chat roles; :class:`InvalidInputError` for an unknown one."""
    if isinstance(roles, str):
        raise InvalidInputError(f"roles must be a list of roles, not the str {roles!r}")
    wanted = frozenset(roles)
    unknown = sorted(wanted - set(ROLES))
    if unknown:
        raise InvalidInputError(f"unknown role(s) {unknown}; expected some of: {', '.join(ROLES)}")
    return wanted


def _placeholder(turn: ChatTurn) -> bool:
    return bool(turn.metadata.get("placeholder"))


def latest_user_text(turns: Sequence[ChatTurn]) -> str:
    """The recall query of a conversation: its latest user turn, clipped; ``""`` when that
    turn has no text of its own (or there is no user turn).

    Examples:
        >>> latest_user_text([ChatTurn("user", "Where do I live?"), ChatTurn("assistant", "Lisbon.")])
        'Where do I live?'
        >>> len(latest_user_text([ChatTurn("user", "log " * 50_000)])) < 2100
        True
    """
    for turn in reversed(turns):
        if turn.role == "user":
            return "" if _placeholder(turn) else recall_query(turn.text)
    return ""


def _calls(turn: ChatTurn) -> list[tuple[str, str | None]]:
    calls = turn.metadata.get("tool_calls")
    if not isinstance(calls, list):
        return []
    out: list[tuple[str, str | None]] = []
    for call in calls:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            call_id = call.get("id")
            out.append((call["name"], call_id if isinstance(call_id, str) else None))
    return out


def kept_turns(turns: Sequence[ChatTurn], roles: Collection[str] = DEFAULT_ROLES) -> list[int]:
    """The positions of the turns the loop stores (see the module docstring).

    Examples:
        >>> turns = [
        ...     ChatTurn("user", "What's the weather?"),
        ...     ChatTurn("assistant", "Called tool weather", metadata={"placeholder": True,
        ...              "tool_calls": [{"name": "weather", "id": "c1"}]}),
        ...     ChatTurn("tool", "Sunny.", metadata={"tool_call_id": "c1"}),
        ...     ChatTurn("assistant", "Sunny."),
        ... ]
        >>> kept_turns(turns)
        [0, 3]
        >>> kept_turns(turns, roles=("user", "assistant", "tool"))
        [0, 1, 2, 3]
    """
    memory_calls: set[str] = set()
    out: list[int] = []
    for n, turn in enumerate(turns):
        if turn.name == RECALL_NAME:
            continue
        calls = _calls(turn)
        if turn.role == "assistant" and calls and _placeholder(turn):
            if all(name in MEMORY_TOOL_NAMES for name, _ in calls):
                memory_calls.update(call_id for _, call_id in calls if call_id is not None)
                continue
            if "tool" not in roles:
                continue
        if turn.role == "tool" and (
            turn.name in MEMORY_TOOL_NAMES or turn.metadata.get("tool_call_id") in memory_calls
        ):
            continue
        if turn.role in roles:
            out.append(n)
    return out


class Conversation:
    """One conversation of one scope: recall for it, observe it, consolidate on cadence.

    Args:
        target: a :class:`~ucma_core.Memory` (bound with the scope arguments) or a view
            from ``Memory.scope(...)`` (see :func:`~ucma_core.conversation.bind`).
        options: what a recall block holds (default :class:`RecallOptions()`).
        roles: the roles whose turns :meth:`observe` stores (default: user, assistant).
        token_counter: counts the block's tokens (default: the memory's own).
        cadence: the consolidation cadence :meth:`after_turn` reports to (an adapter
            keeps one across runs); ``None``: no consolidation.
        keep: store every observed turn whatever its importance (default).
        user_id: the scope's user, with a :class:`~ucma_core.Memory`.
        agent_id: the scope's agent, with a :class:`~ucma_core.Memory`.
        session_id: the scope's session, with a :class:`~ucma_core.Memory`.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> march_4 = 1_772_618_400.0  # 2026-03-04 10:00 UTC
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder(), clock=lambda: march_4) as mem:
        ...     talk = Conversation(mem, user_id="ana", session_id="monday")
        ...     said = [ChatTurn("user", "My sister lives in Porto."), ChatTurn("assistant", "Noted.")]
        ...     _ = talk.observe(said)
        ...     later = Conversation(mem, user_id="ana", session_id="friday")
        ...     print(later.recall([ChatTurn("user", "Where does my sister live?")]).block)
        Relevant memories:
        - [2026-03-04, today] (user: ana) My sister lives in Porto.
    """

    def __init__(
        self,
        target: Target,
        options: RecallOptions | None = None,
        *,
        roles: Iterable[str] = DEFAULT_ROLES,
        token_counter: TokenCounter | None = None,
        cadence: Cadence | None = None,
        keep: bool = True,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> None:
        self.view: ScopedMemory = bind(target, user_id=user_id, agent_id=agent_id, session_id=session_id)
        if options is not None and not isinstance(options, RecallOptions):
            raise InvalidInputError(f"options must be RecallOptions, not {type(options).__name__}")
        self.options = options or RecallOptions()
        self.roles = check_roles(roles)
        self.token_counter = token_counter or self.view.memory.token_counter
        self.cadence = cadence
        self.keep = keep

    # ------------------------------------------------------------------ decisions (no I/O)
    def _ask(self, turns: Sequence[ChatTurn], query: str | None, shown: Collection[str]) -> tuple[str, int]:
        text = latest_user_text(turns) if query is None else recall_query(query)
        # ask for a few more than k when the window may hold some of them (they are left out)
        k = self.options.k
        window = max(len(shown), sum(1 for t in turns if t.message_id is not None))
        return text, min(1000, k + min(window, k))

    def _types(self) -> list[MemoryType | str] | None:
        types = self.options.memory_types
        return None if types is None else list(types)

    def _recalled(
        self, query: str, results: list[RetrievalResult], turns: Sequence[ChatTurn], shown: Collection[str]
    ) -> Recalled:
        ids = set(shown) | {t.message_id for t in turns if t.message_id is not None}
        kept = fresh(results, ids=ids, texts=[t.text for t in turns if not _placeholder(t)], k=self.options.k)
        return Recalled(query, kept, self.render(kept))

    def render(self, results: Sequence[RetrievalResult], max_tokens: int | None = None) -> str:
        """``results`` as the block (within ``max_tokens``, default the options' budget)."""
        memory = self.view.memory
        return render_memories(
            results,
            max_tokens=self.options.max_tokens if max_tokens is None else max_tokens,
            token_counter=self.token_counter,
            now=memory.now(),
            header=self.options.header,
            timezone=memory.config.timezone,
        )

    # ------------------------------------------------------------------ recall
    def recall(
        self, turns: Sequence[ChatTurn] = (), *, query: str | None = None, shown: Collection[str] = ()
    ) -> Recalled:
        """The memories worth showing for the conversation ``turns`` (its window, oldest
        first) and their block.

        Args:
            turns: the turns the model sees; the latest user turn is the query.
            query: recall for this text instead (clipped the same way).
            shown: memory ids (or message ids) already in the window besides ``turns``'.
        """
        text, fetch = self._ask(turns, query, shown)
        if not text:
            return Recalled("")
        results = self.view.remember(
            text, k=fetch, memory_types=self._types(), include_generated=self.options.include_generated
        )
        return self._recalled(text, results, turns, shown)

    async def arecall(
        self, turns: Sequence[ChatTurn] = (), *, query: str | None = None, shown: Collection[str] = ()
    ) -> Recalled:
        """Async :meth:`recall`."""
        text, fetch = self._ask(turns, query, shown)
        if not text:
            return Recalled("")
        results = await self.view.aremember(
            text, k=fetch, memory_types=self._types(), include_generated=self.options.include_generated
        )
        return self._recalled(text, results, turns, shown)

    # ------------------------------------------------------------------ observe
    def observe(self, turns: Sequence[ChatTurn]) -> list[str | None]:
        """Store the turns the loop keeps (see :func:`kept_turns`), once each; one memory id
        (or ``None``: not stored) per turn."""
        turns = list(turns)
        kept = kept_turns(turns, self.roles)
        ids = observe_turns(self.view, [turns[n] for n in kept], keep=self.keep) if kept else []
        return _place(ids, kept, len(turns))

    async def aobserve(self, turns: Sequence[ChatTurn]) -> list[str | None]:
        """Async :meth:`observe`."""
        turns = list(turns)
        kept = kept_turns(turns, self.roles)
        ids = await aobserve_turns(self.view, [turns[n] for n in kept], keep=self.keep) if kept else []
        return _place(ids, kept, len(turns))

    # ------------------------------------------------------------------ cadence
    def after_turn(self) -> ConsolidationReport | None:
        """Count one finished turn on the cadence; the report of an inline cycle it ran."""
        return None if self.cadence is None else self.cadence.tick(self.view.memory)

    async def aafter_turn(self) -> ConsolidationReport | None:
        """Async :meth:`after_turn`."""
        return None if self.cadence is None else await self.cadence.atick(self.view.memory)


def _place(ids: list[str | None], positions: list[int], count: int) -> list[str | None]:
    out: list[str | None] = [None] * count
    for memory_id, position in zip(ids, positions, strict=True):
        out[position] = memory_id
    return out
