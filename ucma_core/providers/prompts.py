"""The system prompts :class:`~ucma_core.providers.LLMProvider` sends, one per task.

Each prompt states the JSON the user message carries and the JSON object the model
must reply with; :mod:`ucma_core.providers.answers` checks that reply strictly.
"""

from __future__ import annotations

from types import MappingProxyType

from ucma_core.records import LearningType

__all__ = ["PROMPTS"]

_LEARNING_TYPES = sorted(t.value for t in LearningType)

#: System prompt per task: importance, summarize, facts, procedure, learning, conflicts.
PROMPTS = MappingProxyType(
    {
        "importance": (
            "You rate how worth remembering a message is for a personal assistant's long-term memory. "
            "High: facts about the person, preferences, decisions, commitments, dates, fixes to problems. "
            'Low: greetings, thanks, small talk. The input is JSON {"source": str, "text": str}. '
            'Reply with JSON only: {"importance": <number from 0 to 1>}.'
        ),
        "summarize": (
            "You write short, faithful summaries for an assistant's memory. The input is JSON "
            '{"max_words": int, "groups": [{"index": int, "texts": [str]}]}. For every group write one '
            "summary of at most max_words words that keeps names, numbers, dates, decisions and outcomes and "
            "adds nothing that is not in the texts. Reply with JSON only: "
            '{"items": [{"index": int, "summary": str}]}, one item per input group, same indexes.'
        ),
        "facts": (
            "You extract durable facts from messages as subject-predicate-object triples. The input is JSON "
            '{"items": [{"index": int, "speaker": str, "text": str}]}. First-person words (I, me, my) refer '
            "to the speaker: use the speaker's name as the subject. Use short lowercase predicates such as "
            '"lives in", "works at", "works as", "is named", "is", "likes", "dislikes", "prefers", '
            '"is allergic to", "has sister" (has + relation). Keep objects short, without articles or '
            "filler. Only state what the text says; small talk, questions and opinions about the "
            "conversation give no facts. Confidence is a number from 0 to 1. Reply with JSON only: "
            '{"items": [{"index": int, "facts": [{"subject": str, "predicate": str, "object": str, '
            '"confidence": number}]}]}, one item per input item, same indexes, "facts" empty when '
            "there is none."
        ),
        "procedure": (
            "You turn a log of episodes into a reusable procedure, if the episodes show a sequence of "
            'actions that ended in success. The input is JSON {"episodes": [str]}. Reply with JSON only: '
            '{"procedure": {"name": str, "description": str, "steps": [str], "trigger_tags": [str]}} with '
            "short imperative steps in order and a few lowercase tags saying when it applies, or "
            '{"procedure": null} when there is no successful sequence of actions.'
        ),
        "learning": (
            "You distil one lesson from a log of episodes for an agent's memory. The input is JSON "
            '{"succeeded": bool, "episodes": [str]}. Say what the problem was and what worked (when '
            'succeeded) or what was tried and did not work (when not). Reply with JSON only: {"learning": '
            '{"title": str, "insight": str, "learning_type": str, "applicability": [str], '
            '"confidence": number}} '
            "where learning_type is one of " + ", ".join(_LEARNING_TYPES) + ", applicability is a few "
            'lowercase tags and confidence is from 0 to 1, or {"learning": null} when there is no lesson.'
        ),
        "conflicts": (
            "You judge whether a newer fact contradicts an older fact about the same subject, so the older "
            "one should be retired. Facts that can both be true (likes jazz, likes tea) do not conflict; a "
            "changed single value (lives in Paris, then lives in Berlin) does. The input is JSON "
            '{"items": [{"index": int, "older": {"subject", "predicate", "object"}, "newer": {...}}]}. '
            'Reply with JSON only: {"items": [{"index": int, "conflict": bool}]}, one item per input item.'
        ),
    }
)
