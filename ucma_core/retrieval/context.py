"""Conversation context at query time: a turn is found with the turn it answers.

A reply such as "Sure, I'll try that next week." means nothing on its own; its meaning is in
the turn before it. Rather than store every turn again with its neighbours (which would
double the index), retrieval follows the session's ``followed_by`` edges from the strongest
candidates: when a strong candidate (or the assistant's turn after it) asks for an answer,
the next turn from a person is its reply and gets *context* evidence from it; the turn a
strong candidate answers gets a little less. The neighbouring turns can be handed to a
reader with the result. For questions that need several memories, :func:`names` picks the
people and places the strongest candidates mention, so retrieval can search for the other
memories that mention them (a second hop).

Everything here reads the graph or is a pure function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from ucma_core.storage.graph import EdgeType, MemoryGraph

__all__ = ["Turns", "context_evidence", "invites_reply", "names", "session_window"]

#: Context passed to the turn before a strong candidate, relative to the turn after it.
BACKWARD = 0.5

_INVITE = re.compile(r"\b(?:try|could|should|how about|what about|why not|maybe|recommend|suggest)\b", re.I)
_NAME = re.compile(r"\b([A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?)\b")
# Capitalised words that are not names of people or places.
_NOT_NAMES = frozenset(
    """The This That These Those There Then Than When Where What Which Who Why How And But Also Anyway
    Okay Sure Yes Yeah Nope Right Well Just Still Maybe Honestly Finally Sorry Thanks Thank Please
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
    August September October November December Christmas Easter Random Quick Long Morning Evening Night
    Today Tonight Tomorrow Yesterday Last Next Some Any Every Our Your Their His Her Its Mum Dad Good Great
    Nice Oh Ugh Hey Hi Hello Not New Old Got Had Did Went Made First Second Third Back Only""".split()
)
# Past tenses and imperatives that open chat sentences without a subject ("Went for a walk").
_OPENERS = frozenset(
    """went got had made took saw found lost bought sold slept left felt kept sent spent met ran came
    told thought brought caught fell gave paid put read said sat set won wore wrote ate drank drove flew
    forgot broke chose held hung knew led let meant rode rang sang shut spoke stood swam taught threw
    woke did was were is are has have can will would should could must may might let's get go make take
    try check ask call buy tell give keep look see need want think wish hope love hate miss guess""".split()
)


class Turns:
    """The session chains of a memory graph, read through ``followed_by`` edges and remembered
    for the span of one retrieval (a turn's neighbours are looked up once)."""

    def __init__(self, graph: MemoryGraph) -> None:
        self.graph = graph
        self._steps: dict[tuple[str, str], str | None] = {}

    def step(self, memory_id: str, direction: str) -> str | None:
        """The turn after (``"out"``) or before (``"in"``) ``memory_id`` in its session."""
        key = (memory_id, direction)
        if key not in self._steps:
            edges = self.graph.edges_of(memory_id, EdgeType.FOLLOWED_BY, direction=direction)
            self._steps[key] = (edges[0][1] if direction == "out" else edges[0][0]) if edges else None
        return self._steps[key]


def session_window(
    turns: Turns, memory_id: str, width: int, counts: Callable[[str], bool] = lambda _: True
) -> tuple[list[str], list[str]]:
    """The up to ``width`` turns before (oldest first) and after ``memory_id`` in its session
    that ``counts`` admits (the others are stepped over, up to ``3 × width`` turns away)."""
    before: list[str] = []
    after: list[str] = []
    for direction, out in (("in", before), ("out", after)):
        at: str | None = memory_id
        for _ in range(3 * width):
            at = turns.step(at, direction) if at is not None else None
            if at is None or len(out) >= width:
                break
            if counts(at):
                out.append(at)
    before.reverse()
    return before, after


def invites_reply(text: str) -> bool:
    """Whether a turn asks for an answer: a question, or a suggestion to take up or turn down."""
    return "?" in text or bool(_INVITE.search(text))


def context_evidence(
    turns: Turns,
    strength: Mapping[str, float],
    seeds: Iterable[str],
    observed: Callable[[str], bool],
    invites: Callable[[str], bool],
) -> dict[str, float]:
    """Context evidence for the replies to ``seeds`` and the turns they reply to.

    The next ``observed`` turn after a seed (an assistant's turns in between are stepped
    over) is a reply to it when the seed or a turn in between ``invites`` one; it gets the
    seed's ``strength``. The previous observed turn gets :data:`BACKWARD` of it when the
    seed answers it (that turn, or one in between, invites a reply). Each keeps its best.
    """
    out: dict[str, float] = {}
    seeds = list(seeds)
    for seed in seeds:
        value = strength.get(seed, 0.0)
        if value <= 0:
            continue
        for direction, share in (("out", 1.0), ("in", BACKWARD)):
            path = [seed]
            at: str | None = seed
            for _ in range(3):
                at = turns.step(at, direction) if at is not None else None
                if at is None:
                    break
                path.append(at)
                if observed(at):
                    break
            if at is None or len(path) < 2 or not observed(path[-1]):
                continue
            asking = path[:-1] if direction == "out" else path[1:]
            if any(invites(i) for i in asking):
                out[at] = max(out.get(at, 0.0), value * share)
    for seed in seeds:
        out.pop(seed, None)
    return out


def names(text: str, exclude: Iterable[str] = ()) -> list[str]:
    """Capitalised words in ``text`` that may be names of people or places, in order, without
    repeats; words in ``exclude`` (case-insensitive) and common capitalised words are left out.
    A word opening a sentence counts unless it looks like a verb or adverb ("Slept badly",
    "Finally ..."): in chat, sentences often start with the verb.

    Examples:
        >>> names("Sterling called. Then Zed met Sterling and Ana.", exclude=["ana"])
        ['Zed', 'Sterling']
    """
    skip = {e.lower() for e in exclude}
    found: dict[str, None] = {}
    never: set[str] = set()  # common or excluded: not a name wherever it stands
    for m in _NAME.finditer(text):
        word = m.group(1)
        if word in found or word in never:  # decided (a verb-like word is not: see below)
            continue
        lower = word.lower()
        if word in _NOT_NAMES or lower in skip:
            never.add(word)
            continue
        if lower in _OPENERS or word.endswith(("ed", "ing", "ly")):
            at = m.start()  # the last character before the word that is not a space
            while at and text[at - 1].isspace():
                at -= 1
            if not at or text[at - 1] in '.!?:;"(':  # opens a sentence: a verb or adverb here
                continue
        found[word] = None
    return list(found)
