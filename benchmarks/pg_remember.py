"""``remember`` latency of a shared memory against a memory folder, measured in fine turns.

Run: ``python -m benchmarks.pg_remember [--workers 4] [--rounds 12] [--observes 4]
[--remembers 10] [--embed-ms 50] [--against PATH]``.

:mod:`benchmarks.workers` runs each setup once, one after the other: on a shared machine
the load moves between setups and their ratio with it. Here every setup keeps its
processes open and they take turns, round after round: in each round the embedded
folder (one process), then ``--workers`` processes on one PostgreSQL memory with this
checkout's ``ucma_core`` (and, with ``--against``, as many on another memory with that
checkout's) each make ``--observes`` observes then ``--remembers`` remembers, the
processes of one setup all at once. The first round warms up (not counted). It prints
each setup's ``remember`` p50 / p95 over every counted call and the ratio of its p50 to
the folder's, overall and per round (median), with the load average. Servers: a throwaway
PostgreSQL 15 cluster and ``chroma run`` server, as the tests use; the hashing embedder
behind ``--embed-ms`` per call (an embedding API's round trip).
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_TOPICS = ["harbour", "garden", "invoice", "flight", "recipe", "concert", "doctor", "laptop"]


def _serve(target: str, chroma_port: int, user: str) -> None:
    """A worker: opens the memory, then per ``round O R`` line makes O observes and R
    remembers and prints their latencies (seconds) as JSON."""
    from benchmarks.workers import _RemoteEmbedder
    from ucma_core import ChromaConfig, Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    delay = float(os.environ.get("UCMA_BENCH_EMBED_MS", "0")) / 1000
    config = (
        MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=chroma_port))
        if chroma_port
        else MemoryConfig()
    )
    embedder = _RemoteEmbedder(delay) if delay else HashingEmbedder()
    n = 0
    with Memory(target, embedder=embedder, config=config) as mem:
        print("ready", flush=True)
        for line in sys.stdin:
            if not line.startswith("round"):
                break
            _, observes, remembers = line.split()
            rem: list[float] = []
            for _ in range(int(observes)):
                mem.observe(f"{user} noted item {n} about the {_TOPICS[n % 8]} on day {n % 31}", user_id=user)
                n += 1
            for r in range(int(remembers)):
                start = time.perf_counter()
                mem.remember(f"what about the {_TOPICS[r % 8]}", user_id=user, k=5)
                rem.append(time.perf_counter() - start)
            print(json.dumps(rem), flush=True)


class _Setup:
    def __init__(self, name: str, target: str, chroma_port: int, workers: int, code: Path) -> None:
        self.name = name
        self.procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),  # this script, the checkout's ucma_core
                    "--serve",
                    target,
                    str(chroma_port),
                    f"user{i}",
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=code,
                env={**os.environ, "PYTHONPATH": str(code)},
            )
            for i in range(workers)
        ]
        for proc in self.procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        self.rounds: list[list[float]] = []

    def round(self, observes: int, remembers: int) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write(f"round {observes} {remembers}\n")
            proc.stdin.flush()
        found: list[float] = []
        for proc in self.procs:
            assert proc.stdout is not None
            found.extend(json.loads(proc.stdout.readline()))
        self.rounds.append(found)

    def close(self) -> None:
        for proc in self.procs:
            proc.communicate("quit\n", timeout=120)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--observes", type=int, default=4)
    parser.add_argument("--remembers", type=int, default=10)
    parser.add_argument("--embed-ms", type=float, default=50)
    parser.add_argument("--against", type=Path, help="a second checkout, measured on its own memory in turns")
    parser.add_argument("--serve", nargs=3)
    args = parser.parse_args()
    if args.embed_ms:
        os.environ["UCMA_BENCH_EMBED_MS"] = str(args.embed_ms)
    if args.serve:
        sys.path.insert(1, str(ROOT))  # benchmarks.workers' embedder (PYTHONPATH: the checkout's core)
        target, port, user = args.serve
        _serve(target, int(port), user)
        return
    sys.path.insert(0, str(ROOT))
    from tests.servers import throwaway_servers

    loads = [os.getloadavg()[0]]
    with throwaway_servers(prefix="ucma-bench-") as servers:

        def url() -> str:
            return servers.url(f"r{uuid.uuid4().hex[:8]}")

        port = servers.chroma_port
        setups = [_Setup("folder (embedded Chroma), 1 process", str(servers.base / "folder"), 0, 1, ROOT)]
        label = "" if args.against is None else " (this checkout)"
        many = f"{args.workers} worker{'s' if args.workers > 1 else ''}"
        setups.append(_Setup(f"PostgreSQL, {many}{label}", url(), port, args.workers, ROOT))
        if args.against is not None:
            name = f"PostgreSQL, {many} (--against)"
            setups.append(_Setup(name, url(), port, args.workers, args.against.resolve()))
        try:
            for _ in range(args.rounds + 1):
                for setup in setups:
                    setup.round(args.observes, args.remembers)
                loads.append(os.getloadavg()[0])
        finally:
            for setup in setups:
                setup.close()
    folder = setups[0].rounds[1:]
    print(
        f"\n{args.rounds} rounds (after one warm-up) of {args.observes} observes then {args.remembers} "
        f"remembers per process, hashing embedder behind {args.embed_ms:g} ms per call; load average "
        f"{min(loads):.1f}–{max(loads):.1f}\n"
    )
    print("| setup | remember p50 ms | p95 ms | p50 × folder | per-round p50 × folder, median (min–max) |")
    print("|---|---:|---:|---:|---|")
    base = _pct([x for r in folder for x in r], 0.5)
    for setup in setups:
        counted = setup.rounds[1:]
        calls: list[Any] = [x for r in counted for x in r]
        p50 = _pct(calls, 0.5)
        per = [_pct(r, 0.5) / _pct(f, 0.5) for r, f in zip(counted, folder, strict=True)]
        print(
            f"| {setup.name} | {p50:.1f} | {_pct(calls, 0.95):.1f} | {p50 / base:.2f}× | "
            f"{statistics.median(per):.2f}× ({min(per):.2f}–{max(per):.2f}) |"
        )


if __name__ == "__main__":
    main()
