"""The memory graph: memories and entities as nodes, typed weighted edges between them.

The graph lives in memory as a networkx ``DiGraph``; every change is written to
the folder's :class:`~ucma_core.storage.journal.Journal` before it is applied, so
the graph on disk is always the graph in memory. Between a pair of nodes each
edge *type* has its own weight (``kinds``); the edge's ``weight`` is the largest.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any

import networkx as nx
import numpy as np

from ucma_core.errors import CorruptStoreError, InvalidInputError
from ucma_core.storage.journal import Entry, Journal, Op

__all__ = ["EdgeType", "MemoryGraph"]

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


class MemoryGraph:
    """Journaled, typed, weighted directed graph.

    Mutations may be grouped with :meth:`batch` so that one logical write (an
    observation with its links) is one journal append.
    """

    def __init__(self, journal: Journal | None = None, *, snapshot_every: int = 5000) -> None:
        self._g: nx.DiGraph = nx.DiGraph()
        self._journal = journal
        self._snapshot_every = snapshot_every
        self._pending: list[Op] | None = None
        self._pagerank: dict[str, float] | None = None

    # ------------------------------------------------------------------ loading
    def load(self, snapshot: Iterable[Entry] | None, ops: Iterable[Op]) -> None:
        """Rebuild from a snapshot's entries and the journal entries after it (no journaling)."""
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
                self._apply(op)
        except (TypeError, ValueError, KeyError, IndexError) as e:
            raise CorruptStoreError(f"graph snapshot or journal entry is malformed: {e}") from e

    def snapshot_entries(self) -> Iterator[Entry]:
        """The whole graph as snapshot entries, read from the live graph (no copy)."""
        for node_id, attrs in self._g.nodes(data=True):
            yield ["n", node_id, attrs]
        for u, v, data in self._g.edges(data=True):
            yield ["e", u, v, data["kinds"]]

    def compact(self) -> None:
        """Write a fresh snapshot and empty the journal."""
        if self._journal is not None:
            self._journal.write_snapshot(self.snapshot_entries())

    # ------------------------------------------------------------------ writing
    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group mutations into one journal append (nested batches join the outer one)."""
        if self._pending is not None:
            yield
            return
        self._pending = []
        try:
            yield
        finally:
            pending, self._pending = self._pending, None
            self._write(pending)

    def _emit(self, op: Op) -> None:
        self._apply(op)
        if self._pending is not None:
            self._pending.append(op)
        else:
            self._write([op])

    def _write(self, ops: list[Op]) -> None:
        if not ops or self._journal is None:
            return
        self._journal.append(ops)
        # a snapshot costs O(graph); waiting for at least as many entries as nodes keeps the
        # cost per write O(1) however large the graph grows
        if self._journal.entries_since_snapshot >= max(self._snapshot_every, self._g.number_of_nodes()):
            self.compact()

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
                data["kinds"][t] = w
                data["weight"] = max(data["kinds"].values())
            else:
                self._g.add_edge(u, v, kinds={t: w}, weight=w)
            self._pagerank = None
        elif kind == "ex":
            u, v, t = op["u"], op["v"], op["t"]
            if self._g.has_edge(u, v):
                kinds = self._g.edges[u, v]["kinds"]
                kinds.pop(t, None)
                if kinds:
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
