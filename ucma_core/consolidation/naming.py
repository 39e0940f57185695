"""Who "I" is in a learned fact: the name the user gave, or "the user" — never a raw id.

The sleep cycle learns facts from a user's turns with the speaker as the subject of
first-person statements. The speaker is, in order:

* the first participant the app passed with the turn (``participants=["Ana"]``);
* the name the user gave in this user and agent's scope ("Hi, I'm Ana" → a fact
  ``the user is named Ana``), also when it was given earlier in the same batch of turns: the
  batch's facts about "the user" are then renamed;
* ``"the user"`` (:data:`USER`).

A user id ("u-4821", "sam-laptop", "ana") is never used as a name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ucma_core.consolidation.context import CycleContext
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.records import MemoryType, Source

__all__ = ["USER", "given_names", "name_batch", "speaker"]

#: The subject of what a user who gave no name said about themselves.
USER = "the user"
_NAMED = "is named"

Names = dict[tuple[Any, Any], str]


def given_names(cx: CycleContext) -> Names:
    """``{(user_id, agent_id): name}``: the names users gave, from the current facts."""
    found: dict[tuple[Any, Any], tuple[float, str]] = {}
    with cx.lock:
        for _, attrs in cx.stores.graph.nodes():
            if (
                attrs.get("memory_type") == MemoryType.SEMANTIC.value
                and attrs.get("predicate") == _NAMED
                and str(attrs.get("subject", "")).lower() == USER
                and attrs.get("valid_to") is None
            ):
                key = (attrs.get("user_id"), attrs.get("agent_id"))
                at = float(attrs.get("valid_from") or 0.0)
                if key not in found or found[key][0] <= at:
                    found[key] = (at, str(attrs.get("object", "")))
    return {key: name for key, (_, name) in found.items() if name}


def speaker(attrs: Mapping[str, Any], names: Names) -> str | None:
    """Who said a turn, as the subject of its first-person facts (``None``: not the user)."""
    people = attrs.get("participants") or []
    if people:
        return str(people[0])
    if attrs.get("source") != Source.USER.value:
        return None
    return names.get((attrs.get("user_id"), attrs.get("agent_id")), USER)


def _renamed(fact: ExtractedFact, name: str) -> ExtractedFact:
    subject = fact.subject
    if subject.lower() == USER:
        subject = name
    elif subject.lower().startswith(USER + "'s "):
        subject = f"{name}'s {subject[len(USER) + 3 :]}"
    obj = name if fact.object.lower() == USER else fact.object
    return dataclasses.replace(fact, subject=subject, object=obj)


def name_batch(
    ids: list[str],
    found: list[list[ExtractedFact]],
    speakers: list[str | None],
    attrs_by_id: Mapping[str, Mapping[str, Any]],
    names: Names,
) -> tuple[list[list[ExtractedFact]], list[str | None]]:
    """The batch's facts and speakers with "the user" replaced by the name a turn of the same
    scope gave (in this batch or before); ``names`` learns the names given in the batch."""
    for memory_id, facts, who in zip(ids, found, speakers, strict=True):
        if who != USER:
            continue
        for fact in facts:
            if fact.subject.lower() == USER and fact.predicate == _NAMED and fact.object.strip():
                attrs = attrs_by_id[memory_id]
                names[(attrs.get("user_id"), attrs.get("agent_id"))] = fact.object.strip()
    out_facts, out_speakers = [], []
    for memory_id, facts, who in zip(ids, found, speakers, strict=True):
        attrs = attrs_by_id[memory_id]
        name = names.get((attrs.get("user_id"), attrs.get("agent_id")))
        if who == USER and name:
            # the naming fact itself stays about "the user": it is how later cycles know the name
            facts = [f if f.predicate == _NAMED else _renamed(f, name) for f in facts]
            who = name
        out_facts.append(facts)
        out_speakers.append(who)
    return out_facts, out_speakers
