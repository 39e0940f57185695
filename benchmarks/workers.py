"""Many workers on one shared memory: observe and remember latency, 1 vs 4 worker
processes on PostgreSQL + a Chroma server, against a memory folder (one process).

Run: ``python -m benchmarks.workers [--observes 100] [--remembers 50] [--embed-ms 50] [--code PATH]
[--against PATH] [--repeat N]`` (``--embed-ms``: each embedding call waits that long first, as an
embedding API does). It starts a throwaway PostgreSQL 15 cluster and a ``chroma run`` server (as
the tests do), runs each setup in fresh processes with the hashing embedder (the workers open the
memory, then all start at once), and prints a Markdown table of p50 / p95 latency per call, the
observe throughput of all workers together, and the PostgreSQL statements each ``remember`` sent
(counted by a wrapper of psycopg's ``Cursor.execute``; the lock's three statements travel in
one pipeline, one round trip), and how many of the narrow searches made while remembering
were answered from a where-set kept before the call (``kept-set answers``: the first two asks
of each worker's clause cannot be). ``--code`` measures another checkout's ``ucma_core`` with the
same script and servers; ``--against`` measures a second checkout's PostgreSQL setups side by
side with ``--code``'s, run after run (a before / after comparison on one machine state).
``--repeat`` runs every setup that many times, in turns, and adds a table of the medians and
of the ``remember`` p50 ratios to the embedded folder of the same turn.
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
    statements = [0, False]  # count, counting
    if target.startswith("postgresql://"):
        import psycopg

        execute = psycopg.Cursor.execute

        def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            statements[0] += statements[1]
            return execute(self, query, *args, **kwargs)

        psycopg.Cursor.execute = counted  # type: ignore[method-assign]
    narrow = [0, 0]  # narrow searches while remembering; answered from a set kept before the call
    from ucma_core.storage.vectors import VectorStore

    inner = VectorStore._narrow

    def counted_narrow(self: Any, vector: Any, n: int, where: Any) -> Any:
        kept = self.where_sets.get(where, self.cache.token()) is not None
        found = inner(self, vector, n, where)
        if statements[1]:
            narrow[0] += 1
            narrow[1] += kept and found is not None
        return found

    VectorStore._narrow = counted_narrow  # type: ignore[method-assign]
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
            statements[1] = True  # any thread's meanwhile (a flush of pending vectors is counted too)
            mem.remember(f"what about the {topics[n % 8]}", user_id=user, k=5)
            statements[1] = False
            rem.append(time.perf_counter() - t)
    per = statements[0] / remembers if remembers else 0.0
    return {
        "observe": obs,
        "remember": rem,
        "observe_wall": observe_wall,
        "statements": per,
        "narrow": narrow[0],
        "kept": narrow[1],
    }


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
        "statements": statistics.fmean(float(r["statements"]) for r in results),
        "observe_p50": pct(obs, 0.5),
        "observe_p95": pct(obs, 0.95),
        "remember_p50": pct(rem, 0.5),
        "remember_p95": pct(rem, 0.95),
        "observe_per_s": len(obs) / wall,
        "remember_mean": 1000 * statistics.fmean(rem),
        "narrow": sum(float(r.get("narrow", 0)) for r in results),
        "kept": sum(float(r.get("kept", 0)) for r in results),
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
    parser.add_argument(
        "--against",
        type=Path,
        help="a second checkout whose PostgreSQL setups run side by side with --code's",
    )
    parser.add_argument("--repeat", type=int, default=1, help="run every setup this many times, in turns")
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

    codes = (
        [("", args.code)]
        if args.against is None
        else [(" (--code)", args.code), (" (--against)", args.against)]
    )
    runs: dict[str, list[dict[str, float]]] = {}
    with throwaway_servers(prefix="ucma-bench-") as servers:

        def url() -> str:
            return servers.url(f"b{uuid.uuid4().hex[:8]}")

        port = servers.chroma_port
        for turn in range(args.repeat):
            setups: list[tuple[str, str, int, int, Path]] = [
                ("folder (embedded Chroma), 1 process", str(servers.base / f"folder{turn}"), 0, 1, args.code),
                (
                    "folder + Chroma server, 1 process",
                    str(servers.base / f"server{turn}"),
                    port,
                    1,
                    args.code,
                ),
            ]
            for label, code in codes:
                setups.append((f"PostgreSQL + Chroma server, 1 worker{label}", url(), port, 1, code))
                setups.append((f"PostgreSQL + Chroma server, 4 workers{label}", url(), port, 4, code))
            for name, target, chroma_port, workers, code in setups:
                result = _run(target, chroma_port, workers, args.observes, args.remembers, code)
                runs.setdefault(name, []).append(result)
    embedder = (
        f"hashing embedder behind {args.embed_ms:g} ms per call" if args.embed_ms else "hashing embedder"
    )
    print(f"\n{args.observes} observes then {args.remembers} remembers per worker, {embedder}\n")
    print(
        "| setup | turn | observe p50 ms | p95 ms | observe/s (all) | remember p50 ms | p95 ms | × folder "
        "| statements | kept-set answers |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    folder = runs["folder (embedded Chroma), 1 process"]
    for name, results in runs.items():
        for turn, r in enumerate(results):
            ratio = r["remember_p50"] / folder[turn]["remember_p50"]
            print(
                f"| {name} | {turn + 1} | {r['observe_p50']:.1f} | {r['observe_p95']:.1f} | "
                f"{r['observe_per_s']:.0f} | {r['remember_p50']:.1f} | {r['remember_p95']:.1f} | "
                f"{ratio:.2f}× | {r['statements']:.1f} | {r['kept']:.0f} / {r['narrow']:.0f} |"
            )
    if args.repeat > 1:
        print(
            f"\nmedians of {args.repeat} turns (ratio: median of each turn's ratio to its embedded folder)\n"
        )
        print(
            "| setup | remember p50 ms | p95 ms | × folder (median) | × folder per turn | observe/s "
            "| kept-set answers (all turns) |"
        )
        print("|---|---:|---:|---:|---|---:|---:|")
        for name, results in runs.items():
            ratios = [r["remember_p50"] / f["remember_p50"] for r, f in zip(results, folder, strict=True)]
            med = {key: statistics.median(r[key] for r in results) for key in results[0]}
            print(
                f"| {name} | {med['remember_p50']:.1f} | {med['remember_p95']:.1f} | "
                f"{statistics.median(ratios):.2f}× | {' / '.join(f'{x:.2f}' for x in ratios)} | "
                f"{med['observe_per_s']:.0f} | {sum(r['kept'] for r in results):.0f} / "
                f"{sum(r['narrow'] for r in results):.0f} |"
            )


if __name__ == "__main__":
    main()
