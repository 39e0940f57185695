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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

import networkx as nx
import numpy as np

from ucma_core.errors import CorruptStoreError, InvalidInputError, StorageError
from ucma_core.storage.journal import Entry, Intent, Journal, Op

__all__ = ["EdgeType", "MemoryGraph", "TransactionHooks"]

#: Node attributes whose few distinct values repeat across many nodes: one string object
#: each (``sys.intern``) instead of one per node, which matters at 100k nodes.
_REPEATED = ("kind", "memory_type", "user_id", "agent_id", "session_id", "source", "tier", "status")


def _shared(attrs: dict[str, Any]) -> dict[str, Any]:
    for key in _REPEATED:
        value = attrs.get(key)
        if type(value) is str:
            attrs[key] = sys.intern(value)
    return attrs


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
        self._g: nx.DiGraph = nx.DiGraph()
        self._journal = journal
        self._snapshot_every = snapshot_every
        self._hooks = hooks
        self._txn: _Transaction | None = None
        #: Changes of a transaction that passed its point of no return but could not be
        #: journaled (a full disk): written with the next commit or snapshot.
        self._carry: list[Op] = []
        self._hold = 0
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
                    self._g.add_node(node_id, **_shared(attrs))
                elif entry[0] == "e":
                    _, u, v, kinds = entry
                    self._g.add_edge(u, v, kinds=dict(kinds), weight=max(kinds.values()))
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
        self._g = nx.DiGraph()
        self._pagerank = None

    def snapshot_entries(self) -> Iterator[Entry]:
        """The whole graph as snapshot entries, read from the live graph (no copy)."""
        for node_id, attrs in self._g.nodes(data=True):
            yield ["n", node_id, attrs]
        for u, v, data in self._g.edges(data=True):
            yield ["e", u, v, data["kinds"]]

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
        lines = [*ops, *([{"op": "s"}] if txn.scrub else []), {"op": "c"}]
        self._journal.append(lines)
        self._carry = []
        self._maybe_compact()

    def _abort(self, txn: _Transaction) -> None:
        if txn.no_return:
            self._carry.extend(txn.ops)
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
            return ("attrs", node, dict(g.nodes[node])) if node in g else ("drop", node)
        if kind == "x":
            node = op["id"]
            if node not in g:
                return ("none",)
            edges = [(u, v, dict(d["kinds"])) for u, v, d in g.out_edges(node, data=True)]
            edges += [(u, v, dict(d["kinds"])) for u, v, d in g.in_edges(node, data=True)]
            return ("node", node, dict(g.nodes[node]), edges)
        u, v = op["u"], op["v"]
        if g.has_edge(u, v):
            return ("edge", u, v, dict(g.edges[u, v]["kinds"]))
        return ("noedge", u, v)

    def _revert(self, record: tuple[Any, ...]) -> None:
        kind = record[0]
        g = self._g
        if kind == "attrs":
            _, node, attrs = record
            g.nodes[node].clear()
            g.nodes[node].update(attrs)
        elif kind == "drop":
            if record[1] in g:
                g.remove_node(record[1])
        elif kind == "node":
            _, node, attrs, edges = record
            g.add_node(node, **attrs)
            for u, v, kinds in edges:
                g.add_edge(u, v, kinds=kinds, weight=max(kinds.values()))
        elif kind == "edge":
            _, u, v, kinds = record
            g.add_edge(u, v, kinds=kinds, weight=max(kinds.values()))
        elif kind == "noedge":
            _, u, v = record
            if g.has_edge(u, v):
                g.remove_edge(u, v)

    def _apply(self, op: Op) -> None:
        kind = op["op"]
        if kind == "n":
            if op["id"] in self._g:
                self._g.nodes[op["id"]].update(op["a"])
            else:
                self._g.add_node(op["id"], **_shared(op["a"]))
        elif kind == "x":
            if op["id"] in self._g:
                self._g.remove_node(op["id"])
                self._pagerank = None
        elif kind == "e":
            u, v, t, w = op["u"], op["v"], op["t"], float(op["w"])
            if self._g.has_edge(u, v):
                data = self._g.edges[u, v]
                data["kinds"] = {**data["kinds"], t: w}
                data["weight"] = max(data["kinds"].values())
            else:
                self._g.add_edge(u, v, kinds={t: w}, weight=w)
            self._pagerank = None
        elif kind == "ex":
            u, v, t = op["u"], op["v"], op["t"]
            if self._g.has_edge(u, v):
                kinds = {k: w for k, w in self._g.edges[u, v]["kinds"].items() if k != t}
                if kinds:
                    self._g.edges[u, v]["kinds"] = kinds
                    self._g.edges[u, v]["weight"] = max(kinds.values())
                else:
                    self._g.remove_edge(u, v)
                self._pagerank = None
        else:
            raise CorruptStoreError(f"unknown journal operation {kind!r}")

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
        if self._g.has_edge(u, v) and t in self._g.edges[u, v]["kinds"]:
            self._emit({"op": "ex", "u": u, "v": v, "t": t})

    # ------------------------------------------------------------------ reading
    def __contains__(self, node_id: object) -> bool:
        return node_id in self._g

    def __len__(self) -> int:
        return int(self._g.number_of_nodes())

    def node(self, node_id: str) -> dict[str, Any] | None:
        """The node's attributes (live dict: do not mutate), or ``None``."""
        if node_id in self._g:
            attrs: dict[str, Any] = self._g.nodes[node_id]
            return attrs
        return None

    def nodes(self) -> Iterator[tuple[str, dict[str, Any]]]:
        yield from self._g.nodes(data=True)

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
                for kind, w in data["kinds"].items():
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
                nbrs = [(v, d["weight"]) for _, v, d in self._g.out_edges(node, data=True)]
                nbrs += [(u, d["weight"]) for u, _, d in self._g.in_edges(node, data=True)]
                nbrs = [(n, w) for n, w in nbrs if w >= min_weight and n != node]
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
            (d["weight"] for _, _, d in self._g.edges(data=True)),
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
