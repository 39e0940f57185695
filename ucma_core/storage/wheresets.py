"""Narrow searches without Chroma's filter: the ids a ``where`` clause admits, kept until a write.

A Chroma query with a ``where`` clause costs about the same whatever the clause admits:
Chroma evaluates the clause over the whole collection before it searches, so a search
inside one user's or one namespace's 100 memories of 1,000 costs 4-8 times an unfiltered
query of all 1,000. Searches repeat the same few clauses (a scope, a namespace tag), and
the set a clause admits changes only when the collection is written.

:class:`WhereSets` keeps, per clause, the ids Chroma listed for it, tagged with the
:class:`~ucma_core.storage.vectorcache.VectorCache` token taken before the read: a read
that overlapped a write is never kept. A write the vector store makes itself tells
:meth:`WhereSets.changed` the ids it writes and the metadata it sends, and each kept set
is brought up to date: a written record joins the sets whose clause admits its metadata
and leaves the others, a deleted one leaves every set
(:func:`~ucma_core.storage.clausematch.admits` answers "not known" for any clause shape
or value it cannot evaluate exactly, and a doubt drops the set; so does a write that
failed). So a user's sets stay through their own writes and everyone else's, and a
conversation that writes a turn between its searches keeps searching its kept set. Any
other move of the token (a cache clear on another collection, a sync with other workers,
a recovery) drops every set. A clause asked for a second time has its set listed (one
Chroma read) and kept; from then on a search inside a set no larger than the index's
search breadth (``ef_search``, 100 by default) is :func:`nearest_among` over the
members' cached vectors, with no Chroma call. Chroma's HNSW search visits every admitted
record of such a set, so its answer is exact and this one is the same (the same ids in
the same order, distances within float32 rounding); a larger kept set is searched by
Chroma inside its ids (``ids=`` rather than ``where=``: the same search over the same
admitted records, without evaluating the clause over the whole collection), so its
approximate answer stays as it was. A clause asked once is never listed from Chroma, except one
that adds one equality to a kept clause (a speaker's search inside a scope), listed at
its first ask (:meth:`WhereSets.narrows`); and the clause of one user
(:func:`owner_of`) is listed at its first ask from the memory's own index when the vector
store has one (:attr:`VectorStore.owned_by <ucma_core.storage.vectors.VectorStore.owned_by>`:
a folder's keyword index, one scan of its user column, no Chroma read). For the speaker, the user is known
to search again, and a listing of ids alone costs a fraction of the filtered query (the
kept members' metadata is never read: reading a few hundred packed records cost a
user's second search more than all its other Chroma calls).

Examples:
    >>> cache = VectorCache(8)
    >>> sets = WhereSets(cache, max_ids=2)
    >>> where = {"user_id": "ana"}
    >>> sets.get(where, cache.token()) is None, sets.wanted(where, cache.token())
    (True, False)
    >>> sets.wanted(where, cache.token())  # asked again with no write in between
    True
    >>> sets.put(where, ["a", "b"], cache.token())
    >>> sets.get(where, cache.token())
    ('a', 'b')
    >>> sets.changed(["z"], [{"user_id": "bob"}])  # another user's record
    >>> sets.get(where, cache.token())
    ('a', 'b')
    >>> sets.changed(["a"], None)  # a deletion
    >>> sets.changed(["c"], [{"user_id": "ana"}])  # a record the clause admits
    >>> sets.get(where, cache.token())
    ('b', 'c')
    >>> sets.changed(["d"], [{"user_id": "ana"}])  # one more than max_ids: too large to keep
    >>> sets.get(where, cache.token()) is None
    True
    >>> sets.put(where, ["a", "b"], cache.token())
    >>> cache.forget(["z"])  # a write the sets were not told of
    >>> sets.get(where, cache.token()) is None
    True
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from ucma_core.storage.clausematch import admits, names
from ucma_core.storage.vectorcache import VectorCache

__all__ = ["WhereSets", "nearest_among", "owner_of"]

#: A clause whose set holds more ids than this is searched by Chroma with the clause (and
#: not kept). A kept id costs 16 bytes (a slot in the set and one in its sorted members; the
#: str is the graph's own, see :attr:`VectorCache.shared_ids`), about 100 more when it is a copy.
MAX_IDS = 16_384
#: Clauses kept at a time (the least recently used go first).
MAX_SETS = 32
#: Ids kept in all sets together (1 to 8 MiB; the least recently used sets go first).
MAX_TOTAL_IDS = 65_536
#: A write whose records times the clauses known is larger than this drops every set
#: (checking each record against each clause would cost more than listing again).
_MAX_CHECKS = 4096
#: The mark of a clause known to admit more than ``max_ids`` (compared by identity: not the
#: empty tuple, which is a kept set of no ids).
_TOO_MANY: tuple[str, ...] = ("(more than max_ids)",)


def _key(where: Mapping[str, Any]) -> str:
    return json.dumps(where, sort_keys=True, default=str)


def _equality(clause: object) -> tuple[str, str | bool] | None:
    """``(key, value)`` of a clause ``{key: value}`` or ``{key: {"$eq": value}}`` on a str or
    bool value (the comparisons whose Chroma semantics are plain equality of one type)."""
    if not isinstance(clause, Mapping) or len(clause) != 1:
        return None
    ((name, value),) = clause.items()
    if isinstance(value, Mapping) and len(value) == 1 and "$eq" in value:
        value = value["$eq"]
    if name.startswith("$") or not isinstance(value, (str, bool)):
        return None
    return name, value


class WhereSets:
    """The ids each ``where`` clause admits, valid while ``cache``'s token is unchanged.

    Args:
        cache: the vector store's cache; its token moves on at every write. A cache of
            capacity 0 (turned off) turns this off too.
        max_ids: sets larger than this are not kept (:meth:`get` answers ``None``).
        max_sets: clauses kept at a time.
        max_total_ids: ids kept in all sets together (the least recently used sets go
            first; no set larger than this is kept).
    """

    def __init__(
        self,
        cache: VectorCache,
        *,
        max_ids: int = MAX_IDS,
        max_sets: int = MAX_SETS,
        max_total_ids: int = MAX_TOTAL_IDS,
    ) -> None:
        self._cache = cache
        self.max_ids = min(max_ids, max_total_ids) if cache.capacity else 0
        self._max_sets = max_sets
        self._max_total = max_total_ids
        self._lock = threading.Lock()
        self._token = cache.token()
        self._sets: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        # the kept sets' ids sorted, for :meth:`changed` (8 bytes an id; a frozenset costs 40-70)
        self._members: dict[str, tuple[str, ...]] = {}
        self._clauses: dict[str, Mapping[str, Any]] = {}  # each key's clause
        self._asked: set[str] = set()
        #: Whether the collection holds every record written so far: a memory shared through
        #: PostgreSQL clears it while other workers' vectors wait for their flush, and no new
        #: listing is kept then (it could miss them, and their flush is not a write seen here).
        self.settled = True
        #: Kept sets dropped by a write to them, and kept through a write to others (:meth:`changed`).
        self.dropped = 0
        self.kept = 0
        self.hits = 0

    @property
    def enabled(self) -> bool:
        return self.max_ids > 0

    def _current(self, token: int) -> bool:
        """Whether ``token`` is the cache's token now; stale sets are dropped on the way."""
        now = self._cache.token()
        if now != self._token:
            self._token = now
            self._drop_all()
        return token == now

    def _drop_all(self) -> None:
        self._sets.clear()
        self._members.clear()
        self._clauses.clear()
        self._asked.clear()

    def _drop(self, key: str) -> None:
        """Forget ``key``'s set, its clause and its ask (a write changed it in a way not known)."""
        self._sets.pop(key, None)
        self._members.pop(key, None)
        self._asked.discard(key)
        self._clauses.pop(key, None)
        self.dropped += 1

    def changed(
        self,
        ids: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None,
        *,
        partial: bool = False,
        vectors: bool = True,
        failed: bool = False,
    ) -> None:
        """A write of ``ids``: forget their cached vectors (``vectors``; a metadata update
        keeps them) and bring the kept sets up to date: each written record joins the sets
        whose clause admits its metadata (``metadatas``: the metadata written, ``None`` for
        a deletion; ``partial``: an update merged into the stored keys) and leaves the
        others; a set for which that is not known for certain is dropped. Call it before
        and after the write reaches Chroma (see :mod:`~ucma_core.storage.vectorcache`);
        after a write that ``failed`` (what Chroma holds is not known), every set it may
        have changed is dropped."""
        with self._lock:
            accounted = self._cache.token() == self._token
            self._cache.forget(ids if vectors else ())
            if not accounted:
                return  # a write not told of came first: the next read drops every set
            self._token = self._cache.token()
            if not self._sets and not self._asked:
                return
            metas = list(metadatas or ())
            if metas and len(metas) != len(ids):
                metas = metas * len(ids) if len(metas) == 1 else []
            if len(ids) * len(self._clauses) > _MAX_CHECKS or (metadatas is not None and not metas and ids):
                self.dropped += len(self._sets)  # a bulk write: checking costs more than listing again
                self._drop_all()
                return
            deleted = metadatas is None
            written = frozenset(ids)
            for key in list(self._clauses):
                # a deleted record is admitted by no clause
                joins = (
                    dict.fromkeys(ids, False) if deleted else _joins(self._clauses[key], ids, metas, partial)
                )
                if failed or joins is None:
                    self._drop_if_changed(key, written, joins)
                elif key in self._sets:
                    self._update(key, joins, deleted)

    def _drop_if_changed(self, key: str, written: frozenset[str], joins: dict[str, bool] | None) -> None:
        """Drop ``key``'s set (and its ask) if the write may have changed it."""
        members = self._members.get(key)
        hit = joins is None or any(joins.values()) or (members is not None and _holds_any(members, written))
        if hit or (members is None and key in self._sets):
            self._drop(key)
        elif key in self._sets:
            self.kept += 1

    def _update(self, key: str, joins: dict[str, bool], deleted: bool) -> None:
        """Bring ``key``'s kept set up to date with a write: ``joins`` says, for each written
        id whose membership the write decides, whether its record is admitted now."""
        members = self._members.get(key)
        if members is None:  # a set too large to keep: a deletion may shrink it
            if deleted and joins:
                self._drop(key)
            return
        gone = {i for i, admitted in joins.items() if not admitted and _holds(members, i)}
        new = [i for i, admitted in joins.items() if admitted and not _holds(members, i)]  # in write order
        if gone or new:
            share = self._cache.shared_ids
            if share is not None:
                new = [share(memory_id) for memory_id in new]
            ids = tuple(i for i in self._sets[key] if i not in gone) + tuple(new)
            small = len(ids) <= self.max_ids
            self._sets[key] = ids if small else _TOO_MANY
            if small:
                self._members[key] = tuple(sorted(ids))
            else:
                self._members.pop(key, None)
            self._evict()
        self.kept += 1

    def get(self, where: Mapping[str, Any], token: int) -> tuple[str, ...] | None:
        """The ids ``where`` admits, if they were listed at ``token`` and it is still current
        (``None`` also for a set larger than ``max_ids``)."""
        key = _key(where)
        with self._lock:
            if not self._current(token):
                return None
            found = self._sets.get(key)
            if found is None or found is _TOO_MANY:
                return None
            self._sets.move_to_end(key)
            self.hits += 1
            return found

    def size(self, where: Mapping[str, Any]) -> int | None:
        """How many ids the kept set of ``where`` holds now (``None``: none kept); not an answer."""
        with self._lock:
            self._current(self._token)
            found = self._sets.get(_key(where))
            return None if found is None or found is _TOO_MANY else len(found)

    def stats(self) -> dict[str, int]:
        """Sets kept now, answers from them so far (:meth:`get`), and the kept sets writes
        dropped and kept (:meth:`changed`)."""
        with self._lock:
            self._current(self._token)  # sets a write not told of made stale are not counted
            sets = sum(1 for ids in self._sets.values() if ids is not _TOO_MANY)
            return {"sets": sets, "hits": self.hits, "dropped": self.dropped, "kept": self.kept}

    def wanted(self, where: Mapping[str, Any], token: int) -> bool:
        """Whether listing ``where`` is worth a Chroma read: it was asked before at this
        token (and is not known to be larger than ``max_ids``). Records this ask."""
        key = _key(where)
        with self._lock:
            if not self.enabled or not self._current(token) or self._sets.get(key) is _TOO_MANY:
                return False
            if key in self._asked:
                return True
            if len(self._asked) >= 4 * self._max_sets:
                for old in self._asked:
                    if old not in self._sets:
                        self._clauses.pop(old, None)
                self._asked.clear()
            self._asked.add(key)
            self._clauses[key] = where
            return False

    def put(self, where: Mapping[str, Any], ids: Sequence[str], token: int) -> None:
        """Keep the ids Chroma listed for ``where`` (read after ``token`` was taken); nothing
        if a write happened since, or while not :attr:`settled`."""
        if not self.enabled or not self.settled:
            return
        key = _key(where)
        with self._lock:
            if not self._current(token):
                return
            small = len(ids) <= self.max_ids
            share = self._cache.shared_ids
            if small and share is not None:
                ids = [share(memory_id) for memory_id in ids]  # not a copy of each id
            self._sets[key] = tuple(ids) if small else _TOO_MANY
            self._clauses[key] = where
            if small:
                self._members[key] = tuple(sorted(ids))
            else:
                self._members.pop(key, None)
            self._sets.move_to_end(key)
            self._evict()

    def _evict(self) -> None:
        """Drop the least recently used sets beyond ``max_sets`` sets or ``max_total_ids`` ids."""
        total = sum(len(ids) for ids in self._sets.values() if ids is not _TOO_MANY)
        while len(self._sets) > self._max_sets or (total > self._max_total and len(self._sets) > 1):
            gone, ids = self._sets.popitem(last=False)
            total -= 0 if ids is _TOO_MANY else len(ids)
            self._members.pop(gone, None)
            if gone not in self._asked:
                self._clauses.pop(gone, None)

    def listable(self, where: Mapping[str, Any], token: int) -> bool:
        """Whether a listing of ``where`` read now would be kept: sets are kept (and
        :attr:`settled`), ``token`` is current, and ``where`` is not known to admit more
        than ``max_ids``."""
        with self._lock:
            if not self.enabled or not self.settled or not self._current(token):
                return False
            return self._sets.get(_key(where)) is not _TOO_MANY

    def narrows(self, where: Mapping[str, Any], token: int) -> bool:
        """Whether ``where`` is ``{"$and": [*clauses, last]}`` with the set of ``clauses`` kept
        at ``token`` and ``last`` one equality on a str or bool (a participant, a tag, a
        session): worth listing at its first ask, since searches inside ``clauses`` repeat.

        Examples:
            >>> cache = VectorCache(8)
            >>> sets = WhereSets(cache)
            >>> sets.put({"user_id": "ana"}, ["a", "b"], cache.token())
            >>> sets.narrows({"$and": [{"user_id": "ana"}, {"p:rui": True}]}, cache.token())
            True
            >>> sets.narrows({"$and": [{"user_id": "bob"}, {"p:rui": True}]}, cache.token())  # not kept
            False
        """
        clauses = where.get("$and") if len(where) == 1 else None
        if not isinstance(clauses, list) or len(clauses) < 2 or _equality(clauses[-1]) is None:
            return False
        base = _key(clauses[0] if len(clauses) == 2 else {"$and": clauses[:-1]})
        with self._lock:
            if not self.enabled or not self.settled or not self._current(token):
                return False  # (while not settled, a listing would not be kept)
            found = self._sets.get(base)
            return found is not None and found is not _TOO_MANY


