"""A conversation's turns against a plain Chroma collection: one write, then one search, for one user.

Run::

    python -m benchmarks.chat_turns [--n 10000] [--turns 300] [--embedder hashing|local] [--repeat 3]

``benchmarks.throughput`` times writes and searches in separate phases; a chat app does
neither alone. Each turn here writes one new statement for a user and then searches that
user's memories with a question, as an agent that stores the turn and recalls for its reply.
Both systems are the ones ``benchmarks.throughput`` defines (``chroma``: ``collection.add``
then ``collection.query(n_results=10, where={"user_id": ...})``; ``ucma``: ``observe`` then
``remember(k=10, user_id=...)``, group commit on), with the same embedder type, texts and
questions. Each system first loads ``N`` statements in batches (untimed), then runs 20
untimed turns and ``--turns`` timed ones, in its own spawned process; with ``--repeat R`` the
systems alternate and the report gives medians. The table gives the wall time of the write,
of the search (p50 and p95) and of the whole turn, and the process CPU time per turn.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .chat_corpus import SEED, Item, make_items, make_queries
from .throughput import SYSTEMS, TimedEmbedder, _summary, make_embedder

WARMUP_TURNS = 20


def _turns(n: int, count: int, seed: int) -> tuple[list[Item], list[tuple[Item, str]]]:
    """The ``n`` statements loaded first, and ``count`` turns: a new statement of a user and a
    question about that user's memories."""
    items = make_items(n + count, seed)
    stored, fresh = items[:n], items[n:]
    questions = make_queries(stored, count, seed, seed + 1)
    turns = [
        (Item(it.text, user, it.template, it.attempt), question)
        for it, (question, user, _) in zip(fresh, questions, strict=True)
    ]
    return stored, turns


def worker(job: dict[str, Any]) -> dict[str, Any]:
    """One system's conversation in a fresh process; plain numbers."""
    emb = TimedEmbedder(make_embedder(job["embedder"]))
    emb.embed(["warm-up: load the model before anything is timed"])
    stored, turns = _turns(job["n"], job["turns"] + WARMUP_TURNS, job["seed"])
    folder = Path(tempfile.mkdtemp(prefix=f"ucma-chat-{job['system']}-", dir=job["tmp"]))
    try:
        side = SYSTEMS[job["system"]](folder, emb)
        for start in range(0, len(stored), job["batch"]):
            side.add_many(stored[start : start + job["batch"]])
        side.flush()
        writes: list[float] = []
        searches: list[float] = []
        whole: list[float] = []
        cpu = 0.0
        for k, (item, question) in enumerate(turns):
            c0 = time.process_time()
            t0 = time.perf_counter()
            side.add_one(item)
            t1 = time.perf_counter()
            side.query(question, item.user_id)
            t2 = time.perf_counter()
            if k >= WARMUP_TURNS:
                writes.append(t1 - t0)
                searches.append(t2 - t1)
                whole.append(t2 - t0)
                cpu += time.process_time() - c0
        side.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "write": _summary(writes),
        "search": _summary(searches),
        "turn": _summary(whole),
        "cpu_per_turn": cpu / max(len(whole), 1),
    }


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    with mp.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(worker, (job,))


def _median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(float(value))
    return statistics.median(values)


def render(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> str:
    try:
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    rows = [
        ("write (add / observe), mean ms", ("write", "mean")),
        ("search (query / remember), p50 ms", ("search", "p50")),
        ("search (query / remember), p95 ms", ("search", "p95")),
        ("whole turn, p50 ms", ("turn", "p50")),
        ("CPU per turn, ms", ("cpu_per_turn",)),
    ]
    lines = [
        f"### A conversation at N={args.n:,}: {args.turns} turns of one write and one search "
        f"(embedder `{args.embedder}`, median of {args.repeat}, load average at the end {load})",
        "",
        "| metric | Chroma | UCMA | UCMA/Chroma |",
        "|---|---:|---:|---:|",
    ]
    for label, path in rows:
        chroma = _median(runs["chroma"], *path)
        ucma = _median(runs["ucma"], *path)
        lines.append(f"| {label} | {chroma * 1e3:.2f} | {ucma * 1e3:.2f} | {ucma / chroma:.2f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.chat_turns", description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=10_000, help="statements loaded before the conversation")
    p.add_argument("--turns", type=int, default=300)
    p.add_argument("--embedder", default="hashing", choices=["local", "hashing"])
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--tmp", default=None)
    args = p.parse_args(argv)
    systems = ["chroma", "ucma"]
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in systems}
    started = time.perf_counter()
    for rep in range(args.repeat):
        for system in systems if rep % 2 == 0 else systems[::-1]:
            job = {
                "system": system,
                "n": args.n,
                "turns": args.turns,
                "embedder": args.embedder,
                "batch": args.batch,
                "seed": args.seed,
                "tmp": args.tmp,
            }
            runs[system].append(run_job(job))
            elapsed = time.perf_counter() - started
            print(f"[{elapsed:7.1f}s] {system} run {rep + 1}/{args.repeat}", file=sys.stderr)
    print(render(runs, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
