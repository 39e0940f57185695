"""The memory graph: memories and entities as nodes, typed weighted edges between them.

The graph lives in memory as a networkx ``DiGraph``. Changes are grouped into
transactions (:meth:`MemoryGraph.batch`): each change is applied at once and
remembered with what it replaced; at the end of the outermost batch the changes
are appended to the folder's :class:`~ucma_core.storage.journal.Journal` with a
commit mark. If anything in the batch raises — including the journal append on a
full disk — the changes are undone and the callbacks registered with
:meth:`MemoryGraph.on_abort` undo what the batch did to Chroma, so an operation
that raised has stored nothing. Between a pair of nodes each edge *type* has its
own weight (``kinds``); the edge's ``weight`` is the largest.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, TypeVar

import networkx as nx
import numpy as np

from ucma_core.errors import CorruptStoreError, InvalidInputError, StorageError
from ucma_core.storage.journal import CONTROL_OPS, Entry, Intent, Journal, Op
from ucma_core.storage.nodes import NodeRecord, changes_class, make_node

__all__ = ["DEFERRED_FACTOR", "EdgeType", "MemoryGraph", "TransactionHooks"]

#: How many times the usual journal length a commit inside
#: :meth:`MemoryGraph.defer_compaction` lets wait before it writes a snapshot.
DEFERRED_FACTOR = 4

_MISSING = object()
_R = TypeVar("_R", bound=NodeRecord)
#: Edge weights repeat (1.0, a handful of link strengths): one float object per value.
_WEIGHTS: dict[float, float] = {}


def _weight(w: float) -> float:
    if len(_WEIGHTS) > 4096:
        return w
    return _WEIGHTS.setdefault(w, w)


class _NoAttrs(dict[str, Any]):
    """The attribute dictionary networkx gets for every node: one shared, always empty
    object (a node's fields live in its :class:`~ucma_core.storage.nodes.NodeRecord`)."""

    def update(self, *args: Any, **kwargs: Any) -> None:
        if any(args) or kwargs:
            raise TypeError("memory graph node fields live in MemoryGraph records, not networkx")


_NO_ATTRS = _NoAttrs()


class _Edge:
    """The data of one edge: its strongest type's weight and every type's weight.

    Most edges have one type, kept in two slots; a second type adds a small dict. An edge
    is never changed once made (:func:`_edge_of` makes a new one), so the edges with one
    type and the same weight (every ``followed_by`` turn of a session) share one object.
    """

    __slots__ = ("kind", "more", "weight")

    def __init__(self, kind: str = "", weight: float = 0.0, more: dict[str, float] | None = None) -> None:
        self.kind = kind
        self.weight = weight
        self.more = more

    def update(self, attrs: dict[str, Any]) -> None:  # networkx's add_edge calls it
        if attrs:
            raise TypeError("memory graph edges are changed through MemoryGraph")

    @property
    def kinds(self) -> dict[str, float]:
        out = {self.kind: self.weight} if self.kind else {}
        if self.more:
            out.update(self.more)
        return out


#: The one-type edges, one object per (type, weight): most edges of a memory graph are alike.
_SHARED_EDGES: dict[tuple[str, float], _Edge] = {}


def _edge_of(kinds: dict[str, float]) -> _Edge:
    """The edge holding ``kinds`` (a shared object when it has one type)."""
    items = sorted(kinds.items(), key=lambda kw: -kw[1])
    kind, weight = sys.intern(items[0][0]), _weight(float(items[0][1]))
    if len(items) > 1:
        return _Edge(kind, weight, {sys.intern(k): _weight(float(w)) for k, w in items[1:]})
    edge = _SHARED_EDGES.get((kind, weight))
    if edge is None:
        edge = _Edge(kind, weight)
        if len(_SHARED_EDGES) < 4096:
            _SHARED_EDGES[(kind, weight)] = edge
    return edge


_NONE = object()


class _Neighbours(MutableMapping[str, _Edge]):
    """One node's successors or predecessors for networkx: most memory nodes have none or
    one (the next turn of their session), which three slots hold; more go to a dict."""

    __slots__ = ("_edge", "_key", "_many")

    def __init__(self) -> None:
        self._key: Any = _NONE
        self._edge: _Edge | None = None
        self._many: dict[str, _Edge] | None = None

    def __getitem__(self, key: str) -> _Edge:
        if self._many is not None:
            return self._many[key]
        if self._key is not _NONE and self._key == key:
            return self._edge  # type: ignore[return-value]
        raise KeyError(key)

    def __setitem__(self, key: str, edge: _Edge) -> None:
        if self._many is not None:
            self._many[key] = edge
        elif self._key is _NONE or self._key == key:
            self._key, self._edge = key, edge
        else:
            self._many = {self._key: self._edge, key: edge}  # type: ignore[dict-item]
            self._key, self._edge = _NONE, None

    def __delitem__(self, key: str) -> None:
        if self._many is not None:
            del self._many[key]
            if len(self._many) == 1:
                (self._key, self._edge), self._many = next(iter(self._many.items())), None
        elif self._key is not _NONE and self._key == key:
            self._key, self._edge = _NONE, None
        else:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if self._many is not None:
            return key in self._many
        return self._key is not _NONE and self._key == key

    def __iter__(self) -> Iterator[str]:
        if self._many is not None:
            return iter(self._many)
        return iter(() if self._key is _NONE else (self._key,))

    def __len__(self) -> int:
        if self._many is not None:
            return len(self._many)
        return 0 if self._key is _NONE else 1

    def weights(self) -> list[tuple[str, float]]:
        """``(neighbour, weight)`` of every edge, in the order networkx iterates them."""
        if self._many is not None:
            return [(key, edge.weight) for key, edge in self._many.items()]
        return [] if self._key is _NONE else [(self._key, self._edge.weight)]  # type: ignore[union-attr]


class _DiGraph(nx.DiGraph):  # type: ignore[misc]
    """networkx's ``DiGraph`` with compact per-node parts: no attribute dict per node, a
    slotted neighbour map and edge data. Its node map is the :class:`MemoryGraph`'s map of
    records (one dict for both: the record is put there before the node is added)."""

    node_attr_dict_factory = staticmethod(lambda: _NO_ATTRS)
    adjlist_inner_dict_factory = _Neighbours
    edge_attr_dict_factory = _Edge

    def __init__(self, records: dict[str, NodeRecord]) -> None:
        super().__init__()
        self._node = records

    def add_node(self, node_for_adding: str, **attr: Any) -> None:
        if attr:
            raise TypeError("memory graph node fields live in MemoryGraph records, not networkx")
        if node_for_adding not in self._succ:
            self._succ[node_for_adding] = _Neighbours()
            self._pred[node_for_adding] = _Neighbours()

    def put_edge(self, u: str, v: str, edge: _Edge) -> None:
        """Make ``edge`` the data of the edge from ``u`` to ``v`` (both nodes exist); pass
        the nodes' own id strings, so a new edge keys its maps with them."""
        self._succ[u][v] = edge
        self._pred[v][u] = edge
        nx._clear_cache(self)

    def weighted_neighbours(self, node: str) -> list[tuple[str, float]]:
        """``(neighbour, weight)`` of the edges out of ``node``, then of those into it (the
        order of ``out_edges`` then ``in_edges``, without building their views)."""
        return [*self._succ[node].weights(), *self._pred[node].weights()]


class EdgeType(str, Enum):
    """Relations between memories (and between facts and entities)."""

    DERIVED_FROM = "derived_from"
    FOLLOWED_BY = "followed_by"
    SIMILAR_TO = "similar_to"
    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    CONSOLIDATES = "consolidates"
    CAUSED_BY = "caused_by"
    SUPERSEDES = "supersedes"
    SUBJECT = "subject"
    OBJECT = "object"
    MENTIONS = "mentions"
    TRIGGERED_BY = "triggered_by"
    RELATED_TO = "related_to"

    @classmethod
    def parse(cls, value: EdgeType | str) -> EdgeType:
        try:
            return value if isinstance(value, cls) else cls(str(value))
        except ValueError as e:
            known = ", ".join(m.value for m in cls)
            raise InvalidInputError(f"unknown edge type {value!r}; expected one of: {known}") from e


class TransactionHooks(Protocol):
    """What the owner of the graph (the folder's backend) does around transactions."""

    def before_transaction(self) -> None:
        """Called before a transaction starts (may raise to refuse it)."""

    def compaction_allowed(self) -> bool:
        """Whether the journal may be folded into a snapshot now."""

    def rollback_failed(self, pending: list[Callable[[], None]]) -> None:
        """Undo callbacks that failed (and those after them): the owner runs them again before
        the next transaction starts."""

    def unfinished(self, intent: Intent) -> None:
        """A transaction past its point of no return failed: the owner finishes its deletions."""

    def reverted(self) -> None:
        """Graph changes were undone: indexes kept outside the graph must be rebuilt."""


@dataclass
class _Transaction:
    ops: list[Op] = field(default_factory=list)
    undo: list[tuple[Any, ...]] = field(default_factory=list)
    intent: Intent = field(default_factory=Intent)
    begun: bool = False
    #: Chroma deleted records in this transaction: it cannot be undone, only finished.
    no_return: bool = False
    scrub: bool = False
    aborts: list[Callable[[], None]] = field(default_factory=list)
    #: How many of ``ops`` an intent line already carries.
    recorded: int = 0
    #: Control lines written with the commit mark (``"p"``: records waiting for Chroma).
    extra: list[Op] = field(default_factory=list)


class MemoryGraph:
    """Journaled, typed, weighted directed graph with all-or-nothing transactions.

    Mutations may be grouped with :meth:`batch` so that one logical write (an
    observation with its links) is one transaction: one commit in the journal.
    """

    def __init__(
        self,
        journal: Journal | None = None,
        *,
        snapshot_every: int = 5000,
        hooks: TransactionHooks | None = None,
    ) -> None:
        #: Each node's typed record (networkx holds the structure, these the fields); also
        #: networkx's node map (removing a node from ``_g`` removes its record).
        self._nodes: dict[str, NodeRecord] = {}
        self._g: nx.DiGraph = _DiGraph(self._nodes)
        self._journal = journal
        self._snapshot_every = snapshot_every
        self._hooks = hooks
        self._txn: _Transaction | None = None
        #: Changes of a transaction that passed its point of no return but could not be
        #: journaled (a full disk): written with the next commit or snapshot.
        self._carry: list[Op] = []
        self._hold = 0
        self._defer = 0
        self._next_compaction = 0
        self._pagerank: dict[str, float] | None = None

    # ------------------------------------------------------------------ loading
    def load(self, snapshot: Iterable[Entry] | None, ops: Iterable[Op], *, tolerant: bool = False) -> None:
        """Rebuild from a snapshot's entries and the journal entries after it (no journaling).

        ``tolerant`` (a repair after lost entries) skips changes to nodes that do not exist
        instead of creating bare ones.
        """
        try:
            for entry in snapshot or ():
                if entry[0] == "n":
                    _, node_id, attrs = entry
                    self._add_node(node_id, attrs)
                elif entry[0] == "e":
                    _, u, v, kinds = entry
                    self._set_edge(u, v, dict(kinds))
                else:
                    raise ValueError(f"unknown snapshot entry {entry[0]!r}")
            for op in ops:
                if tolerant and not self._applies(op):
                    continue
                self._apply(op)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
            raise CorruptStoreError(f"graph snapshot or journal entry is malformed: {e}") from e

    def _applies(self, op: Op) -> bool:
        kind = op["op"]
        if kind == "n":
            return op["id"] in self._g or "kind" in op["a"]
        if kind in ("e", "ex"):
            return op["u"] in self._g and op["v"] in self._g
        return True

    def clear(self) -> None:
        """Forget every node and edge (before loading another snapshot)."""
        self._nodes = {}
        self._g = _DiGraph(self._nodes)
        self._pagerank = None

    def snapshot_entries(self) -> Iterator[Entry]:
        """The whole graph as snapshot entries, read from the live graph (one node at a time)."""
        for node_id, record in self._nodes.items():
            yield ["n", node_id, record.to_dict()]
        for u, v, data in self._g.edges(data=True):
            yield ["e", u, v, data.kinds]

    def compact(self, *, keep_previous: bool = True) -> None:
        """Write a fresh snapshot and empty the journal (changes waiting to be journaled
        are in the snapshot, so they are written too)."""
        if self._txn is not None:
            raise StorageError("cannot write a snapshot in the middle of a transaction")
        if self._journal is not None:
            self._journal.write_snapshot(self.snapshot_entries(), keep_previous=keep_previous)
            self._carry = []

    @contextmanager
    def hold_compaction(self) -> Iterator[None]:
        """No automatic snapshot inside this block (a deletion waiting for its scrub)."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1

    @contextmanager
    def defer_compaction(self) -> Iterator[None]:
        """Commits inside this block write an automatic snapshot only when
        :data:`DEFERRED_FACTOR` times as many journal entries as usual wait (a background
        write of access marks: the snapshot, O(graph), is left to the next ordinary write
        instead of holding the memory's lock while a reader waits)."""
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group mutations into one transaction (nested batches join the outer one).

        The changes are committed to the journal when the outermost batch ends; if the
        block or the commit raises, they are undone (see the module docstring).
        """
        if self._txn is not None:
            yield
            return
        if self._hooks is not None:
            self._hooks.before_transaction()
        txn = _Transaction()
        self._txn = txn
        try:
            yield
            self._txn = None
            self._commit(txn)
        except BaseException:
            self._txn = None
            self._abort(txn)
            raise
        finally:
            self._txn = None

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    def intend(
        self,
        *,
        add: Iterable[str] = (),
        rep: dict[str, list[Any]] | None = None,
        delete: Iterable[str] = (),
        scrub: bool = False,
    ) -> None:
        """Record, durably, what the current transaction is about to do to Chroma (before it
        does it), so a crash in between can be undone or finished on the next open."""
        txn = self._require_txn()
        step = Intent(add=list(add), rep=dict(rep or {}), delete=list(delete), scrub=scrub)
        if not step:
            return
        # a deletion is finished after a crash: so are the changes made before it (not for a
        # scrubbed deletion, whose point is that the journal holds nothing more of the records)
        if step.delete and not step.scrub:
            step.ops = [{k: v for k, v in op.items() if k != "seq"} for op in txn.ops[txn.recorded :]]
            txn.recorded = len(txn.ops)
        if self._journal is not None:
            self._journal.append([step.line("i" if txn.begun else "b")])
        txn.begun = True
        txn.intent.merge(step.line("i"))

    def point_of_no_return(self) -> None:
        """The current transaction deleted records from Chroma: from here on it is finished,
        not undone, if something fails (the changes wait for the next commit)."""
        self._require_txn().no_return = True

    def mark_scrub(self) -> None:
        """Commit a scrub-pending mark with the current transaction (see :class:`Replay`)."""
        self._require_txn().scrub = True

    def commit_with(self, op: Op) -> None:
        """Write the control line ``op`` with the current transaction's commit mark (it counts
        only if the transaction commits)."""
        self._require_txn().extra.append(op)

    def on_abort(self, undo: Callable[[], None]) -> None:
        """Run ``undo`` if the current transaction is rolled back (last registered runs first)."""
        self._require_txn().aborts.append(undo)

    def _require_txn(self) -> _Transaction:
        if self._txn is None:
            raise StorageError("this change must run inside graph.batch()")
        return self._txn

    def _commit(self, txn: _Transaction) -> None:
        ops = self._carry + txn.ops
        if self._journal is None or not (ops or txn.begun or txn.scrub):
            return
        lines = [*ops, *txn.extra, *([{"op": "s"}] if txn.scrub else []), {"op": "c"}]
        self._journal.append(lines)
        self._carry = []
        self._maybe_compact()

    def _abort(self, txn: _Transaction) -> None:
        if txn.no_return:
            self._carry.extend([*txn.ops, *txn.extra])
            if self._hooks is not None:
                self._hooks.unfinished(txn.intent)
            return
        for record in reversed(txn.undo):
            self._revert(record)
        self._pagerank = None
        if txn.undo and self._hooks is not None:
            self._hooks.reverted()
        undos = list(reversed(txn.aborts))
        for n, undo in enumerate(undos):
            try:
                undo()
            except BaseException:  # the owner retries before the next transaction
                if self._hooks is None:
                    raise
                self._hooks.rollback_failed(undos[n:])
                return
        if txn.begun and self._journal is not None:
            with contextlib.suppress(StorageError):  # without it the next "b" closes the transaction
                self._journal.append([{"op": "a"}])

    def _maybe_compact(self) -> None:
        journal = self._journal
        if journal is None or self._hold or self._carry:
            return
        # a snapshot costs O(graph); waiting for at least as many entries as nodes keeps the
        # cost per write O(1) however large the graph grows
        due = max(self._snapshot_every, self._g.number_of_nodes(), self._next_compaction)
        if self._defer:
            due *= DEFERRED_FACTOR
        if journal.entries_since_snapshot < due:
            return
        if self._hooks is not None and not self._hooks.compaction_allowed():
            return
        try:
            self.compact()
            self._next_compaction = 0
        except StorageError:  # the commit stands; try again after as many entries again
            self._next_compaction = journal.entries_since_snapshot + self._snapshot_every

    # ------------------------------------------------------------------ changes
    def _emit(self, op: Op) -> None:
        txn = self._txn
        if txn is None:
            with self.batch():
                self._emit(op)
            return
        txn.undo.append(self._inverse(op))
        self._apply(op)
        txn.ops.append(op)

    def _inverse(self, op: Op) -> tuple[Any, ...]:
        kind = op["op"]
        g = self._g
        if kind == "n":
            node = op["id"]
            record = self._nodes.get(node)
            if record is None:
                return ("drop", node)
            if changes_class(record, op["a"]):
                return ("attrs", node, record.to_dict())
            return ("fields", node, {k: record.get(k, _MISSING) for k in op["a"]})
        if kind == "x":
            node = op["id"]
            if node not in g:
                return ("none",)
            edges = [(u, v, d.kinds) for u, v, d in g.out_edges(node, data=True)]
            edges += [(u, v, d.kinds) for u, v, d in g.in_edges(node, data=True)]
            return ("node", node, self._nodes[node].to_dict(), edges)
        u, v = op["u"], op["v"]
        if g.has_edge(u, v):
            return ("edge", u, v, g.succ[u][v].kinds)
        return ("noedge", u, v)

    def _revert(self, record: tuple[Any, ...]) -> None:
        kind = record[0]
        g = self._g
        if kind == "fields":
            _, node, previous = record
            self._nodes[node].restore(previous, _MISSING)
        elif kind == "attrs":
            _, node, attrs = record
            ident = self._nodes[node].ident
            self._nodes[node] = make_node(attrs)
            self._nodes[node].ident = ident
        elif kind == "drop":
            if record[1] in g:
                g.remove_node(record[1])  # and its record
        elif kind == "node":
            _, node, attrs, edges = record
            self._add_node(node, attrs)
            for u, v, kinds in edges:
                self._set_edge(u, v, kinds)
        elif kind == "edge":
            _, u, v, kinds = record
            self._set_edge(u, v, kinds)
        elif kind == "noedge":
            _, u, v = record
            if g.has_edge(u, v):
                g.remove_edge(u, v)

    def _add_node(self, node_id: str, attrs: dict[str, Any]) -> None:
        record = make_node(attrs)
        record.ident = node_id
        self._nodes[node_id] = record
        self._g.add_node(node_id)

    def _set_edge(self, u: str, v: str, kinds: dict[str, float]) -> None:
        # the nodes' own id strings, not equal copies (a snapshot or journal line has its own)
        self._g.put_edge(self._nodes[u].ident, self._nodes[v].ident, _edge_of(kinds))

    def _apply(self, op: Op) -> None:
        kind = op["op"]
        if kind == "n":
            node_id, attrs = op["id"], op["a"]
            record = self._nodes.get(node_id)
            if record is None:
                self._add_node(node_id, attrs)
            elif changes_class(record, attrs):
                self._nodes[node_id] = make_node({**record.to_dict(), **attrs})
                self._nodes[node_id].ident = record.ident
            else:
                record.update(attrs)
        elif kind == "x":
            if op["id"] in self._g:
                self._g.remove_node(op["id"])  # and its record
                self._pagerank = None
        elif kind == "e":
            u, v, t, w = op["u"], op["v"], op["t"], float(op["w"])
            kinds = self._g.succ[u][v].kinds if self._g.has_edge(u, v) else {}
            kinds[t] = w
            self._set_edge(u, v, kinds)
            self._pagerank = None
        elif kind == "ex":
            u, v, t = op["u"], op["v"], op["t"]
            if self._g.has_edge(u, v):
                kinds = {k: w for k, w in self._g.succ[u][v].kinds.items() if k != t}
                if kinds:
                    self._set_edge(u, v, kinds)
                else:
                    self._g.remove_edge(u, v)
                self._pagerank = None
        else:
            raise CorruptStoreError(f"unknown journal operation {kind!r}")

    def redo(self, ops: Iterable[Op], *, skip: Iterable[str] = ()) -> int:
        """Apply, in one transaction, the graph changes an interrupted deletion recorded with
        its intent (:attr:`~ucma_core.storage.journal.Intent.ops`), leaving out those that
        touch ``skip`` (the records being deleted) or a node that no longer exists. Returns
        how many were applied."""
        skipped = set(skip)
        done = 0
        with self.batch():
            for op in ops:
                touched = {op.get("id"), op.get("u"), op.get("v")} - {None}
                if op.get("op") in CONTROL_OPS or touched & skipped or not self._applies(op):
                    continue
                self._emit({k: v for k, v in op.items() if k != "seq"})
                done += 1
        return done

    def put_node(self, node_id: str, attrs: dict[str, Any]) -> None:
        """Create ``node_id`` or merge ``attrs`` into it."""
        self._emit({"op": "n", "id": node_id, "a": attrs})

    def remove_node(self, node_id: str) -> None:
        """Remove a node and every edge touching it."""
        if node_id in self._g:
            self._emit({"op": "x", "id": node_id})

    def add_edge(self, u: str, v: str, edge_type: EdgeType | str, weight: float = 1.0) -> None:
        """Add (or re-weight) the ``edge_type`` edge from ``u`` to ``v``; both must exist."""
        t = EdgeType.parse(edge_type).value
        if u not in self._g or v not in self._g:
            missing = u if u not in self._g else v
            raise InvalidInputError(f"cannot link: no memory or entity with id {missing!r}")
        if u == v:
            raise InvalidInputError("cannot link a memory to itself")
        if not 0.0 < weight <= 1.0:
            raise InvalidInputError(f"edge weight must be in (0, 1], got {weight!r}")
        self._emit({"op": "e", "u": u, "v": v, "t": t, "w": float(weight)})

    def remove_edge(self, u: str, v: str, edge_type: EdgeType | str) -> None:
        t = EdgeType.parse(edge_type).value
        if self._g.has_edge(u, v) and t in self._g.succ[u][v].kinds:
            self._emit({"op": "ex", "u": u, "v": v, "t": t})

    # ------------------------------------------------------------------ reading
    def __contains__(self, node_id: object) -> bool:
        return node_id in self._g

    def __len__(self) -> int:
        return int(self._g.number_of_nodes())

    def node(self, node_id: str) -> NodeRecord | None:
        """The node's typed record (live: change it only through :meth:`put_node`), or ``None``."""
        return self._nodes.get(node_id)

    def ident(self, node_id: str) -> str:
        """The graph's own string object for ``node_id`` if it is a node, else ``node_id``: a
        cache that keeps ids read from a store (a new string each, about 80 bytes) keeps this
        one instead and holds no copy of its own
        (:attr:`~ucma_core.storage.vectorcache.VectorCache.shared_ids`)."""
        record = self._nodes.get(node_id)
        return node_id if record is None else record.ident

    def node_as(self, node_id: str, cls: type[_R]) -> _R | None:
        """The node's record if it is a ``cls`` (e.g. :class:`~ucma_core.storage.nodes.FactNode`
        for a fact, :class:`~ucma_core.storage.nodes.MemoryNode` for any memory), else ``None``."""
        record = self._nodes.get(node_id)
        return record if isinstance(record, cls) else None

    def nodes(self) -> Iterator[tuple[str, NodeRecord]]:
        """Every ``(id, record)``, in insertion order."""
        yield from self._nodes.items()

    def edge_count(self) -> int:
        return int(self._g.number_of_edges())

    def edges_of(
        self, node_id: str, edge_type: EdgeType | str | None = None, *, direction: str = "both"
    ) -> list[tuple[str, str, str, float]]:
        """``(u, v, type, weight)`` for edges touching ``node_id``.

        ``direction`` is ``"out"``, ``"in"`` or ``"both"``.
        """
        if node_id not in self._g:
            return []
        t = EdgeType.parse(edge_type).value if edge_type is not None else None
        out: list[tuple[str, str, str, float]] = []
        sources = []
        if direction in ("out", "both"):
            sources.append(self._g.out_edges(node_id, data=True))
        if direction in ("in", "both"):
            sources.append(self._g.in_edges(node_id, data=True))
        for edges in sources:
            for u, v, data in edges:
                for kind, w in data.kinds.items():
                    if t is None or kind == t:
                        out.append((u, v, kind, w))
        return out

    def expand(
        self,
        seeds: dict[str, float],
        *,
        max_hops: int,
        max_nodes: int,
        max_fanout: int,
        min_weight: float = 0.0,
        decay: float = 0.5,
    ) -> dict[str, tuple[int, float]]:
        """Bounded spreading activation from ``seeds`` (id → activation).

        Follows edges in both directions, at most ``max_fanout`` strongest edges per
        node and ``max_hops`` hops, and stops after ``max_nodes`` reached nodes.
        Returns ``{node_id: (hops, activation)}`` for the nodes reached; a seed appears
        only if activation reached it from another node. Activation is
        ``parent * weight * decay`` per hop.
        """
        reached: dict[str, tuple[int, float]] = {}
        frontier = {n: a for n, a in seeds.items() if n in self._g}
        for hop in range(1, max_hops + 1):
            nxt: dict[str, float] = {}
            for node, act in sorted(frontier.items(), key=lambda kv: -kv[1]):
                nbrs = [(n, w) for n, w in self._g.weighted_neighbours(node) if w >= min_weight and n != node]
                nbrs.sort(key=lambda nw: -nw[1])
                for nbr, w in nbrs[:max_fanout]:
                    a = act * w * decay
                    if a > nxt.get(nbr, 0.0) and a > reached.get(nbr, (0, 0.0))[1]:
                        nxt[nbr] = a
            for n, a in nxt.items():
                if n not in reached and len(reached) >= max_nodes:
                    continue
                reached[n] = (reached[n][0] if n in reached else hop, max(a, reached.get(n, (0, 0.0))[1]))
            frontier = {n: a for n, a in nxt.items() if n in reached}
            if not frontier or len(reached) >= max_nodes:
                break
        return reached

    def pagerank(self, *, damping: float = 0.85, iterations: int = 50, tol: float = 1e-8) -> dict[str, float]:
        """Weighted PageRank (power iteration, dangling mass spread evenly); cached until edges change.

        Scores are relative to the average node: 1.0 is average, 5.0 five times as central.
        """
        if self._pagerank is not None:
            return self._pagerank
        nodes = list(self._g.nodes)
        n = len(nodes)
        if n == 0:
            self._pagerank = {}
            return self._pagerank
        index = {node: i for i, node in enumerate(nodes)}
        src = np.fromiter(
            (index[u] for u, _ in self._g.edges), dtype=np.int64, count=self._g.number_of_edges()
        )
        dst = np.fromiter(
            (index[v] for _, v in self._g.edges), dtype=np.int64, count=self._g.number_of_edges()
        )
        w = np.fromiter(
            (d.weight for _, _, d in self._g.edges(data=True)),
            dtype=np.float64,
            count=self._g.number_of_edges(),
        )
        out_w = np.bincount(src, weights=w, minlength=n)
        dangling = out_w == 0
        norm_w = w / np.where(out_w[src] > 0, out_w[src], 1.0)
        rank = np.full(n, 1.0 / n)
        for _ in range(iterations):
            spread = np.bincount(dst, weights=rank[src] * norm_w, minlength=n)
            new = (1 - damping) / n + damping * (spread + rank[dangling].sum() / n)
            done = np.abs(new - rank).sum() < tol
            rank = new
            if done:
                break
        mean = float(rank.mean())
        self._pagerank = {node: float(rank[i] / mean) for node, i in index.items()}
        return self._pagerank