def owner_of(where: Mapping[str, Any]) -> str | None:
    """The user of a clause that admits exactly one user's records (``{"user_id": user}``,
    or with ``$eq``), else ``None``.

    Examples:
        >>> owner_of({"user_id": "ana"}), owner_of({"user_id": {"$eq": ""}})
        ('ana', '')
        >>> owner_of({"$and": [{"user_id": "ana"}, {"memory_type": "episodic"}]}) is None
        True
    """
    found = _equality(where)
    if found is None or found[0] != "user_id" or not isinstance(found[1], str):
        return None
    return found[1]


def _joins(
    clause: Mapping[str, Any], ids: Sequence[str], metas: Sequence[Mapping[str, Any]], partial: bool
) -> dict[str, bool] | None:
    """For each of ``ids`` written with the matching one of ``metas``, whether ``clause``
    admits the record now (absent: an update of none of the clause's keys, which leaves the
    record as it was); ``None`` if that is not known for one of them."""
    read = names(clause) if partial else None
    joins: dict[str, bool] = {}
    for i, meta in zip(ids, metas, strict=True):
        if read is not None and read.isdisjoint(meta):
            continue
        answer = admits(clause, meta, partial=partial)
        if answer is None:
            return None
        joins[i] = answer
    return joins


def _holds(members: tuple[str, ...], memory_id: str) -> bool:
    """Whether the sorted ``members`` hold ``memory_id``."""
    at = bisect_left(members, memory_id)
    return at < len(members) and members[at] == memory_id


