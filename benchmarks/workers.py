"""Many workers on one shared memory: observe and remember latency, 1 vs 4 worker
processes on PostgreSQL + a Chroma server, against a memory folder (one process).

Run: ``python -m benchmarks.workers [--observes 100] [--remembers 50] [--embed-ms 50] [--code PATH]``
(``--embed-ms``: each embedding call waits that long first, as an embedding API does). It starts a
throwaway PostgreSQL 15 cluster and a ``chroma run`` server (as the tests do), runs
each setup in fresh processes with the hashing embedder (the workers open the memory,
then all start at once), and prints a Markdown table of p50 / p95 latency per call and
the observe throughput of all workers together. ``--code`` measures another checkout's
``ucma_core`` (a before / after comparison) with the same script and servers.
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


class _RemoteEmbedder:
    """The hashing embedder behind a fixed delay per call: an embedding API's round trip."""

    def __init__(self, delay: float) -> None:
        from ucma_core.embedders import HashingEmbedder

        self._inner = HashingEmbedder()
        self.name = self._inner.name
        self.dimension = self._inner.dimension
        self._delay = delay

    def embed(self, texts: list[str]) -> list[list[float]]:
        time.sleep(self._delay)
        return self._inner.embed(texts)


def _work(target: str, chroma_port: int, user: str, observes: int, remembers: int) -> dict[str, object]:
    from ucma_core import ChromaConfig, Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder

    delay = float(os.environ.get("UCMA_BENCH_EMBED_MS", "0")) / 1000

    config = (
        MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=chroma_port))
        if chroma_port
        else MemoryConfig()
    )
    topics = ["harbour", "garden", "invoice", "flight", "recipe", "concert", "doctor", "laptop"]
    embedder = _RemoteEmbedder(delay) if delay else HashingEmbedder()
    with Memory(target, embedder=embedder, config=config) as mem:
        print("ready", flush=True)
        sys.stdin.readline()  # every worker is open: all start writing at once
        obs: list[float] = []
        start = time.perf_counter()
        for n in range(observes):
            t = time.perf_counter()
            mem.observe(f"{user} noted item {n} about the {topics[n % 8]} on day {n % 31}", user_id=user)
            obs.append(time.perf_counter() - t)
        observe_wall = time.perf_counter() - start
        rem: list[float] = []
        for n in range(remembers):
            t = time.perf_counter()
            mem.remember(f"what about the {topics[n % 8]}", user_id=user, k=5)
            rem.append(time.perf_counter() - t)
    return {"observe": obs, "remember": rem, "observe_wall": observe_wall}


def _spawn(
    target: str, chroma_port: int, user: str, observes: int, remembers: int, code: Path
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            target,
            str(chroma_port),
            user,
            str(observes),
            str(remembers),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},  # the ucma_core measured: this checkout's or --code's
    )


def _run(
    target: str, chroma_port: int, workers: int, observes: int, remembers: int, code: Path
) -> dict[str, float]:
    if target.startswith("postgresql://"):  # create the memory first: workers race on writes only
        setup = _spawn(target, chroma_port, "setup", 1, 0, code)
        setup.communicate("go\n")
    procs = [_spawn(target, chroma_port, f"user{i}", observes, remembers, code) for i in range(workers)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    results = [json.loads(p.communicate("go\n")[0].splitlines()[-1]) for p in procs]
    wall = max(r["observe_wall"] for r in results)
    obs = sorted(x for r in results for x in r["observe"])
    rem = sorted(x for r in results for x in r["remember"])

    def pct(xs: list[float], q: float) -> float:
        return 1000 * xs[min(len(xs) - 1, int(q * len(xs)))]

    return {
        "observe_p50": pct(obs, 0.5),
        "observe_p95": pct(obs, 0.95),
        "remember_p50": pct(rem, 0.5),
        "remember_p95": pct(rem, 0.95),
        "observe_per_s": len(obs) / wall,
        "remember_mean": 1000 * statistics.fmean(rem),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--observes", type=int, default=100)
    parser.add_argument("--remembers", type=int, default=50)
    parser.add_argument(
        "--embed-ms", type=float, default=0, help="delay per embedding call (an embedding API's round trip)"
    )
    parser.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="a checkout whose ucma_core the workers run (default: this one)",
    )
    parser.add_argument("--worker", nargs=5)
    args = parser.parse_args()
    if args.embed_ms:
        os.environ["UCMA_BENCH_EMBED_MS"] = str(args.embed_ms)
    if args.worker:
        target, port, user, observes, remembers = args.worker
        print(json.dumps(_work(target, int(port), user, int(observes), int(remembers))))
        return
    sys.path.insert(0, str(ROOT))
    from tests.servers import throwaway_servers

    with throwaway_servers(prefix="ucma-bench-") as servers:

        def url() -> str:
            return servers.url(f"b{uuid.uuid4().hex[:8]}")

        chroma_port = servers.chroma_port
        rows = [
            (
                "folder (embedded Chroma), 1 process",
                _run(str(servers.base / "folder"), 0, 1, args.observes, args.remembers, args.code),
            ),
            (
                "folder + Chroma server, 1 process",
                _run(str(servers.base / "folder2"), chroma_port, 1, args.observes, args.remembers, args.code),
            ),
            (
                "PostgreSQL + Chroma server, 1 worker",
                _run(url(), chroma_port, 1, args.observes, args.remembers, args.code),
            ),
            (
                "PostgreSQL + Chroma server, 4 workers",
                _run(url(), chroma_port, 4, args.observes, args.remembers, args.code),
            ),
        ]
    embedder = (
        f"hashing embedder behind {args.embed_ms:g} ms per call" if args.embed_ms else "hashing embedder"
    )
    print(f"\n{args.observes} observes then {args.remembers} remembers per worker, {embedder}\n")
    print("| setup | observe p50 ms | p95 ms | observe/s (all) | remember p50 ms | p95 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(
            f"| {name} | {r['observe_p50']:.1f} | {r['observe_p95']:.1f} | {r['observe_per_s']:.0f} | "
            f"{r['remember_p50']:.1f} | {r['remember_p95']:.1f} |"
        )


if __name__ == "__main__":
    main()
