"""The per-call cost of a shared memory's lock round trip, two checkouts side by side.

Run: ``python -m benchmarks.pg_call_cost --code /path/to/other/checkout [--calls 300] [--rounds 3]``.
It starts a throwaway PostgreSQL 15 cluster and a ``chroma run`` server (as the tests do)
and, alternating between this checkout and ``--code`` for ``--rounds`` rounds, runs one
worker process per round that observes 50 memories, then times ``--calls`` calls of
``get`` (the write lock and the change feed: one round trip) and of ``forget`` of a new
memory (a delete). Prints p50 / p95 per call for each checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _work(url: str, port: int, calls: int) -> dict[str, list[float]]:
    from ucma_core import ChromaConfig, Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=port))
    out: dict[str, list[float]] = {"get": [], "forget": []}
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        ids = [mem.observe(f"Note {n} about the harbour crane", user_id="ana", keep=True) for n in range(50)]
        for n in range(calls):
            start = time.perf_counter()
            mem.get(str(ids[n % len(ids)]))
            out["get"].append(1000 * (time.perf_counter() - start))
        for n in range(calls // 10):
            doomed = mem.observe(f"Doomed note {n} about the crane", user_id="ana", keep=True)
            start = time.perf_counter()
            mem.forget(str(doomed))
            out["forget"].append(1000 * (time.perf_counter() - start))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--code", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", nargs=3)
    args = parser.parse_args()
    if args.worker:
        url, port, calls = args.worker
        print(json.dumps(_work(url, int(port), int(calls))))
        return
    sys.path.insert(0, str(ROOT))
    from tests.servers import throwaway_servers

    found: dict[str, dict[str, list[float]]] = {}
    with throwaway_servers(prefix="ucma-bench-") as servers:
        for _ in range(args.rounds):
            for label, code in (("this checkout", ROOT), (f"--code {args.code}", args.code)):
                url = servers.url(f"c{uuid.uuid4().hex[:8]}")
                env = {**os.environ, "PYTHONPATH": str(code)}
                worker = ["--code", str(code), "--worker", url, str(servers.chroma_port), str(args.calls)]
                done = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), *worker],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                for name, values in json.loads(done.stdout.splitlines()[-1]).items():
                    found.setdefault(label, {}).setdefault(name, []).extend(values)
    print("\n| code | get p50 ms | get p95 ms | forget p50 ms | forget p95 ms |")
    print("|---|---:|---:|---:|---:|")
    for label, values in found.items():
        get, forget = sorted(values["get"]), sorted(values["forget"])
        print(
            f"| {label} | {statistics.median(get):.2f} | {get[int(0.95 * len(get))]:.2f} | "
            f"{statistics.median(forget):.2f} | {forget[int(0.95 * len(forget))]:.2f} |"
        )


if __name__ == "__main__":
    main()
