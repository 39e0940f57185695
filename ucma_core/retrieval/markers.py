"""What the sleep cycle marked on memories, read by the rank.

Consolidation leaves markers on graph nodes (:mod:`ucma_core.consolidation.extract`,
:mod:`ucma_core.consolidation.patterns`); retrieval reads them:

* a turn a later one corrected (``revised_by``: the correcting turn) scores
  ``RankingConfig.demoted_weight`` (half by default), and its correction is a candidate
  whenever it is, with at least its relevance: the correction ranks first right after it
  is learned;
* a question that was answered (``answered_by``: the answering turn) scores the same, and
  its answer is a candidate with at least the question's relevance: a memory that only
  repeats the question ranks below the turn that answered it;
* for a question in the first person that names no relative ("where do I live?", not
  "where does my sister live?"), a memory whose ``about`` does not include the user (a
  fact about someone the user mentioned, or the turn that stated only such facts) scores
  the same.

A memory is demoted once, however many of these apply. Chains (a correction corrected
again) are followed a few steps. Whatever its other factors, a corrected memory never scores
above its correction (:func:`below_corrections`).

Examples:
    >>> about_user("where do I live?"), about_user("where does my sister live?")
    (True, False)
    >>> demotion({"revised_by": "e2"}, about_me=False, weight=0.5)
    0.5
    >>> demotion({"about": ["relation"]}, about_me=True, weight=0.5)
    0.5
    >>> demotion({"about": "user"}, about_me=True, weight=0.5)
    1.0
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ucma_core.providers.fact_objects import RELATIONS

__all__ = ["FOLLOWS", "about_user", "below_corrections", "demotion", "inherit", "pull"]

#: The markers that point from a memory to the one that takes its place in a ranking.
FOLLOWS = ("revised_by", "answered_by")
#: How many steps of a chain (a correction corrected again) are followed.
_CHAIN = 3
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:i|me|my|mine|myself|i'm|i've|i'd|i'll)(?![\w'])", re.I)
_RELATIVE = re.compile(r"\b(?:" + "|".join(sorted(RELATIONS, key=len, reverse=True)) + r")s?\b", re.I)
#: People the user may ask about in the first person without meaning themselves.
_OTHERS = re.compile(r"\b(?:my|our)\s+(?:\w+\s+)?(?:friends?|family|parents|kids|children|folks)\b", re.I)

Node = Mapping[str, Any]


def about_user(query: str) -> bool:
    """Whether ``query`` asks about the user themselves: it speaks in the first person and
    names no relative or other person of theirs."""
    return bool(_FIRST_PERSON.search(query)) and not _RELATIVE.search(query) and not _OTHERS.search(query)


def _whose(node: Node) -> list[str]:
    about = node.get("about")
    if about is None:
        return []
    return [about] if isinstance(about, str) else [str(a) for a in about]


def demotion(node: Node, *, about_me: bool, weight: float) -> float:
    """The score multiplier of one memory: ``weight`` when it was revised, when it is an
    answered question, or when ``about_me`` and it is only about other people; else 1."""
    for marker in FOLLOWS:  # a loop, not ``any(...)``: no generator per candidate
        if node.get(marker):
            return weight
    whose = _whose(node)
    if about_me and whose and "user" not in whose:
        return weight
    return 1.0


def _follower(node: Node | None) -> str | None:
    if node is None:
        return None
    for marker in FOLLOWS:
        target = node.get(marker)
        if isinstance(target, str) and target:
            return target
    return None


def pull(candidates: Mapping[str, object], node: Callable[[str], Node | None]) -> list[str]:
    """The corrections and answers of ``candidates`` that are not candidates yet (following
    chains), in a stable order. The caller admits them like any other candidate."""
    seen = set(candidates)
    out: list[str] = []
    frontier = sorted(candidates)
    for _ in range(_CHAIN):
        step = []
        for memory_id in frontier:
            target = _follower(node(memory_id))
            if target is not None and target not in seen:
                seen.add(target)
                step.append(target)
        if not step:
            break
        out.extend(step)
        frontier = step
    return out


def inherit(relevance: dict[str, float], nodes: Mapping[str, Node]) -> dict[str, float]:
    """Give each correction or answer at least the relevance of the memory it corrects or
    answers (in place, following chains); returns the relevance each one took over."""
    taken: dict[str, float] = {}
    for _ in range(_CHAIN):
        changed = False
        for memory_id in sorted(relevance):
            target = _follower(nodes.get(memory_id))
            if target is None or target not in relevance:
                continue
            if relevance[memory_id] > relevance[target]:
                relevance[target] = relevance[memory_id]
                taken[target] = relevance[memory_id]
                changed = True
        if not changed:
            break
    return taken


def below_corrections(scores: Mapping[str, float], nodes: Mapping[str, Node]) -> dict[str, float]:
    """The new scores of the corrected memories (``revised_by``) among ``scores`` that would
    rank at or above their correction: just below it (chains followed).

    Examples:
        >>> below_corrections({"old": 0.9, "new": 0.5}, {"old": {"revised_by": "new"}, "new": {}})
        {'old': 0.49999999999999994}
    """
    out: dict[str, float] = {}
    current = dict(scores)
    for _ in range(_CHAIN):
        changed = False
        for memory_id in sorted(current):
            target = (nodes.get(memory_id) or {}).get("revised_by")
            if isinstance(target, str) and target in current and current[memory_id] >= current[target]:
                current[memory_id] = out[memory_id] = math.nextafter(current[target], -math.inf)
                changed = True
        if not changed:
            break
    return out
