"""Re-keying and repairing a shared memory while another worker serves.

Run: ``python -m benchmarks.pg_rebuild [--records 2000] [--ops 40]``. It starts a throwaway
PostgreSQL 15 cluster and a ``chroma run`` server (as the tests do), fills one shared
memory with ``--records`` memories (hashing embedder), and measures, in the same run,
one serving worker's ``observe`` and ``remember`` latency (p50 / p95) while idle,
during ``Memory.rekey()`` in a second worker, and during ``Memory.repair(url)``, plus
how long each rebuild took and how many calls the serving worker made meanwhile.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _serve(mem: Any, until: Callable[[int], bool]) -> tuple[list[float], list[float]]:
    """Alternate observe / remember until ``until(calls)``; their latencies in ms."""
    observes: list[float] = []
    remembers: list[float] = []
    n = 0
    while not until(n):
        start = time.perf_counter()
        mem.observe(f"Serving note {uuid.uuid4().hex[:6]} about the harbour crane", user_id="ana", keep=True)
        observes.append(1000 * (time.perf_counter() - start))
        start = time.perf_counter()
        mem.remember("harbour crane note", user_id="ana", k=5)
        remembers.append(1000 * (time.perf_counter() - start))
        n += 1
    return observes, remembers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--ops", type=int, default=40, help="observe+remember pairs while idle")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.servers import HOST, throwaway_servers
    from ucma_core import ChromaConfig, Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    with throwaway_servers(prefix="ucma-bench-") as servers:
        url = servers.url(f"b{uuid.uuid4().hex[:8]}")
        config = MemoryConfig(chroma=ChromaConfig(host=HOST, port=servers.chroma_port))
        rows: list[tuple[str, float, int, list[float], list[float]]] = []
        with (
            Memory(url, embedder=HashingEmbedder(), config=config) as serving,
            Memory(url, embedder=HashingEmbedder(), config=config) as other,
        ):
            for start in range(0, args.records, 500):
                items = [
                    f"Record {n} of the harbour ledger: crate {n % 97} moved to bay {n % 13}"
                    for n in range(start, min(args.records, start + 500))
                ]
                serving.observe_many(items, user_id="ana", tags=["ledger"], keep=True)
            serving.flush()
            idle = _serve(serving, lambda n: n >= args.ops)
            rows.append(("idle", 0.0, args.ops, *idle))
            for name, run in (
                ("during mem.rekey()", lambda: other.rekey()),
                (
                    "during Memory.repair(url)",
                    lambda: Memory.repair(url, embedder=HashingEmbedder(), config=config),
                ),
            ):
                done = threading.Event()
                took: list[float] = []

                def rebuild(
                    run: Callable[[], object] = run, done: threading.Event = done, took: list[float] = took
                ) -> None:
                    start = time.perf_counter()
                    try:
                        run()
                    finally:
                        took.append(time.perf_counter() - start)
                        done.set()

                thread = threading.Thread(target=rebuild)
                thread.start()
                during = _serve(serving, lambda n, done=done: done.is_set())
                thread.join()
                rows.append((name, took[0], len(during[0]), *during))
            assert serving.verify().ok
    print(f"\n{args.records} records, hashing embedder; one serving worker alternates observe / remember\n")
    print("| serving worker | rebuild s | calls served | observe p50 ms | p95 | remember p50 ms | p95 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, seconds, calls, obs, rem in rows:
        print(
            f"| {name} | {seconds:.1f} | {calls} | {statistics.median(obs):.1f} | {_pct(obs, 0.95):.1f} | "
            f"{statistics.median(rem):.1f} | {_pct(rem, 0.95):.1f} |"
        )


if __name__ == "__main__":
    main()
