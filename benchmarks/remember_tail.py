"""Where the time of ``remember`` goes, and what its slowest calls wait for.

Run::

    python -m benchmarks.remember_tail [--n 10000] [--queries 400] [--slow-ms 100]

Builds a store the way ``benchmarks.throughput --phases full`` does (hashing embedder: the
first N - min(N/2, 2000) items with ``observe_many``, the rest one by one, then ``flush()``),
runs ``--queries`` remembers (after 20 untimed ones) and prints:

* wall p50 / p95 / max and process CPU per remember (all threads), minor page faults per
  remember, and the ``malloc_trim`` calls of the Chroma thread (count, time, MiB of RSS each
  gave back: what the next calls fault in again);
* the Chroma calls per remember by kind (query, read of vectors, listing), their wall and
  thread CPU time;
* the stacks every thread was in while a remember had run longer than ``--slow-ms``, sampled
  every 20 ms (most frequent first): what the slow calls wait for.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .chat_corpus import SEED, make_items, make_queries


def _rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.remember_tail", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--queries", type=int, default=400)
    p.add_argument("--slow-ms", type=float, default=100.0)
    args = p.parse_args(argv)

    from ucma_core import Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder
    from ucma_core.storage import trim, vectors

    n = args.n
    items = make_items(n, SEED)
    folder = Path(tempfile.mkdtemp(prefix="ucma-tail-"))
    mem = Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0))
    try:
        m = min(n // 2, 2000)
        for s in range(0, n - m, 256):
            batch = items[s : min(s + 256, n - m)]
            mem.observe_many([{"content": it.text, "user_id": it.user_id} for it in batch])
        for it in items[n - m :]:
            mem.observe(it.text, user_id=it.user_id)
        mem.flush()

        calls: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
        begin = vectors.VectorStore._begin

        def timed_begin(self: Any, what: str, fn: Callable[[], Any]) -> Any:
            def run() -> Any:
                t, c = time.perf_counter(), time.thread_time()
                try:
                    return fn()
                finally:
                    e = calls[what.split(" ")[0]]
                    e[0] += 1
                    e[1] += time.perf_counter() - t
                    e[2] += time.thread_time() - c

            return begin(self, what, run)

        trims: list[tuple[float, float]] = []
        raw_trim = trim._TRIM

        def timed_trim(pad: int) -> int:
            t, before = time.perf_counter(), _rss_mib()
            assert raw_trim is not None
            out = raw_trim(pad)
            trims.append((time.perf_counter() - t, before - _rss_mib()))
            return out

        queries = make_queries(items, args.queries + 20, SEED, SEED + 1)
        for text, user, _ in queries[:20]:
            mem.remember(text, k=10, user_id=user)
        vectors.VectorStore._begin = timed_begin  # type: ignore[method-assign]
        if raw_trim is not None:
            trim._TRIM = timed_trim
        started: list[float | None] = [None]
        stacks: collections.Counter[str] = collections.Counter()
        done = threading.Event()

        def watch() -> None:
            names: dict[int | None, str] = {}
            while not done.wait(0.02):
                t = started[0]
                if t is None or time.perf_counter() - t < args.slow_ms / 1e3:
                    continue
                names = {th.ident: th.name for th in threading.enumerate()}
                for ident, frame in sys._current_frames().items():
                    name = names.get(ident, "?")
                    if name == "tail-watch":
                        continue
                    top = traceback.extract_stack(frame)[-5:]
                    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}:{f.name}" for f in reversed(top))
                    stacks[f"{name} | {where}"] += 1

        watcher = threading.Thread(target=watch, name="tail-watch", daemon=True)
        watcher.start()
        lat: list[float] = []
        ru0, c0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
        for text, user, _ in queries[20:]:
            t0 = started[0] = time.perf_counter()
            mem.remember(text, k=10, user_id=user)
            lat.append(time.perf_counter() - t0)
            started[0] = None
        cpu, ru = time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF)
        done.set()
        watcher.join()
        vectors.VectorStore._begin = begin  # type: ignore[method-assign]
        trim._TRIM = raw_trim
    finally:
        mem.close()
        shutil.rmtree(folder, ignore_errors=True)

    q = len(lat)
    lat.sort()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"N={n}, {q} remembers (k=10), load average {load}")
    print(
        f"wall p50 {lat[q // 2] * 1e3:.2f} ms, p95 {lat[int(q * 0.95)] * 1e3:.2f} ms, "
        f"max {lat[-1] * 1e3:.1f} ms; "
        f"CPU per remember {cpu / q * 1e3:.2f} ms (user {(ru.ru_utime - ru0.ru_utime) / q * 1e3:.2f}, "
        f"sys {(ru.ru_stime - ru0.ru_stime) / q * 1e3:.2f}); minor faults per remember "
        f"{(ru.ru_minflt - ru0.ru_minflt) / q:.0f}"
    )
    if trims:
        print(
            f"malloc_trim: {len(trims)} calls, {sum(t for t, _ in trims) * 1e3:.0f} ms in all, longest "
            f"{max(t for t, _ in trims) * 1e3:.1f} ms, "
            f"{sum(r for _, r in trims) / len(trims):.1f} MiB of RSS given back per call"
        )
    print("Chroma calls per remember: kind, count, wall ms, Chroma thread CPU ms")
    for kind, (count, wall, tcpu) in sorted(calls.items(), key=lambda kv: -kv[1][1]):
        print(f"  {kind:10s} {count / q:5.2f} {wall / q * 1e3:7.2f} {tcpu / q * 1e3:7.2f}")
    print(f"stacks while a remember ran past {args.slow_ms:g} ms (samples of 20 ms; idle waits left out):")
    idle = ("_next_batch", "walcheckpoint.py", "_next_due", "vectors.py:134:_loop")
    for where, count in stacks.most_common():
        if not any(word in where for word in idle):
            print(f"  {count:4d}  {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
