"""Python heap held by the in-memory graph per memory node (tracemalloc), no Chroma involved.

Run::

    python -m benchmarks.graph_memory [--n 100000]

Builds a :class:`~ucma_core.storage.graph.MemoryGraph` of ``n`` episode nodes with the
fields an ``observe`` sets and a ``followed_by`` edge between turns of a session (49 of
every 50), and prints the bytes traced per node (ids, records, adjacency, edges).
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from ucma_core.storage.graph import MemoryGraph


def measure(n: int) -> float:
    """Bytes of Python heap per node of a graph of ``n`` episodes."""
    graph = MemoryGraph()
    gc.collect()
    tracemalloc.start()
    previous = None
    with graph.batch():
        for i in range(n):
            node_id = f"{i:032x}"
            graph.put_node(
                node_id,
                {
                    "kind": "memory",
                    "memory_type": "episodic",
                    "user_id": f"user{i % 20}",
                    "session_id": f"s{i % 20}",
                    "timestamp": 1.7e9 + i,
                    "importance": 0.5,
                    "source": "conversation",
                    "stability": 1.0,
                    "last_access": 1.7e9 + i,
                    "access_count": 0,
                    "tier": "short_term",
                    "participants": [],
                },
            )
            if previous is not None and i % 50:
                graph.add_edge(previous, node_id, "followed_by", 1.0)
            previous = node_id
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return held / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    per_node = measure(args.n)
    print(f"graph of {args.n} episodes: {per_node * args.n / 2**20:.1f} MiB, {per_node:.0f} B per node")


if __name__ == "__main__":
    main()
