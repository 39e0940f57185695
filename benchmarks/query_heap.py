"""Where a memory's Python heap grows while it answers queries, line by line (tracemalloc).

Run::

    python -m benchmarks.query_heap [--n 10000] [--queries 200] [--top 25] [--no-trace]

Does what the ``full`` phase of :mod:`benchmarks.throughput` does on the UCMA side (the
same texts, users and queries, the hashing embedder): ``observe_many`` of all but the last
``min(N / 2, 2000)`` items in batches of 256, ``observe`` of those one by one, ``flush()``,
then the queries (``remember(q, k=10, user_id=...)``). After each stage it prints the
process's resident memory (``VmRSS``, and ``ru_maxrss`` as peak) and the Python heap
tracemalloc traces; after the queries, the lines whose allocations grew most during them
(the caches queries fill) and ``Memory.stats()``'s cache counters (hit rates).
tracemalloc roughly doubles the process's memory and slows it several times: the RSS
figures it prints are not those of :mod:`benchmarks.throughput` (``--no-trace`` gives
those, without the line table), but the traced sizes are exact and the same run to run.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
import tracemalloc
from pathlib import Path

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

from .chat_corpus import SEED, make_items, make_queries


def _rss_mib() -> tuple[float, float]:
    """(VmRSS now, peak ``ru_maxrss``) in MiB."""
    now = 0.0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
    return now, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _stage(name: str, trace: bool) -> tracemalloc.Snapshot | None:
    rss, peak = _rss_mib()
    line = f"{name:>12}: RSS {rss:6.1f} MiB, peak {peak:6.1f} MiB"
    if not trace:
        print(line, flush=True)
        return None
    snapshot = tracemalloc.take_snapshot()
    traced = sum(s.size for s in snapshot.statistics("filename")) / 2**20
    print(f"{line}, Python heap traced {traced:6.1f} MiB", flush=True)
    return snapshot


def run(n: int, queries: int, top: int, trace: bool) -> None:
    items = make_items(n, SEED)
    asked = make_queries(items, queries, SEED, SEED + 1)
    embedder = HashingEmbedder()
    embedder.embed(["warm-up"])
    folder = Path(tempfile.mkdtemp(prefix="ucma-query-heap-"))
    if trace:
        tracemalloc.start()
    try:
        with Memory(folder, embedder=embedder, config=MemoryConfig(importance_threshold=0.0)) as mem:
            _stage("opened", trace)
            single = min(n // 2, 2000)
            for start in range(0, n - single, 256):
                batch = items[start : min(start + 256, n - single)]
                mem.observe_many([{"content": it.text, "user_id": it.user_id} for it in batch])
            _stage("bulk", trace)
            for it in items[n - single :]:
                mem.observe(it.text, user_id=it.user_id)
            mem.flush()
            before = _stage("one by one", trace)
            took = []
            for text, user, _ in asked:
                t0 = time.perf_counter()
                mem.remember(text, k=10, user_id=user)
                took.append(time.perf_counter() - t0)
            after = _stage("queries", trace)
            stats = mem.stats()
            for name in ("embedding_cache", "vector_cache", "where_sets"):
                print(f"{name}: {stats[name]}")
            took.sort()
            print(f"remember p50 {took[len(took) // 2] * 1e3:.1f} ms (timings are inflated by tracemalloc)")
            if before is not None and after is not None:
                print(f"the {top} lines whose allocations grew most during the queries:")
                ours = [tracemalloc.Filter(False, tracemalloc.__file__)]  # not the tracing's own
                grown = after.filter_traces(ours).compare_to(before.filter_traces(ours), "lineno")
                for stat in grown[:top]:
                    print(f"  {str(stat)[:200]}")
    finally:
        if trace:
            tracemalloc.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--no-trace", action="store_true", help="RSS only, at full speed")
    args = parser.parse_args()
    run(args.n, args.queries, args.top, not args.no_trace)


if __name__ == "__main__":
    main()
