"""People as structure: who a scope's memories are by and about, and the names a query gives them.

In a conversation between two people every question names one of them ("What did Caroline
say about the race?"), and the turns that contain little but that name ("Bye, Caroline!")
are the nearest neighbours of the embedded question. So retrieval reads the names in a
query against the people the memory knows in the scope (its :class:`Census`):

* the **participants** an app passed to ``observe`` (the speaker of each turn first);
* the **user** of the scope, when the user id is a name (``"ana"``, ``"ana-42"``);
* names the turns of **most sessions** mention (a companion an app never passed in).

A known person named in a query is taken out of the embedded query text and becomes a
soft preference for that person's memories (their turns, facts about them), never a filter.
The second hop of retrieval (memories naming someone the best matches name) follows only
**rare** names: a known person, or a capitalised word that half the sessions use
("Honestly", "Sounds"), links nothing.

The census is counted per session and cached: a query reads it again only for the sessions
that changed since the last one (a new turn reads that turn alone). The names each turn
mentions are worked out as it is written (:class:`TurnNames`, kept in step with the keyword
index), so the first census of a scope reads no text of the turns written since the memory
was opened. Everything else here is a pure function.

Examples:
    >>> census = Census(sessions=10, people={"caroline": "Caroline", "melanie": "Melanie"},
    ...                 mentions={"zainab": 1, "sounds": 7, "melanie": 9}, proper={"zainab", "melanie"})
    >>> named = read_query("What did Caroline say about Zainab's new job?", census)
    >>> named.people
    ('Caroline',)
    >>> print(named.text)
    What did say about Zainab's new job?
    >>> census.rare("Zainab"), census.rare("Sounds"), census.rare("Melanie")
    (True, False, False)
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ucma_core.retrieval.context import names
from ucma_core.scope import Scope
from ucma_core.storage.backend import Backend
from ucma_core.storage.keywords import KeywordRow
from ucma_core.stores.episodic import EpisodicStore

__all__ = [
    "Census",
    "Named",
    "People",
    "TurnNames",
    "inside_names",
    "read_query",
    "split_names",
    "turn_names",
    "user_names",
]

#: A name the turns of at least this share of a scope's sessions mention is a person of the scope.
WIDESPREAD = 0.5
#: ... once the scope has at least this many sessions.
WIDESPREAD_SESSIONS = 4
#: A name is rare when at most this share of the sessions mention it (and at least
#: :data:`RARE_SESSIONS` sessions are always allowed).
RARE_SHARE = 0.2
RARE_SESSIONS = 3

#: Sessions whose counts are kept between queries.
MAX_SESSIONS = 5000
#: The text of about this many of the newest turns is read for the names they mention (the
#: sessions they belong to, and at most this many turns of one session); older sessions
#: count their participants only. Bounds the first query of a scope.
TEXT_TURNS = 1000
#: Turns whose names :class:`TurnNames` keeps at most: about 80 bytes each with the chat
#: corpus's three names a turn (the ids are the graph's own strings), 0.8 MiB at 10,000
#: turns. Every turn of a memory of 12k; at 100,000 turns of 20 users it answers 58-72% of a
#: first census's turns (the newest 1,000 of each user), the rest are read.
TURN_NAMES = 16384
#: Names :class:`TurnNames` keeps at most over all its turns (8 bytes each in a turn's tuple;
#: the strings are interned and shared): a pasted log naming thousands of things is bounded
#: too. A turn naming more than 1/64 of it is not kept (its text is read when needed).
TURN_NAME_SLOTS = 262_144

_NAME = re.compile(r"(?<![\w'])([^\W\d_][\w-]*)((?:'s|’s|s')(?!\w))?")
_SPACES = re.compile(r"\s{2,}")
#: A capitalised word inside a sentence (not opening one): how names are written.
#: (The space before it is matched, not looked behind for: a search then tries only the
#: positions of spaces, 2x faster over a census's 1,000 turns.)
_INSIDE = re.compile(r"(?<=[^\s.!?:;\"(])\s([A-Z][a-z]{2,}(?:-[A-Z][a-z]+)?)\b")


def user_names(user_id: object) -> set[str]:
    """The names a user id stands for, case-folded: the id and its first part before ``-``,
    ``_``, ``.``, ``@`` or a space, when they are words of two letters or more.

    Examples:
        >>> sorted(user_names("ana-42")), user_names("u1"), user_names(None)
        (['ana'], set(), set())
    """
    if not isinstance(user_id, str):
        return set()
    folded = user_id.casefold()
    parts = {folded, re.split(r"[-_.@\s]", folded)[0]}
    return {p for p in parts if len(p) >= 2 and p.isalpha()}


def inside_names(text: str) -> set[str]:
    """The capitalised words inside a sentence of ``text`` (not opening one), case-folded.

    Examples:
        >>> sorted(inside_names("Podcasts are fun. My sister Zainab likes them, says Ana."))
        ['ana', 'zainab']
    """
    return {name.casefold() for name in _INSIDE.findall(text)}


def turn_names(text: str) -> tuple[str, ...]:
    """What :func:`~ucma_core.retrieval.context.names` and :func:`inside_names` find in
    ``text``, case-folded and interned, as one tuple: the names, ``""``, then the capitalised
    words inside a sentence; ``()`` when there are none (see :func:`split_names`).

    Examples:
        >>> turn_names("Slept badly. Met Zainab at the Louvre on Monday")
        ('zainab', 'louvre', '', 'louvre', 'monday', 'zainab')
        >>> turn_names("Finally home")
        ()
    """
    found = dict.fromkeys(sys.intern(name.casefold()) for name in names(text))
    inside = sorted(map(sys.intern, inside_names(text)))
    return (*found, "", *inside) if found or inside else ()


def split_names(said: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and the capitalised words inside a sentence of a :func:`turn_names` tuple.

    Examples:
        >>> split_names(turn_names("Met Zainab on Monday")), split_names(())
        ((('zainab',), ('monday', 'zainab')), ((), ()))
    """
    if not said:
        return (), ()
    end = said.index("")
    return said[:end], said[end + 1 :]


