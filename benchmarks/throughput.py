"""Write and query throughput of UCMA against a plain Chroma collection.

Run::

    python -m benchmarks.throughput [--sizes 1000,10000] [--embedder local|hashing]
                                    [--queries 200] [--batch 256] [--out FILE.md] [--json FILE]
                                    [--repeat R] [--single-cap 2000] [--single-preload]
                                    [--phases single,bulk,stall] [--systems chroma,ucma,ucma-sync]
                                    [--stall-ops 1000] [--profile DIR]

Both sides get the same embedder instance type, the same deterministic texts and
the same queries, and each (system, phase, size) runs in its own spawned process
so peak RSS figures do not mix:

* **Plain Chroma**: ``chromadb.PersistentClient`` (telemetry off) in a temp dir, a
  collection with ``embedding_function=None`` and ``{"hnsw:space": "cosine"}``.
  One-by-one: embed one text, ``collection.add`` it (id, vector, document and
  ``{"user_id": ...}``). Bulk: embed a batch, add the batch. Query: embed the
  query, ``collection.query(n_results=10, where={"user_id": ...})``.
* **UCMA**: ``Memory(tmp, embedder=..., config=MemoryConfig(importance_threshold=0.0))``.
  One-by-one: ``observe(text, user_id=...)``. Bulk: ``observe_many`` with the same
  batch size. Query: ``remember(q, k=10, user_id=...)``.

Phases, per size N and per system (each in a fresh process and a fresh folder):

1. ``single``: one-by-one writes of the first ``min(N, --single-cap)`` items into
   an empty store (with ``--single-preload``: into a store first filled, untimed
   and in bulk, with the other items, so the writes land in a store of about N);
   per-op latency (mean, p50, p95, max) and process CPU time per op.
2. ``bulk``: all N items in batches of ``--batch``, into another empty store;
   throughput in items/s. Then ``--queries`` queries (after 5 untimed warm-up
   queries) against those N items; per-query latency p50/p95.

3. ``stall``: ``--stall-ops`` one-by-one writes into an empty store and the final
   ``flush()``, while a second thread sleeps 1 ms at a time and records each tick; the
   longest tick is the longest time the writes kept another thread of the process from
   running (Chroma's ``add`` holds the GIL for its whole call).

UCMA writes with group commit (the default: ``observe`` returns once the memory is in
its journal; a writer thread adds vectors to Chroma in batches), so the one-by-one
rows also give the time per op including the final ``flush()``; the system
``ucma-sync`` is UCMA with group commit off (every write waits for Chroma).

The embedder is wrapped in a timer, so every figure is also given with the time
spent inside the embedder subtracted ("excl. embed"): what remains is the cost of
the store itself. Texts and queries are all distinct, so UCMA's embedding cache
never answers in place of the embedder (the report states its hit count).
With ``--repeat R`` every process runs R times (systems alternating) and the
report gives medians. ``--profile DIR`` writes cProfile ``.pstats`` files of the
timed parts (timings are then inflated). Peak RSS is ``ru_maxrss`` of the phase's
own process; its *base* includes the generated texts (about 27 MiB at 100k), the same on both sides.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .chat_corpus import N_USERS, SEED, Item, make_items, make_queries

WARMUP_QUERIES = 5

# --------------------------------------------------------------------------- embedders


class TimedEmbedder:
    """Pass-through embedder that adds up the wall and process CPU time spent inside ``inner.embed``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.elapsed = 0.0
        self.cpu = 0.0
        self.texts = 0

    def embed(self, texts: list[str]) -> list[list[float]]:
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.inner.embed(texts)
        self.elapsed += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        self.texts += len(texts)
        return out


def make_embedder(kind: str) -> Any:
    if kind == "hashing":
        from ucma_core.embedders import HashingEmbedder

        return HashingEmbedder()
    if kind == "local":
        from ucma_core.embedders import LocalMiniLMEmbedder

        return LocalMiniLMEmbedder()
    raise SystemExit(f"unknown embedder {kind!r}; use local or hashing")


# --------------------------------------------------------------------------- the two systems


