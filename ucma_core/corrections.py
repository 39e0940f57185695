"""Corrections linked as they are observed: knowledge updates before any sleep cycle.

When a user turn corrects or updates an earlier one ("Actually I decided on the MacBook Air
instead", "We moved to Lisbon", "I don't work at Initech anymore", "No, it's Postgres not
MySQL"), :func:`link_corrections` marks the earlier turn ``revised_by`` the correction right
away, the marker ranking reads (:mod:`ucma_core.retrieval.markers`): the corrected turn
scores half and its correction takes at least its relevance, so the correction ranks first
from the next :meth:`~ucma_core.Memory.remember` on. The link is made only when the rules
can tell which turn is corrected; the sleep cycle later confirms or undoes it
(:mod:`ucma_core.consolidation.revisions`).

The rules, on the user's own turns (the same user and agent, the last
:data:`WINDOW` turns before the correction):

* the correction must state a revision (the offline fact rules mark it ``revises``: a cue
  like "actually", "instead", "scratch that", "switched", "anymore", "moved", "new"), or
  say "no, … not Y";
* it corrects an earlier turn when a fact of each has the same subject and the two
  facts conflict (:func:`~ucma_core.providers.conflicts.facts_conflict`: the old value named,
  the same single-valued predicate, a negation, a revised decision or preference);
* never across topics: when both facts' objects are of a known kind
  (:func:`~ucma_core.providers.kinds.kind_of`: a laptop, a deploy target, a database…),
  the kinds must be the same. A revised decision or preference ("actually I decided on the
  kayak") whose kind is unknown on either side is not linked: the rules cannot tell its
  topic (the sleep cycle, with the provider's judgement, still may);
* a revised decision takes back one earlier decision, the latest that fits; other
  conflicts mark every conflicting turn in the window;
* "no, it's X not Y" (or "… rather than Y") corrects the latest earlier turn that
  mentions ``Y``.

The correction records what it corrects (``corrects``, a list of ids, and
``revision="observed"``), and a ``supersedes`` edge links the two turns.

Examples:
    >>> import tempfile
    >>> from ucma_core import Memory
    >>> from ucma_core.embedders import HashingEmbedder
    >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
    ...     old = mem.observe("I'm going to buy the ThinkPad X1 Carbon for work.", user_id="sam", keep=True)
    ...     new = mem.observe("Actually I decided on the MacBook Air instead.", user_id="sam", keep=True)
    ...     mem.edges(new, edge_type="supersedes") == [(new, old, "supersedes", 1.0)]
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ucma_core.providers.conflicts import facts_conflict, is_decision, negated
from ucma_core.providers.fact_rules import extract_facts
from ucma_core.providers.kinds import kind_of
from ucma_core.providers.protocols import ExtractedFact
from ucma_core.records import MemoryType, Source
from ucma_core.scope import ANY, Scope
from ucma_core.storage.graph import EdgeType

if TYPE_CHECKING:
    from ucma_core.stores.folder import FolderStores

__all__ = ["WINDOW", "link_corrections", "named_old_value"]

#: How many of the user's turns before a correction it may correct.
WINDOW = 20
#: "no, it's X not Y", "actually X rather than Y": the old value ``Y`` named outright.
_NAMED_OLD = re.compile(
    r"^\s*(?:no|nope|actually|correction|sorry)\b[^.!?]*?\b(?:not|rather\s+than|instead\s+of)\s+"
    r"(?:the\s+|a\s+|an\s+|my\s+)?(?P<old>[\w][\w.+#-]*(?:\s+[\w][\w.+#-]*){0,3}?)\s*(?:[.,;!?]|$)",
    re.I,
)
#: Words without which no turn is read as a correction (a cheap test before the fact rules).
_CUE = re.compile(
    r"\b(?:actually|instead|scratch|changed?|switch\w*|any\s?more|no\s+longer|mov(?:ed|ing)|new|left|quit|"
    r"correction|rather|decided|after\s+all|in\s+the\s+end|second\s+thoughts?|joined|"
    r"now\s+(?:use|work|live|prefer|like)|from\s+now\s+on)\b|^\s*(?:no|nope)\b",
    re.I,
)
_STOP = frozenset("it that this one them those these me you him her us".split())


def named_old_value(text: str) -> str | None:
    """The old value a "no, it's X not Y" correction names, or ``None``.

    Examples:
        >>> named_old_value("No, it's Postgres not MySQL."), named_old_value("No, I do not.")
        ('MySQL', None)
    """
    m = _NAMED_OLD.search(text)
    if m is None:
        return None
    old = m["old"].strip().rstrip(".-")
    return None if old.lower() in _STOP or old.lower() in ("do", "did", "am", "was") else old


@lru_cache(maxsize=1024)
def _facts(text: str, me: str) -> tuple[ExtractedFact, ...]:
    return tuple(extract_facts(text, me))


def _attr(node: Mapping[str, Any] | None, name: str) -> Any:
    return None if node is None else node.get(name)


def _speaker(node: Mapping[str, Any]) -> str:
    people = node.get("participants") or ()
    return str(people[0]) if people else "the user"


def link_corrections(stores: FolderStores, memory_ids: Iterable[str | None]) -> list[tuple[str, str]]:
    """Link each new user turn among ``memory_ids`` that corrects an earlier turn (see the
    module docstring); returns the ``(correction, corrected)`` pairs linked. Call it under
    the memory's lock, once the turns are stored."""
    linked: list[tuple[str, str]] = []
    graph = stores.backend.graph
    for memory_id in memory_ids:
        node = graph.node(memory_id) if memory_id else None
        if node is None or node.get("source") != Source.USER.value or node.get("source_ids"):
            continue
        assert memory_id is not None
        text = stores.backend.rows([memory_id]).get(memory_id, ("", {}))[0]
        if not _CUE.search(text):
            continue  # most turns revise nothing: the fact rules are not run on them
        me = _speaker(node)
        revising = [f for f in _facts(text, me) if f.revises]
        named = named_old_value(text)
        if not revising and named is None:
            continue
        corrected = _corrected(stores, memory_id, node, revising, named, me)
        if not corrected:
            continue
        with graph.batch():
            for old in corrected:
                stores.backend.set_state(old, revised_by=memory_id, revision="observed")
                graph.add_edge(memory_id, old, EdgeType.SUPERSEDES, 1.0)
                group = _attr(graph.node(old), "consolidated_into")
                if (
                    isinstance(group, str)
                    and graph.node(group) is not None
                    and not _attr(graph.node(group), "revised_by")
                ):
                    # a summary holding the stale turn ranks below the correction too
                    stores.backend.set_state(group, revised_by=memory_id)
            stores.backend.set_state(memory_id, corrects=list(corrected), revision="observed")
        linked += [(memory_id, old) for old in corrected]
    return linked  # the markers' copy in Chroma is written by the next sleep cycle


