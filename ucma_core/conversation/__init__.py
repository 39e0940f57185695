"""Framework-neutral conversation helpers that every adapter builds on.

* :mod:`~ucma_core.conversation.turns`: chat turns in, episodes out
  (:class:`ChatTurn`, :func:`observe_turns`, :func:`aobserve_turns`), deduplicated
  by message id across restarts.
* :mod:`~ucma_core.conversation.render`: recalled memories as one prompt block
  within a token budget (:func:`render_memories`).
* :mod:`~ucma_core.conversation.behind`: a durable background writer of turns
  (:class:`WriteBehind`), drained by ``Memory.close`` and at interpreter exit.
* :mod:`~ucma_core.conversation.loop`: the loop every adapter wraps
  (:class:`Conversation`, :class:`RecallOptions`): recall → render → observe, with one
  rule for what is already shown (:mod:`~ucma_core.conversation.shown`) and one
  consolidation cadence (:class:`Cadence`).
* :mod:`~ucma_core.conversation.tools`: the memory tools for agents, bound to one
  scope (:class:`ToolSpec`, :func:`memory_tools`).

An adapter converts its framework's messages to :class:`ChatTurn` and wraps each
:class:`ToolSpec` in its tool type; nothing else.
"""

from ucma_core.conversation.behind import WriteBehind, WriteFailure
from ucma_core.conversation.binding import Target, bind, stated_view
from ucma_core.conversation.cadence import Cadence
from ucma_core.conversation.loop import (
    DEFAULT_HEADER,
    DEFAULT_K,
    DEFAULT_MAX_TOKENS,
    DEFAULT_ROLES,
    RECALL_NAME,
    Conversation,
    Recalled,
    RecallOptions,
)
from ucma_core.conversation.render import render_memories
from ucma_core.conversation.seam import UNSET, Unset, clean_text, recall_query, stated_user
from ucma_core.conversation.tools import MEMORY_TOOL_NAMES, ToolSpec, memory_tools
from ucma_core.conversation.turns import ChatTurn, aobserve_turns, observe_turns, turn_items

__all__ = [
    "DEFAULT_HEADER",
    "DEFAULT_K",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_ROLES",
    "MEMORY_TOOL_NAMES",
    "RECALL_NAME",
    "UNSET",
    "Cadence",
    "ChatTurn",
    "Conversation",
    "RecallOptions",
    "Recalled",
    "Target",
    "ToolSpec",
    "Unset",
    "WriteBehind",
    "WriteFailure",
    "aobserve_turns",
    "bind",
    "clean_text",
    "memory_tools",
    "observe_turns",
    "recall_query",
    "render_memories",
    "stated_user",
    "stated_view",
    "turn_items",
]