class ChromaSide:
    def __init__(self, folder: Path, embedder: TimedEmbedder) -> None:
        import chromadb
        from chromadb.config import Settings

        self.emb = embedder
        settings = Settings(anonymized_telemetry=False)
        self.client = chromadb.PersistentClient(path=str(folder), settings=settings)
        self.col = self.client.get_or_create_collection(
            "bench", embedding_function=None, metadata={"hnsw:space": "cosine"}
        )
        self.ids: list[str] = []

    def add_one(self, item: Item) -> None:
        vec = self.emb.embed([item.text])
        memory_id = uuid.uuid4().hex
        self.col.add(
            ids=[memory_id], embeddings=vec, documents=[item.text], metadatas=[{"user_id": item.user_id}]
        )
        self.ids.append(memory_id)

    def add_many(self, items: Sequence[Item]) -> None:
        vecs = self.emb.embed([it.text for it in items])
        ids = [uuid.uuid4().hex for _ in items]
        self.col.add(
            ids=ids,
            embeddings=vecs,
            documents=[it.text for it in items],
            metadatas=[{"user_id": it.user_id} for it in items],
        )
        self.ids.extend(ids)

    def query(self, text: str, user_id: str) -> list[str]:
        vec = self.emb.embed([text])
        res = self.col.query(query_embeddings=vec, n_results=10, where={"user_id": user_id})
        return list(res["ids"][0])

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def extra(self) -> dict[str, Any]:
        return {}


class UcmaSide:
    #: Group commit (the default); :class:`UcmaSyncSide` turns it off (every write waits for Chroma).
    group_commit = True

    def __init__(self, folder: Path, embedder: TimedEmbedder) -> None:
        import ucma_core
        from ucma_core import Memory, MemoryConfig

        self.emb = embedder
        config = MemoryConfig(importance_threshold=0.0)
        if hasattr(ucma_core, "GroupCommitConfig"):  # not in versions before group commit
            config = MemoryConfig(
                importance_threshold=0.0, group_commit=ucma_core.GroupCommitConfig(enabled=self.group_commit)
            )
        self.mem = Memory(folder, embedder=embedder, config=config)
        self.ids: list[str] = []

    def add_one(self, item: Item) -> None:
        memory_id = self.mem.observe(item.text, user_id=item.user_id)
        assert memory_id is not None
        self.ids.append(memory_id)

    def add_many(self, items: Sequence[Item]) -> None:
        ids = self.mem.observe_many([{"content": it.text, "user_id": it.user_id} for it in items])
        assert all(i is not None for i in ids)
        self.ids.extend(ids)  # type: ignore[arg-type]

    def query(self, text: str, user_id: str) -> list[str]:
        return [r.id for r in self.mem.remember(text, k=10, user_id=user_id)]

    def flush(self) -> None:
        if hasattr(self.mem, "flush"):
            self.mem.flush()

    def close(self) -> None:
        self.mem.close()

    def extra(self) -> dict[str, Any]:
        return {"embedding_cache": self.mem.stats()["embedding_cache"]}


class UcmaSyncSide(UcmaSide):
    group_commit = False


SYSTEMS: dict[str, Callable[[Path, TimedEmbedder], Any]] = {
    "chroma": ChromaSide,
    "ucma": UcmaSide,
    "ucma-sync": UcmaSyncSide,
}


class Ticker:
    """A second thread that sleeps 1 ms at a time and records how long each tick really took:
    the longest gap is the longest time the process kept that thread from running (the GIL)."""

    def __init__(self) -> None:
        import threading

        self.gaps: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            self.gaps.append(now - last)
            last = now

    def __enter__(self) -> Ticker:
        self._thread.start()
        time.sleep(0.01)
        self.gaps.clear()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        gaps = sorted(self.gaps) or [0.0]
        return {
            "max": gaps[-1],
            "p99": gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))],
            "over_10ms": sum(g for g in gaps if g > 0.010),
            "ticks": float(len(gaps)),
        }