def _earlier(stores: FolderStores, memory_id: str, node: Mapping[str, Any]) -> list[str]:
    """The user's own turns before ``memory_id`` (same user and agent), latest first."""
    graph = stores.backend.graph
    at = float(node["timestamp"])
    out = []
    turns = stores.episodic.turns(Scope(node.get("user_id"), ANY, ANY))  # in time order
    at_index = turns.index(memory_id) if memory_id in turns else len(turns)
    for other in reversed(turns[:at_index]):
        attrs = graph.node(other)
        if (
            other == memory_id
            or attrs is None
            or attrs.get("agent_id") != node.get("agent_id")
            or attrs.get("source") != Source.USER.value
            or attrs.get("memory_type") != MemoryType.EPISODIC.value
            or float(attrs["timestamp"]) > at
        ):
            continue
        out.append(other)
        if len(out) >= WINDOW:
            break
    return out


def _corrected(
    stores: FolderStores,
    memory_id: str,
    node: Mapping[str, Any],
    revising: Sequence[ExtractedFact],
    named: str | None,
    me: str,
) -> list[str]:
    graph = stores.backend.graph
    earlier = [i for i in _earlier(stores, memory_id, node) if not _attr(graph.node(i), "revised_by")]
    if not earlier:
        return []
    texts = {i: t for i, (t, _) in stores.backend.rows(earlier).items()}
    found: list[str] = []
    if named is not None:
        pattern = re.compile(r"(?<![\w])" + re.escape(named) + r"(?![\w])", re.I)
        hit = next((i for i in earlier if pattern.search(texts.get(i, ""))), None)
        if hit is not None:
            found.append(hit)
    for fact in revising:
        hints = _hints(fact)
        for old_id in earlier:
            if old_id in found or not _may_hold(texts.get(old_id, ""), hints, fact):
                continue
            verdict = _corrects(fact, _facts(texts.get(old_id, ""), me))
            if verdict:
                found.append(old_id)
                if verdict == "one":
                    break
    return found


_SMALL = frozenset("a an the in at on to of for is are am has have be been no longer not my our".split())


def _hints(fact: ExtractedFact) -> tuple[str, ...]:
    """Word starts a turn the fact may correct is likely to hold: its old value's and object's
    words, and its predicate's ("lives in" → "liv")."""
    words = re.findall(r"[a-z0-9]+", f"{fact.replaces or ''} {fact.object}".lower())
    verbs = [w[:4] if len(w) > 4 else w[:3] for w in re.findall(r"[a-z]+", fact.predicate.lower())]
    return tuple(dict.fromkeys(w for w in [*words, *verbs] if w not in _SMALL and len(w) > 2))


def _may_hold(text: str, hints: tuple[str, ...], fact: ExtractedFact) -> bool:
    """A cheap test before the fact rules run on an earlier turn: it shares a word start with
    the correction's fact, or names a thing of the same kind."""
    lower = text.lower()
    if any(re.search(r"(?<![a-z0-9])" + re.escape(h), lower) for h in hints):
        return True
    kind = kind_of(fact.object)
    return kind is not None and kind_of(text) == kind


def _corrects(new: ExtractedFact, olds: Sequence[ExtractedFact]) -> str:
    """Whether a revising fact takes back one of ``olds``: ``"one"`` (a revised decision or
    preference: the latest that fits only), ``"all"`` (a conflict every such turn shares),
    or ``""``."""
    for old in olds:
        if old.subject.strip().lower() != new.subject.strip().lower():
            continue
        x, y = kind_of(old.object), kind_of(new.object)
        if x is not None and y is not None and x != y:
            continue  # never across topics
        explicit = bool(new.replaces) or negated(new.predicate) is not None
        choice = is_decision(old.predicate) and is_decision(new.predicate)
        preference = old.predicate == new.predicate and old.predicate in ("prefers", "uses")
        if not explicit and (choice or preference):
            if x is None or y is None:
                continue  # the rules cannot tell the topic: the sleep cycle may
            if old.object.strip().lower() != new.object.strip().lower():
                return "one"
            continue
        if facts_conflict(old, new):
            return "all"
    return ""