def _holds_any(members: tuple[str, ...], ids: AbstractSet[str]) -> bool:
    """Whether the sorted ``members`` hold one of ``ids``.

    Examples:
        >>> _holds_any(("a", "c", "e"), {"b", "e"}), _holds_any(("a", "c"), {"b"})
        (True, False)
    """
    if len(ids) * 8 >= len(members):  # many ids: one pass over the members
        return any(member in ids for member in members)
    return any(_holds(members, memory_id) for memory_id in ids)


def nearest_among(
    query: Sequence[float], vectors: Mapping[str, np.ndarray], n: int
) -> list[tuple[str, float, np.ndarray]]:
    """``(id, cosine distance, vector)`` of the ``n`` of ``vectors`` nearest to ``query``,
    nearest first (exact; ties keep the order of ``vectors``), as Chroma's cosine space
    measures it: ``1 - cos`` (a zero vector is at distance 1).

    Examples:
        >>> near = nearest_among([1.0, 0.0], {"a": np.array([0.0, 1.0]), "b": np.array([2.0, 0.1])}, 1)
        >>> [(i, round(d, 4)) for i, d, _ in near]
        [('b', 0.0012)]
    """
    if n <= 0 or not vectors:
        return []
    ids = list(vectors)
    # as Chroma's cosine space computes it: both sides scaled to length 1 in float32, 1 - dot
    matrix = _unit(np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids]))
    q = _unit(np.asarray(query, dtype=np.float32)[None, :])[0]
    distances = np.float32(1.0) - (matrix * q).sum(axis=1, dtype=np.float32)  # not ``@``: no BLAS threads
    order = np.argsort(distances, kind="stable")[:n]
    return [(ids[k], float(distances[k]), vectors[ids[k]]) for k in order]


def _unit(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 in float32 (a zero row stays zero), as hnswlib does."""
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float32)) + np.float32(1e-30)
    unit: np.ndarray = (rows * (np.float32(1.0) / norms)[:, None]).astype(np.float32)
    return unit