class TurnNames:
    """The :func:`turn_names` of episodes, by memory id, worked out as a keyword index writes
    their rows: a follower of the index (:attr:`~ucma_core.storage.keywords.KeywordIndex.followers`)
    that forgets a row's names when the row is rewritten or deleted, so it never answers with
    the names of a text the index no longer holds. At most ``capacity`` ids and ``max_names``
    names over all of them are kept: past either, the oldest (in write order) are dropped down
    to three quarters of it. Callers serialise access (the memory's lock).

    Examples:
        >>> from ucma_core.storage.keywords import KeywordRow
        >>> kept = TurnNames(capacity=2)
        >>> kept.wrote([KeywordRow("a", "Met Zainab", None, None, None, "episodic", 0.0),
        ...             KeywordRow("f", "Zainab is a pilot", None, None, None, "semantic", 0.0)])
        >>> kept.get(["a", "f"])
        ([('zainab', '', 'zainab')], ['f'])
        >>> kept.forget(["a"])
        >>> kept.get(["a"])
        ([], ['a'])
    """

    def __init__(self, capacity: int = TURN_NAMES, max_names: int = TURN_NAME_SLOTS) -> None:
        self.capacity = max(0, int(capacity))
        self.max_names = max(0, int(max_names))
        self._names: dict[str, tuple[str, ...]] = {}
        self._held = 0

    def __len__(self) -> int:
        return len(self._names)

    @property
    def names_held(self) -> int:
        """How many names the kept turns hold in all (at most :attr:`max_names`)."""
        return self._held

    def wrote(self, rows: Sequence[KeywordRow]) -> None:
        """Work out the names of the episodes among ``rows`` (their rows are stored)."""
        if not self.capacity or not self.max_names:
            return
        held = self._names
        largest = max(1, self.max_names // 64)
        for row in rows:
            if row.memory_type == "episodic":
                said = turn_names(row.content)
                self._held -= len(held.pop(row.id, ()))
                if len(said) <= largest:
                    held[row.id] = said
                    self._held += len(said)
        if len(held) > self.capacity or self._held > self.max_names:
            # a plain dict (no per-entry links): the oldest go in one pass
            keep, budget = self.capacity - self.capacity // 4, self.max_names - self.max_names // 4
            kept, size = 0, 0
            for said in reversed(held.values()):
                if kept == keep or size + len(said) > budget:
                    break
                kept, size = kept + 1, size + len(said)
            self._names = dict(itertools.islice(held.items(), len(held) - kept, None))
            self._held = size

    def forget(self, ids: Iterable[str]) -> None:
        """Drop the names of ``ids`` (their rows are being rewritten or deleted)."""
        held = self._names
        for memory_id in ids:
            self._held -= len(held.pop(memory_id, ()))

    def clear(self) -> None:
        """Drop everything."""
        self._names = {}
        self._held = 0

    def get(self, ids: Iterable[str]) -> tuple[list[tuple[str, ...]], list[str]]:
        """The :func:`turn_names` held for ``ids``, and the ids whose names are not held."""
        held = self._names
        found: list[tuple[str, ...]] = []
        missing: list[str] = []
        for memory_id in ids:
            said = held.get(memory_id)
            if said is None:
                missing.append(memory_id)
            else:
                found.append(said)
        return found, missing


@dataclass(frozen=True)
class Census:
    """Who a scope knows. ``people`` maps case-folded names to how they are written (the
    participants and the user); ``mentions`` counts, per case-folded name, the sessions
    whose turns name it; ``sessions`` is how many sessions the scope has."""

    sessions: int = 0
    people: Mapping[str, str] = field(default_factory=dict)
    mentions: Mapping[str, int] = field(default_factory=dict)
    #: Names written capitalised inside a sentence somewhere ("my sister Zainab"); a word
    #: that is capitalised only where it opens a sentence ("Podcasts are …") is no name.
    proper: frozenset[str] = frozenset()

    def widespread(self, name: str) -> bool:
        """Whether the turns of most sessions name ``name``."""
        return (
            self.sessions >= WIDESPREAD_SESSIONS
            and self.mentions.get(name.casefold(), 0) >= WIDESPREAD * self.sessions
        )

    def known(self, name: str) -> bool:
        """Whether ``name`` is a person of the scope (a participant, the user, or widespread)."""
        return name.casefold() in self.people or self.widespread(name)

    def rare(self, name: str, *, inside: bool = False) -> bool:
        """Whether ``name`` is worth a second hop: not a known person, written capitalised
        inside a sentence somewhere (``inside``: in the text it was read from; not an ordinary
        word that opens sentences), named in few sessions."""
        folded = name.casefold()
        if folded in self.people or not (inside or folded in self.proper):
            return False
        return self.mentions.get(folded, 0) <= max(RARE_SESSIONS, RARE_SHARE * self.sessions)

    def names(self) -> frozenset[str]:
        """Every known person's name, case-folded (participants, the user, widespread names);
        worked out once per census (a census is cached per scope and never changes)."""
        return self._names

    @cached_property
    def _names(self) -> frozenset[str]:
        return frozenset(self.people) | {n for n in self.mentions if self.widespread(n)}


@dataclass(frozen=True)
class Named:
    """The known people a query names (as written in the memory, in query order) and the
    query without them (what is embedded)."""

    people: tuple[str, ...] = ()
    text: str = ""


def read_query(query: str, census: Census) -> Named:
    """The known people ``query`` names, and ``query`` without their names (and their
    possessive ``'s``). A name counts when it is capitalised in the query, or when the
    query has no capital letter at all ("what did caroline say"). A query that would be
    left with no word keeps its text."""
    lowercase = query == query.casefold()
    found: dict[str, None] = {}

    def drop(m: re.Match[str]) -> str:
        word = m.group(1)
        folded = word.casefold()
        if not (lowercase or word[0].isupper()) or not census.known(word):
            return m.group(0)
        found[census.people.get(folded, word)] = None
        return ""

    text = _SPACES.sub(" ", _NAME.sub(drop, query)).strip()
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    if not found or not re.search(r"\w", text):
        return Named(tuple(found), query)
    return Named(tuple(found), text)


@dataclass
class _Session:
    """What one session's turns say about people: its first ``size`` turns, from ``first``
    to ``last``."""

    size: int
    first: str
    last: str
    people: dict[str, str]
    mentions: set[str]
    proper: set[str]
    #: Whether the text of its turns was read (else only participants were counted).
    read: bool


class People:
    """The :class:`Census` of each scope, kept per session and recounted only where a session
    changed (reads the episode index, the graph, and the names of new turns: from
    :class:`TurnNames`, else from their keyword rows).

    A shared memory's keyword index has no followers (other processes write its texts): its
    turns' texts are always read."""

    def __init__(self, backend: Backend, episodic: EpisodicStore, *, turns: TurnNames | None = None) -> None:
        self._backend = backend
        self._episodic = episodic
        self._sessions: dict[tuple[object, ...], _Session] = {}
        self._census: dict[Scope, tuple[int, Census]] = {}
        #: The names of turns as they are written (a follower of the keyword index from now on).
        self._turns = TurnNames() if turns is None else turns
        followers = getattr(backend.keywords, "followers", None)
        if followers is not None:
            followers.append(self._turns)

    def rebind(self, episodic: EpisodicStore) -> None:
        """Read a rebuilt episode index from now on (after the stores were rebuilt)."""
        if episodic is not self._episodic:
            self._episodic = episodic
            self._census.clear()

    def census(self, scope: Scope) -> Census:
        """Who ``scope`` knows (cached until an episode enters or leaves the indexes)."""
        version = self._episodic.version
        cached = self._census.get(scope)
        if cached is not None and cached[0] == version:
            return cached[1]
        people: dict[str, str] = {}
        mentions: dict[str, int] = {}
        proper: set[str] = set()
        chains = self._episodic.chains(scope)
        budget, read = TEXT_TURNS, 0
        for key in sorted(chains, key=lambda key: chains[key][-1], reverse=True):  # newest first
            chain = chains[key]
            session = self._session(key, chain, budget > 0)
            budget -= len(chain)
            for folded, written in session.people.items():
                people.setdefault(folded, written)
            if session.read:
                read += 1
                for name in session.mentions:
                    mentions[name] = mentions.get(name, 0) + 1
                proper |= session.proper
        user = scope.user_id if isinstance(scope.user_id, str) else None
        for name in user_names(user):
            people.setdefault(name, name.capitalize())
        census = Census(sessions=read, people=people, mentions=mentions, proper=frozenset(proper))
        if len(self._census) > 256:  # many users: keep the cache bounded
            self._census.clear()
        self._census[scope] = (version, census)
        return census

    def _session(self, key: tuple[object, ...], chain: Sequence[tuple[float, str]], read: bool) -> _Session:
        """The people of one session (and with ``read``, the names its turns mention),
        counting only the turns added at its end since last time."""
        known = self._sessions.get(key)
        first, last = chain[0][1], chain[-1][1]
        same_start = known is not None and known.first == first and (known.read or not read)
        if known is not None and same_start and known.size == len(chain) and known.last == last:
            return known
        grown = known is not None and known.size < len(chain) and chain[known.size - 1][1] == known.last
        if known is not None and same_start and grown:
            start = known.size
        else:
            known, start = _Session(0, first, "", {}, set(), set(), read), 0
        ids = [memory_id for _, memory_id in chain[start:]]
        self._count(ids, known, ids[-TEXT_TURNS:] if known.read else [])
        known.size, known.last = len(chain), last
        if len(self._sessions) >= MAX_SESSIONS and key not in self._sessions:
            self._sessions.clear()  # a server with many users: recount rather than grow
        self._sessions[key] = known
        return known

    def _count(self, ids: Sequence[str], into: _Session, texts: Sequence[str]) -> None:
        graph = self._backend.graph
        for memory_id in ids:
            node = graph.node(memory_id)
            for person in (node.get("participants") if node is not None else None) or ():
                if isinstance(person, str) and person.strip():
                    into.people.setdefault(person.strip().casefold(), person.strip())
        if not texts:
            return
        # what a pass over each text finds (the names worked out when the turn was written) is
        # what one pass over the texts joined by ". " finds: a word's test reads the word and the
        # characters before it, and a text's first word opens a sentence either way (``_joined``)
        known, unread = self._turns.get(texts)
        for said in known:
            mentions, proper = split_names(said)
            into.mentions.update(mentions)
            into.proper.update(proper)
        if unread:
            joined = _joined(self._backend.texts(unread).values())  # fields not decoded
            # interned: the same few hundred names recur in every session's sets (one string each)
            into.mentions.update(sys.intern(name.casefold()) for name in names(joined))
            into.proper.update(map(sys.intern, inside_names(joined)))


def _joined(texts: Iterable[str]) -> str:
    """``texts`` as one text in which :func:`~ucma_core.retrieval.context.names` and
    :func:`inside_names` find what they find in each.

    Examples:
        >>> texts = ["Slept badly. Met Zainab", "Finally home", "  Honestly, Ana says hi"]
        >>> each = {n for t in texts for n in names(t)}, set().union(*map(inside_names, texts))
        >>> each == (set(names(_joined(texts))), inside_names(_joined(texts)))
        True
    """
    return ". ".join(texts)
