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
            "You rate how worth remembering a chat message is for a personal assistant's long-term memory. "
            "High: facts about the person and the people they mention, preferences, decisions, corrections "
            "of earlier statements, commitments, dates, problems and their fixes; an assistant message that "
            "gives a diagnosis, an answer, advice, steps or a decision. Low: greetings, thanks, "
            "acknowledgements, pleasantries, stray keystrokes. The input is JSON "
            '{"source": str, "text": str} (source is user, assistant, tool...). '
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
            '{"items": [{"index": int, "speaker": str, "text": str}]}. First-person words (I, me, my, we) '
            "refer to the speaker: use the speaker's name as the subject. A fact about someone the speaker "
            'mentions has that person as subject ("my sister Marta lives in Porto": Marta lives in Porto; '
            'an unnamed relative is "<speaker>\'s sister"), never the speaker. Use short lowercase '
            'predicates such as "lives in", "is from", "works at", "works as", "is", "has age", "likes", '
            '"dislikes", "prefers", "is allergic to", "has sister" (has + relation), "chose", "plans to", '
            '"decided to", "uses", "has" (appointments and schedules), "no longer works at" (no longer + '
            "predicate). Keep objects whole but without filler: a preference keeps its qualifiers "
            '("short answers with code"), a schedule its time ("dentist appointment on Friday at 3pm"). '
            'A statement that corrects or updates an earlier one ("actually...", "instead", "we moved to", '
            '"not ... anymore", "switched from X to Y") gets "revises": true and, when it names the old '
            'value, "replaces": "<old value>". Only state what the text says; small talk, questions, '
            "problem reports and opinions about the conversation give no facts, and never state that a "
            "person is named what they are already called. Confidence is a number from 0 to 1. Reply with "
            'JSON only: {"items": [{"index": int, "facts": [{"subject": str, "predicate": str, '
            '"object": str, "confidence": number, "revises": bool, "replaces": str or null}]}]}, one item '
            'per input item, same indexes, "facts" empty when there is none.'
        ),
        "procedure": (
            "You turn a log of episodes into a reusable procedure, if the episodes show a sequence of "
            "actions that ended in success, or a question asking how to do something followed by an answer "
            'that gives the steps. The input is JSON {"episodes": [str]}. Reply with JSON only: '
            '{"procedure": {"name": str, "description": str, "steps": [str], "trigger_tags": [str]}} with '
            "short imperative steps in order and a few lowercase tags saying when it applies, or "
            '{"procedure": null} when there is no successful sequence of actions and no how-to answer.'
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
            "changed single value (lives in Paris, then lives in Berlin) does, and so does a newer fact "
            'marked "revises" that corrects the older one (plans to buy a ThinkPad, then chose a MacBook '
            'Air) or names it in "replaces". The input is JSON {"items": [{"index": int, "older": '
            '{"subject", "predicate", "object"}, "newer": {"subject", "predicate", "object", "revises"?, '
            '"replaces"?}}]}. Reply with JSON only: {"items": [{"index": int, "conflict": bool}]}, one item '
            "per input item."
        ),
    }
)
