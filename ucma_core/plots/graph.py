"""The memory graph around one memory or entity, as a list of nodes and edges and as a drawing.

:func:`neighbourhood` walks :meth:`Memory.edges <ucma_core.Memory.edges>` outward from a
memory (or from the entity node of a name, found through
:meth:`~ucma_core.Memory.facts_about`) up to ``hops`` steps and ``max_nodes`` nodes;
:func:`plot_memory_graph` draws it with networkx's spring layout.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import networkx as nx

from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.plots.figure import PALETTE, new_figure, save, short
from ucma_core.records import Fact
from ucma_core.scope import ANY, ScopeId
from ucma_core.stores.semantic import normalise

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ucma_core.memory import Memory

__all__ = ["Neighbourhood", "neighbourhood", "plot_memory_graph"]

Edge = tuple[str, str, str, float]

_EDGE_COLOURS = {
    "followed_by": "#4C78A8",
    "consolidates": "#72B7B2",
    "derived_from": "#F58518",
    "subject": "#9D755D",
    "object": "#BAB0AC",
    "supersedes": "#E45756",
    "contradicts": "#FF9DA6",
    "similar_to": "#54A24B",
    "supports": "#B279A2",
    "triggered_by": "#EECA3B",
}


@dataclass
class Neighbourhood:
    """Nodes and edges around ``center``.

    ``nodes`` maps an id to ``(kind, label)``: ``kind`` is a memory type value or
    ``"entity"``; ``label`` is a short form of the content (or the entity's name).
    ``edges`` are ``(from, to, type, weight)`` between nodes of ``nodes``.
    """

    center: str
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)


def _entity_node(memory: Memory, name: str, user_id: ScopeId) -> str:
    facts = memory.facts_about(name, user_id=user_id, include_superseded=True)
    wanted = normalise(name)
    for fact in facts:
        for role, value in (("subject", fact.subject), ("object", fact.object)):
            if normalise(value) == wanted:
                for _, target, _, _ in memory.edges(fact.id, edge_type=role, direction="out"):
                    return target
    raise MemoryNotFoundError(f"no facts about {name!r} in this scope, so no entity to draw")


def _entity_name(memory: Memory, entity: str) -> str:
    for fact_id, _, role, _ in memory.edges(entity, direction="in"):
        fact = memory.get(fact_id)
        if isinstance(fact, Fact):
            return fact.subject if role == "subject" else fact.object
    return entity


def neighbourhood(
    memory: Memory,
    memory_id: str | None = None,
    *,
    entity: str | None = None,
    user_id: ScopeId = ANY,
    hops: int = 1,
    max_nodes: int = 40,
) -> Neighbourhood:
    """The graph within ``hops`` edges of a memory (``memory_id``) or of the entity called
    ``entity`` (in ``user_id``'s facts), at most ``max_nodes`` nodes, nearest first."""
    if (memory_id is None) == (entity is None):
        raise InvalidInputError("give either memory_id or entity")
    if isinstance(hops, bool) or not isinstance(hops, int) or not 1 <= hops <= 5:
        raise InvalidInputError("hops must be an int in 1..5")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise InvalidInputError("max_nodes must be an int >= 1")
    if entity is not None:
        center = _entity_node(memory, entity, user_id)
    else:
        assert memory_id is not None
        if memory.get(memory_id) is None:
            raise MemoryNotFoundError(f"no memory with id {memory_id!r}")
        center = memory_id
    order = [center]
    frontier = [center]
    edges: set[Edge] = set()
    for _ in range(hops):
        reached = []
        for node in frontier:
            for edge in memory.edges(node):
                other = edge[1] if edge[0] == node else edge[0]
                if other not in order and len(order) < max_nodes:
                    order.append(other)
                    reached.append(other)
                if other in order:
                    edges.add(edge)
        frontier = reached
    result = Neighbourhood(center=center, edges=sorted(edges))
    for node in order:
        record = memory.get(node)
        if record is not None:
            result.nodes[node] = (record.memory_type.value, short(record.content, 28))
        else:
            result.nodes[node] = ("entity", short(_entity_name(memory, node), 28))
    return result


def plot_memory_graph(
    memory: Memory,
    memory_id: str | None = None,
    path: str | os.PathLike[str] | None = None,
    *,
    entity: str | None = None,
    user_id: ScopeId = ANY,
    hops: int = 1,
    max_nodes: int = 40,
) -> Figure:
    """Draw :func:`neighbourhood`: nodes coloured by memory type, edges by type, the
    centre ringed in black; written to ``path`` if given."""
    hood = neighbourhood(memory, memory_id, entity=entity, user_id=user_id, hops=hops, max_nodes=max_nodes)
    graph = nx.DiGraph()
    graph.add_nodes_from(hood.nodes)
    for u, v, _, weight in hood.edges:
        graph.add_edge(u, v, weight=max(weight, graph.edges[u, v]["weight"] if graph.has_edge(u, v) else 0.0))
    pos = nx.spring_layout(graph.to_undirected(), seed=7, weight="weight")
    figure = new_figure(9.0, 7.0)
    ax = figure.add_subplot()
    from matplotlib.lines import Line2D

    used_edges: dict[str, str] = {}
    for u, v, kind, _ in hood.edges:
        colour = _EDGE_COLOURS.get(kind, "#C0C0C0")
        used_edges[kind] = colour
        ax.annotate(
            "",
            xy=pos[v],
            xytext=pos[u],
            arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.0, "shrinkA": 7, "shrinkB": 7},
        )
    kinds = {node: kind for node, (kind, _) in hood.nodes.items()}
    for node, (kind, label) in hood.nodes.items():
        x, y = pos[node]
        centre = node == hood.center
        ax.scatter(
            [x],
            [y],
            s=260 if centre else 110,
            color=PALETTE.get(kind, "#C0C0C0"),
            edgecolors="black" if centre else "white",
            linewidths=2.0 if centre else 0.8,
            zorder=3,
        )
        ax.text(x, y - 0.07, label, fontsize=7, ha="center", va="top", zorder=4)
    handles = [
        Line2D([], [], marker="o", linestyle="", color=PALETTE[k], label=k)
        for k in PALETTE
        if k in set(kinds.values())
    ]
    handles += [Line2D([], [], color=c, label=k.replace("_", " ")) for k, c in sorted(used_edges.items())]
    ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(1.0, 1.0))
    title = hood.nodes[hood.center][1]
    ax.set_title(f"Memory graph around “{title}” ({len(hood.nodes)} nodes, {len(hood.edges)} edges)")
    ax.set_axis_off()
    ax.margins(0.12)
    save(figure, path)
    return figure