# --------------------------------------------------------------------------- measuring (in a child process)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def _rss_mib() -> float:
    try:
        import psutil

        return float(psutil.Process().memory_info().rss) / 2**20
    except ImportError:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _summary(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        if not ordered:
            return float("nan")
        k = (len(ordered) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)

    return {
        "n": len(ordered),
        "mean": statistics.fmean(ordered) if ordered else float("nan"),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "max": ordered[-1] if ordered else float("nan"),
    }


class _Profiler:
    def __init__(self, enabled: bool) -> None:
        self.prof = None
        if enabled:
            import cProfile

            self.prof = cProfile.Profile()

    def __enter__(self) -> None:
        if self.prof is not None:
            self.prof.enable()

    def __exit__(self, *exc: object) -> None:
        if self.prof is not None:
            self.prof.disable()

    def dump(self, path: Path) -> None:
        if self.prof is not None:
            self.prof.dump_stats(str(path))


def _timed_loop(
    ops: Sequence[Callable[[], Any]], emb: TimedEmbedder, prof: _Profiler
) -> tuple[dict[str, Any], list[Any]]:
    """Run ``ops`` one at a time; wall latency and process CPU time of each, with and without embedding."""
    lat: list[float] = []
    lat_ex: list[float] = []
    cpu = cpu_ex = 0.0
    results: list[Any] = []
    for op in ops:
        e0, ec0 = emb.elapsed, emb.cpu
        with prof:
            c0 = time.process_time()
            t0 = time.perf_counter()
            results.append(op())
            dt = time.perf_counter() - t0
            dc = time.process_time() - c0
        lat.append(dt)
        lat_ex.append(dt - (emb.elapsed - e0))
        cpu += dc
        cpu_ex += dc - (emb.cpu - ec0)
    n = max(len(ops), 1)
    return {
        "wall": _summary(lat),
        "wall_ex": _summary(lat_ex),
        "cpu_mean": cpu / n,
        "cpu_mean_ex": cpu_ex / n,
    }, results


def _query_phase(
    side: Any, emb: TimedEmbedder, items: Sequence[Item], job: dict[str, Any], prof: _Profiler
) -> dict[str, Any]:
    """Warm-up queries, then the timed ones; their latency and how often they find their item."""
    queries = make_queries(items, job["queries"] + WARMUP_QUERIES, job["seed"], job["seed"] + 1)
    warm, timed = queries[:WARMUP_QUERIES], queries[WARMUP_QUERIES:]
    for q, user, _ in warm:
        side.query(q, user)
    texts_before = emb.texts
    ops = [(lambda q=q, u=u: side.query(q, u)) for q, u, _ in timed]
    stats, results = _timed_loop(ops, emb, prof)
    id_of = side.ids
    hits = sum(id_of[i] in got for (_, _, i), got in zip(timed, results, strict=True))
    return {
        "query": stats,
        "hit_at_10": hits / max(len(timed), 1),
        "empty_results": sum(not got for got in results),
        "embedded_texts_query": emb.texts - texts_before,
        "rss_peak_query_mib": _peak_rss_mib(),
    }


def _bulk_load(
    side: Any, emb: TimedEmbedder, items: Sequence[Item], batch: int, prof: _Profiler
) -> dict[str, Any]:
    """All of ``items`` in batches of ``batch``; throughput with and without the embedder's time."""
    n = len(items)
    t_start, c_start = time.perf_counter(), time.process_time()
    e_start, ec_start, texts_start = emb.elapsed, emb.cpu, emb.texts
    with prof:
        for start in range(0, n, batch):
            side.add_many(items[start : start + batch])
    total = time.perf_counter() - t_start
    cpu = time.process_time() - c_start
    embed_t, embed_c = emb.elapsed - e_start, emb.cpu - ec_start
    return {
        "bulk_count": n,
        "bulk_seconds": total,
        "bulk_embed_seconds": embed_t,
        "bulk_items_per_s": n / total,
        "bulk_items_per_s_ex": n / max(total - embed_t, 1e-9),
        "bulk_cpu_seconds": cpu,
        "bulk_cpu_seconds_ex": cpu - embed_c,
        "embedded_texts_bulk": emb.texts - texts_start,
        "rss_peak_write_mib": _peak_rss_mib(),
    }


def _one_by_one(side: Any, emb: TimedEmbedder, items: Sequence[Item], prof: _Profiler) -> dict[str, Any]:
    """``items`` written one at a time (each timed), then the final ``flush()`` (group commit:
    the writes are in Chroma only now): per-op statistics and the time per op with the flush."""
    m = len(items)
    stats, _ = _timed_loop([(lambda it=it: side.add_one(it)) for it in items], emb, prof)
    t0 = time.perf_counter()
    side.flush()
    flush = time.perf_counter() - t0
    return {
        "single": stats,
        "single_count": m,
        "single_flush_seconds": flush,
        "single_total_ms_per_op": (stats["wall"]["mean"] * m + flush) / m,
    }


def _full_phase(
    side: Any,
    emb: TimedEmbedder,
    items: Sequence[Item],
    job: dict[str, Any],
    prof: _Profiler,
    prof_q: _Profiler,
) -> dict[str, Any]:
    """One store, every measurement: the last ``min(N / 2, cap)`` items are written one by one into
    a store bulk-loaded (timed) with the others, then the queries run against all N. Half
    the work of ``single --single-preload`` plus ``bulk``, which each load a store of N."""
    n = len(items)
    m = min(n // 2, job["single_cap"])
    out = _bulk_load(side, emb, items[: n - m], job["batch"], prof) if n > m else {}
    out["rss_peak_bulk_mib"] = _peak_rss_mib()
    out.update(_one_by_one(side, emb, items[n - m :], prof), rss_peak_single_mib=_peak_rss_mib())
    out.update(_query_phase(side, emb, items, job, prof_q))
    return out


def worker(job: dict[str, Any]) -> dict[str, Any]:
    """One system, one phase, one size, in a fresh process. Returns plain numbers."""
    import gc

    system, phase, n = job["system"], job["phase"], job["n"]
    emb = TimedEmbedder(make_embedder(job["embedder"]))
    emb.embed(["warm-up: load the model before anything is timed"])
    items = make_items(n, job["seed"])
    folder = Path(tempfile.mkdtemp(prefix=f"ucma-bench-{system}-{phase}-", dir=job["tmp"]))
    prof = _Profiler(bool(job.get("profile")))
    prof_q = _Profiler(bool(job.get("profile")))
    gc.collect()
    out: dict[str, Any] = {"system": system, "phase": phase, "n": n}
    try:
        side = SYSTEMS[system](folder, emb)
        out["rss_base_mib"] = _rss_mib()
        emb.elapsed, emb.texts = 0.0, 0
        if phase == "single":
            m = min(n, job["single_cap"])
            if job.get("single_preload") and n > m:
                # Untimed: fill the store with the other N - m items so the timed writes land in a
                # store of about N items (graph snapshots, index sizes and the like at that scale).
                for start in range(m, n, job["batch"]):
                    side.add_many(items[start : start + job["batch"]])
                out["rss_after_preload_mib"] = _peak_rss_mib()
            out.update(_one_by_one(side, emb, items[:m], prof))
            out.update(embedded_texts=emb.texts, rss_peak_write_mib=_peak_rss_mib())
        elif phase == "full":
            out.update(_full_phase(side, emb, items, job, prof, prof_q))
        elif phase == "stall":
            m = min(n, job["stall_ops"])
            t0 = time.perf_counter()
            with Ticker() as ticker:
                for it in items[:m]:
                    side.add_one(it)
                side.flush()
            out.update(stall=ticker.summary(), stall_ops=m, stall_seconds=time.perf_counter() - t0)
        else:
            out.update(_bulk_load(side, emb, items, job["batch"], prof))
            out.update(_query_phase(side, emb, items, job, prof_q))
        out.update(side.extra())
        t0 = time.perf_counter()
        side.close()
        out["close_seconds"] = time.perf_counter() - t0
        if job.get("profile"):
            pdir = Path(job["profile"])
            pdir.mkdir(parents=True, exist_ok=True)
            tag = f"{job['embedder']}-{n}"
            prof.dump(pdir / f"{system}-{'single' if phase == 'single' else 'bulk'}-{tag}.pstats")
            if phase == "bulk":
                prof_q.dump(pdir / f"{system}-query-{tag}.pstats")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run :func:`worker` in a freshly spawned process (its own peak RSS)."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(worker, (job,))


# --------------------------------------------------------------------------- report


def _median_merge(runs: Sequence[Any]) -> Any:
    """Element-wise median of repeated results (numbers), first value otherwise."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: _median_merge([r[k] for r in runs if k in r]) for k in first}
    if isinstance(first, bool):
        return first
    if all(isinstance(r, int) for r in runs):
        return statistics.median_low(runs)
    if isinstance(first, (int, float)):
        return statistics.median(runs)
    return first


def _ms(x: float) -> str:
    return f"{x * 1000:.2f}" if x == x else "n/a"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b and a == a and b == b else "n/a"


def _row(
    n: int,
    label: str,
    c: float,
    u: float,
    cx: float,
    ux: float,
    fmt: Callable[[float], str],
    higher_is_better: bool = False,
) -> str:
    r = _ratio(c, u) if higher_is_better else _ratio(u, c)
    rx = _ratio(cx, ux) if higher_is_better else _ratio(ux, cx)
    return f"| {n} | {label} | {fmt(c)} | {fmt(u)} | {r} | {fmt(cx)} | {fmt(ux)} | {rx} |"


def _loop_rows(
    n: int, label: str, chroma: dict[str, Any], ucma: dict[str, Any], stats: Sequence[str]
) -> list[str]:
    """Rows for one :func:`_timed_loop` result: the chosen latency statistics, then CPU per op."""
    rows = [
        _row(
            n,
            f"{label} {stat}, ms",
            chroma["wall"][stat],
            ucma["wall"][stat],
            chroma["wall_ex"][stat],
            ucma["wall_ex"][stat],
            _ms,
        )
        for stat in stats
    ]
    rows.append(
        _row(
            n,
            f"{label} CPU per op, ms",
            chroma["cpu_mean"],
            ucma["cpu_mean"],
            chroma["cpu_mean_ex"],
            ucma["cpu_mean_ex"],
            _ms,
        )
    )
    return rows


#: Issue #23's goals, UCMA / Chroma.
GOALS = {"observe": 1.0, "remember": 1.3, "rss": 1.10}


def _verdict(ratio: float, goal: float) -> str:
    return f"{'meets' if ratio <= goal else 'MISSES'} ≤{goal:.2f}×"


#: Peak-RSS rows: (phase, key, label); the ``full`` phase's peaks are cumulative in one process.
RSS_ROWS = (
    ("single", "rss_peak_write_mib", "one-by-one writes"),
    ("bulk", "rss_peak_write_mib", "bulk load"),
    ("bulk", "rss_peak_query_mib", "bulk load + queries"),
    ("full", "rss_peak_bulk_mib", "bulk load (N - one-by-one)"),
    ("full", "rss_peak_single_mib", "+ one-by-one writes"),
    ("full", "rss_peak_query_mib", "+ queries"),
)


def _pair(
    results: dict[tuple[str, str, int], dict[str, Any]], n: int, phase: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Chroma's and UCMA's results of ``phase`` at ``n`` (the ``full`` phase stands in for
    ``single`` and ``bulk`` when they did not run)."""
    for name in (phase, "full"):
        c, u = results.get(("chroma", name, n)), results.get(("ucma", name, n))
        if c and u and (name != "full" or phase != "bulk" or "bulk_count" in c):
            return c, u
    return None, None


def render(results: dict[tuple[str, str, int], dict[str, Any]], args: argparse.Namespace, wall: float) -> str:
    import chromadb

    try:
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    lines: list[str] = []
    lines.append(f"### UCMA vs plain Chroma — embedder `{args.embedder}`, sizes {args.sizes}")
    lines.append("")
    lines.append(
        f"- python {platform.python_version()}, chromadb {chromadb.__version__}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs (load average at the end {load}); "
        f"batch {args.batch}; {args.queries} timed queries (+{WARMUP_QUERIES} warm-up), k=10, "
        f"`where={{user_id}}`; {N_USERS} users; repeats {args.repeat} (median); "
        f"total wall time {wall:.0f} s"
    )
    if "full" in args.phases:
        lines.append(
            f"- phase full: one store per system; the first N - min(N/2, {args.single_cap}) items bulk "
            "loaded, the rest written one by one (then flush()), then the queries against all N"
        )
    if "single" in args.phases or "bulk" in args.phases:
        lines.append(
            f"- phases single / bulk: one-by-one writes of the first min(N, {args.single_cap}) items into "
            + (
                "a store pre-filled (untimed, in bulk) with the other N - that many items; "
                if args.single_preload
                else "an empty store; "
            )
            + "bulk and queries: all N items into another empty store; each in its own process"
        )
    lines.append(
        "- *excl. embed*: the same measurement minus the time spent inside the embedder "
        "(identical work on both sides); *CPU*: process CPU time (all threads) per op"
    )
    if args.profile:
        lines.append("- **run under cProfile: absolute timings are inflated**")
    lines.append("")
    lines.append(
        "| N | metric | Chroma | UCMA | UCMA/Chroma | Chroma excl. embed | UCMA excl. embed "
        "| UCMA/Chroma excl. embed |"
    )
    lines.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        c1, u1 = _pair(results, n, "single")
        c2, u2 = _pair(results, n, "bulk")
        if c1 and u1:
            label = f"add / observe one-by-one ({c1['single_count']} ops)"
            lines += _loop_rows(n, label, c1["single"], u1["single"], ("mean", "p50", "p95", "max"))
            if "single_total_ms_per_op" in u1:
                c_total, u_total = c1["single_total_ms_per_op"], u1["single_total_ms_per_op"]
                lines.append(
                    f"| {n} | one-by-one incl. the final flush, ms per op | {c_total * 1000:.2f} "
                    f"| {u_total * 1000:.2f} | {_ratio(u_total, c_total)} | | | |"
                )
        if c2 and u2:
            lines.append(
                _row(
                    n,
                    f"bulk add / observe_many (batch {args.batch}), items/s",
                    c2["bulk_items_per_s"],
                    u2["bulk_items_per_s"],
                    c2["bulk_items_per_s_ex"],
                    u2["bulk_items_per_s_ex"],
                    lambda x: f"{x:,.0f}",
                    higher_is_better=True,
                )
            )
            lines.append(
                _row(
                    n,
                    "bulk CPU per 1000 items, s",
                    c2["bulk_cpu_seconds"] / c2.get("bulk_count", n) * 1000,
                    u2["bulk_cpu_seconds"] / u2.get("bulk_count", n) * 1000,
                    c2["bulk_cpu_seconds_ex"] / c2.get("bulk_count", n) * 1000,
                    u2["bulk_cpu_seconds_ex"] / u2.get("bulk_count", n) * 1000,
                    lambda x: f"{x:.2f}",
                )
            )
            lines += _loop_rows(n, "query / remember", c2["query"], u2["query"], ("p50", "p95"))
    lines.append("")
    lines.append(
        "Ratios are UCMA time / Chroma time (for items/s: Chroma rate / UCMA rate), so >1 means "
        "UCMA is slower."
    )
    lines.append("")
    lines.append(
        "Peak RSS in MiB (`ru_maxrss` of each phase's own process; *base* = RSS after imports, "
        "embedder warm-up, text generation and opening the empty store):"
    )
    lines.append("")
    lines.append("| N | phase | Chroma base | Chroma peak | UCMA base | UCMA peak | UCMA/Chroma peak |")
    lines.append("|---:|---|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        for phase, key, label in RSS_ROWS:
            c, u = results.get(("chroma", phase, n)), results.get(("ucma", phase, n))
            if c and u:
                lines.append(
                    f"| {n} | {label} | {c['rss_base_mib']:.0f} | {c[key]:.0f} "
                    f"| {u['rss_base_mib']:.0f} | {u[key]:.0f} | {_ratio(u[key], c[key])} |"
                )
    stalls = [(n, s) for n in args.sizes for s in SYSTEMS if (s, "stall", n) in results]
    if stalls:
        lines.append("")
        lines.append(
            "Longest stall of a second thread (a 1 ms sleep ticker) during one-by-one writes and the "
            "final flush (*ucma-sync*: group commit off, every write waits for Chroma as before):"
        )
        lines.append("")
        lines.append(
            "| N | system | ops | wall, s | longest stall, ms | p99 tick, ms | time in ticks > 10 ms, s |"
        )
        lines.append("|---:|---|---:|---:|---:|---:|---:|")
        for n, system in stalls:
            r = results[(system, "stall", n)]
            st = r["stall"]
            lines.append(
                f"| {n} | {system} | {r['stall_ops']} | {r['stall_seconds']:.2f} | {st['max'] * 1000:.1f} "
                f"| {st['p99'] * 1000:.1f} | {st['over_10ms']:.2f} |"
            )
    lines.append("")
    lines.append("Targets and sanity checks:")
    lines.append("")
    for n in args.sizes:
        c1, u1 = _pair(results, n, "single")
        c2, u2 = _pair(results, n, "bulk")
        parts = [f"- N={n}:"]
        if c1 and u1:
            r = u1["single"]["wall"]["mean"] / c1["single"]["wall"]["mean"]
            parts.append(f"observe/add mean {r:.2f}× ({_verdict(r, GOALS['observe'])});")
        if c2 and u2:
            for stat in ("p50", "p95"):
                r = u2["query"]["wall"][stat] / c2["query"]["wall"][stat]
                parts.append(f"remember/query {stat} {r:.2f}× ({_verdict(r, GOALS['remember'])});")
            key = "rss_peak_query_mib"
            r = u2[key] / c2[key]
            parts.append(f"peak RSS with queries {r:.3f}× ({_verdict(r, GOALS['rss'])});")
            parts.append(
                f"hit@10 of the item each query was written from: Chroma {c2['hit_at_10']:.2f}, "
                f"UCMA {u2['hit_at_10']:.2f};"
            )
            parts.append(
                f"bulk load {c2['bulk_seconds']:.2f} s vs {u2['bulk_seconds']:.2f} s "
                f"(in the embedder {c2['bulk_embed_seconds']:.2f} s / "
                f"{u2['bulk_embed_seconds']:.2f} s);"
            )
            parts.append(f"UCMA close() {u2['close_seconds']:.2f} s (not timed above);")
            parts.append(f"UCMA embedding cache {u2.get('embedding_cache')}")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the README table


def readme_rows(results: dict[tuple[str, str, int], dict[str, Any]], n: int) -> list[str]:
    """The README table's rows for size ``n``: what issue #23 sets a goal for, and bulk speed."""
    rows: list[str] = []

    def row(metric: str, c: float, u: float, fmt: str, goal: str = "", ratio: str | None = None) -> None:
        r = ratio if ratio is not None else _ratio(u, c)
        rows.append(f"| {n:,} | {metric} | {format(c, fmt)} | {format(u, fmt)} | {r} | {goal} |")

    c1, u1 = _pair(results, n, "single")
    c2, u2 = _pair(results, n, "bulk")
    if c1 and u1:
        c, u = c1["single"]["wall"], u1["single"]["wall"]
        label = f"`add` / `observe` one by one ({c1['single_count']:,}), mean ms"
        row(label, c["mean"] * 1000, u["mean"] * 1000, ".2f", f"≤ {GOALS['observe']:.1f}×")
        c_t, u_t = c1["single_total_ms_per_op"], u1["single_total_ms_per_op"]
        row("… incl. the final `flush()`, ms per op", c_t * 1000, u_t * 1000, ".2f")
    if c2 and u2:
        label = f"bulk `add` / `observe_many` ({c2.get('bulk_count', n):,}), items/s"
        cr, ur = c2["bulk_items_per_s"], u2["bulk_items_per_s"]
        row(label, cr, ur, ",.0f", ratio=_ratio(cr, ur))
        for stat in ("p50", "p95"):
            c, u = c2["query"]["wall"][stat], u2["query"]["wall"][stat]
            row(
                f"`query` / `remember(k=10)` {stat}, ms",
                c * 1000,
                u * 1000,
                ".2f",
                f"≤ {GOALS['remember']:.1f}×",
            )
    for phase, key, label in RSS_ROWS:
        c, u = results.get(("chroma", phase, n)), results.get(("ucma", phase, n))
        if c and u and key in c and key in u:
            goal = f"≤ {GOALS['rss']:.2f}×" if key == "rss_peak_query_mib" else ""
            row(f"peak RSS, {label}, MiB", c[key], u[key], ".0f", goal)
    return rows


README_HEADER = (
    "| N | metric | Chroma | UCMA | UCMA/Chroma | goal |",
    "|---:|---|---:|---:|---:|---|",
)


def _block_marks(embedder: str) -> tuple[str, str]:
    return (
        f"<!-- benchmarks.throughput {embedder}: begin (rows replaced by --readme) -->",
        f"<!-- benchmarks.throughput {embedder}: end -->",
    )


def _size_of(line: str) -> int | None:
    """The N a table row (``| 10,000 | ...``) or a note (``- 10,000: ...``) is about."""
    head = line[2:].split("|" if line.startswith("|") else ":", 1)[0].strip().replace(",", "")
    return int(head) if head.isdigit() else None


def update_readme(text: str, embedder: str, rows: dict[int, list[str]], notes: dict[int, str]) -> str:
    """``text`` with the rows and notes of the sizes in ``rows`` replaced in ``embedder``'s marked
    block (created at the end if missing); the other sizes' rows and notes stay.

    Examples:
        >>> t = update_readme("intro", "hashing", {10: ["| 10 | x | 1 | 2 | 2.00× | |"]}, {10: "- 10: a"})
        >>> t = update_readme(t, "hashing", {5: ["| 5 | x | 1 | 1 | 1.00× | |"]}, {5: "- 5: run b"})
        >>> print(t.split("-->", 1)[1].rsplit("<!--", 1)[0].strip())
        | N | metric | Chroma | UCMA | UCMA/Chroma | goal |
        |---:|---|---:|---:|---:|---|
        | 5 | x | 1 | 1 | 1.00× | |
        | 10 | x | 1 | 2 | 2.00× | |
        <BLANKLINE>
        - 5: run b
        - 10: a
    """
    begin, end = _block_marks(embedder)
    old_rows: dict[int, list[str]] = {}
    old_notes: dict[int, str] = {}
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        inner, after = rest.split(end, 1)
        for line in inner.splitlines():
            n = _size_of(line) if line.startswith(("| ", "- ")) else None
            if n is None:
                continue
            if line.startswith("|"):
                old_rows.setdefault(n, []).append(line)
            else:
                old_notes[n] = line
    else:
        before, after = text.rstrip("\n") + "\n\n", "\n"
    old_rows.update(rows)
    old_notes.update(notes)
    body = [*README_HEADER, *(r for n in sorted(old_rows) for r in old_rows[n]), ""]
    body += [old_notes[n] for n in sorted(old_notes)]
    return before + begin + "\n" + "\n".join(body) + "\n" + end + after


_WHERE_ARGS = frozenset({"--tmp", "--out", "--json", "--profile"})


def readme_note(n: int, args: argparse.Namespace, load: str, argv: Sequence[str]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs = f"median of {args.repeat} runs" if args.repeat > 1 else "one run"
    shown: list[str] = []
    skip = False
    for arg in argv:  # where files go does not change the figures
        if skip:
            skip = False
        elif arg.split("=", 1)[0] in _WHERE_ARGS:
            skip = "=" not in arg
        else:
            shown.append(arg)
    command = " ".join(["python -m benchmarks.throughput", *shown])
    return f"- {n:,}: {runs}, {when}, {os.cpu_count()} CPUs, load average {load} at the end: `{command}`"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.throughput",
        description="Write and query throughput of UCMA against plain Chroma.",
    )
    p.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes N")
    p.add_argument("--embedder", default="local", choices=["local", "hashing"])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--batch", type=int, default=256, help="bulk batch size (both sides)")
    p.add_argument("--single-cap", type=int, default=2000, help="one-by-one writes timed on min(N, this)")
    p.add_argument(
        "--single-preload",
        action="store_true",
        help="before the timed one-by-one writes, bulk-load (untimed) the other N - min(N, cap) items",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every (system, phase, N) this many times, alternating systems; report medians",
    )
    p.add_argument("--systems", default="chroma,ucma", help="chroma, ucma, ucma-sync (group commit off)")
    p.add_argument("--stall-ops", type=int, default=1000, help="one-by-one writes timed in the stall phase")
    p.add_argument("--phases", default="single,bulk")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--tmp", default=None, help="where the temporary stores go (default: system temp dir)")
    p.add_argument("--out", default=None, help="also write the markdown report here")
    p.add_argument("--json", default=None, help="also write the raw numbers here")
    p.add_argument(
        "--readme",
        default=None,
        metavar="FILE",
        help="replace this run's sizes in the embedder's marked table in FILE (e.g. README.md)",
    )
    p.add_argument(
        "--profile",
        default=None,
        metavar="DIR",
        help="run the timed parts under cProfile, write .pstats files to DIR (inflates timings)",
    )
    args = p.parse_args(argv)
    if args.tmp:
        Path(args.tmp).mkdir(parents=True, exist_ok=True)
    args.sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    phases = [s.strip() for s in args.phases.split(",") if s.strip()]

    runs: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    started = time.perf_counter()
    for n in args.sizes:
        for phase in phases:
            for rep in range(args.repeat):
                for system in systems if rep % 2 == 0 else systems[::-1]:
                    job = {
                        "system": system,
                        "phase": phase,
                        "n": n,
                        "embedder": args.embedder,
                        "queries": args.queries,
                        "batch": args.batch,
                        "single_cap": args.single_cap,
                        "single_preload": args.single_preload,
                        "stall_ops": args.stall_ops,
                        "seed": args.seed,
                        "tmp": args.tmp,
                        "profile": str(Path(args.profile).resolve()) if args.profile else None,
                    }
                    t0 = time.perf_counter()
                    res = run_job(job)
                    res["job_seconds"] = time.perf_counter() - t0
                    runs.setdefault((system, phase, n), []).append(res)
                    print(
                        f"[{time.perf_counter() - started:7.1f}s] {system:6s} {phase:6s} N={n} "
                        f"run {rep + 1}/{args.repeat}: {res['job_seconds']:.1f}s",
                        file=sys.stderr,
                        flush=True,
                    )
    wall = time.perf_counter() - started
    results = {key: _median_merge(rs) for key, rs in runs.items()}
    report = render(results, args, wall)
    print(report)
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    if args.readme:
        try:
            load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        except OSError:
            load = "n/a"
        shown = list(sys.argv[1:] if argv is None else argv)
        rows = {n: readme_rows(results, n) for n in args.sizes}
        rows = {n: r for n, r in rows.items() if r}
        notes = {n: readme_note(n, args, load, shown) for n in rows}
        path = Path(args.readme)
        path.write_text(
            update_readme(path.read_text(encoding="utf-8"), args.embedder, rows, notes), encoding="utf-8"
        )
    if args.json:
        raw = [{"key": list(k), "runs": v} for k, v in runs.items()]
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
