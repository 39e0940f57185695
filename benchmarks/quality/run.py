"""Run the conversational-memory retrieval benchmark and print the table.

    python -m benchmarks.quality.run [--embedder hashing|local] [--limit N] [--json results.json]

Methods (rows): ``bm25`` (keyword search alone), ``dense`` (plain Chroma with the chosen
embedder), ``rrf`` (naive reciprocal-rank fusion of bm25 and dense: what "just add BM25" gives)
and ``ucma`` (the library's ``Memory.remember``, same embedder; skipped when ``ucma_core``
cannot be imported). Two diagnostic rows, ``bm25-noname`` and ``dense-noname``, query the same
indexes with the asking user's own first name removed from the question: questions name the
user ("Where does Ana's sister live?") while the evidence never does, so the gap between a row
and its -noname twin is what that name alone costs the method.

Columns: recall@5/@10/@20 and MRR (over the top 20), per question kind and overall. Every
method sees the same turns and searches only the asking user's turns.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .baselines import BM25Index, DenseIndex, rrf
from .embedders import make_embedder
from .generate import DEFAULT_OUT, KINDS, build_dataset, dumps
from .metrics import KS, evaluate, format_table

TOP_K = 20
Rankings = dict[str, list[str]]


def load_dataset(path: Path) -> dict:
    """The dataset at ``path``; generated in memory (not written) when the file is absent."""
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return json.loads(dumps(build_dataset()))


def select(dataset: dict, limit: int | None) -> tuple[list[dict], list[dict]]:
    """Questions to ask (at most ``limit`` per kind, spread over users) and the turns of their users."""
    questions = dataset["questions"]
    if limit is not None:
        chosen = []
        for kind in KINDS:
            by_user: dict[str, list[dict]] = {}
            for q in questions:
                if q["kind"] == kind:
                    by_user.setdefault(q["user_id"], []).append(q)
            queues = list(by_user.values())
            picked: list[dict] = []
            while len(picked) < limit and any(queues):
                for queue in queues:
                    if queue and len(picked) < limit:
                        picked.append(queue.pop(0))
            chosen += picked
        questions = sorted(chosen, key=lambda q: q["qid"])
    users = {q["user_id"] for q in questions}
    return questions, [t for t in dataset["turns"] if t["user_id"] in users]


def _items(turns: Sequence[dict]) -> list[tuple[str, str, str]]:
    return [(t["turn_id"], t["user_id"], t["text"]) for t in turns]


def run_bm25(
    turns: Sequence[dict], questions: Sequence[dict], names: dict[str, str] | None = None
) -> tuple[Rankings, Rankings]:
    """BM25 rankings for the questions as asked and, if ``names`` is given, without the user's name."""
    index = BM25Index()
    index.add(_items(turns))
    plain = {q["qid"]: index.search(q["question"], q["user_id"], TOP_K) for q in questions}
    stripped = (
        {
            q["qid"]: index.search(without_user_name(q["question"], names[q["user_id"]]), q["user_id"], TOP_K)
            for q in questions
        }
        if names
        else {}
    )
    return plain, stripped


def without_user_name(question: str, name: str) -> str:
    """``question`` with the asking user's own first name (and its possessive) removed."""
    return re.sub(r"\s{2,}", " ", re.sub(rf"\b{re.escape(name)}(?:'s)?\b", "", question)).strip()


def run_dense(
    turns: Sequence[dict], questions: Sequence[dict], embedder: Any, names: dict[str, str] | None = None
) -> tuple[Rankings, Rankings]:
    """Dense rankings for the questions as asked and, if ``names`` is given, without the user's name."""
    index = DenseIndex(embedder, search_ef=max(100, len(turns)))  # exact: the same rankings every run
    try:
        index.add(_items(turns))
        plain = {q["qid"]: index.search(q["question"], q["user_id"], TOP_K) for q in questions}
        stripped = (
            {
                q["qid"]: index.search(
                    without_user_name(q["question"], names[q["user_id"]]), q["user_id"], TOP_K
                )
                for q in questions
            }
            if names
            else {}
        )
        return plain, stripped
    finally:
        index.close()


def observe_history(mem: Any, turns: Sequence[dict], imported: set[str], now: dict[str, float]) -> None:
    """Observe every turn with its timestamp, in time order, through ``mem.observe_many``.

    Users in ``imported`` are observed the way an application imports a chat export: after the
    fact, with the clock (``now["t"]``) one day past their last turn. The others are observed as
    they happen: the clock follows the turns.
    """

    def item(t: dict) -> dict:
        return {
            "content": t["text"],
            "source": "assistant" if t["speaker"] == "assistant" else "user",
            "user_id": t["user_id"],
            "session_id": t["session_id"],
            "timestamp": float(t["timestamp"]),
            "metadata": {"turn_id": t["turn_id"], "speaker": t["speaker"]},
            # who spoke, as a user of the library would record it
            "participants": [] if t["speaker"] == "assistant" else [t["speaker"]],
        }

    ordered = sorted(turns, key=lambda t: (t["timestamp"], t["turn_id"]))
    live = [t for t in ordered if t["user_id"] not in imported]
    later = [t for t in ordered if t["user_id"] in imported]
    batch = 256
    for start in range(0, len(live), batch):
        chunk = live[start : start + batch]
        now["t"] = float(chunk[-1]["timestamp"])
        mem.observe_many([item(t) for t in chunk])
    if later:
        now["t"] = float(later[-1]["timestamp"]) + 86_400.0
        for start in range(0, len(later), batch):
            mem.observe_many([item(t) for t in later[start : start + batch]])


def imported_users(dataset: dict) -> set[str]:
    """Users whose history the benchmark imports after the fact (``"imported": true``)."""
    return {u["user_id"] for u in dataset["users"] if u.get("imported")}


def run_ucma(
    turns: Sequence[dict],
    questions: Sequence[dict],
    embedder: Any,
    imported: set[str] | None = None,
    *,
    postgres: str | None = None,
    chroma: str | None = None,
) -> Rankings:
    """Observe every turn (see :func:`observe_history`), then ``remember`` at ``asked_at``.

    In a fresh memory folder, or with ``postgres`` (a ``postgresql://`` URL naming a new
    memory) and ``chroma`` (``host:port`` of a Chroma server) in a shared memory.
    """
    from ucma_core import ChromaConfig, Memory, MemoryConfig

    folder = tempfile.mkdtemp(prefix="ucma-quality-")
    now = {"t": float(min(t["timestamp"] for t in turns))}
    clock: Callable[[], float] = lambda: now["t"]  # noqa: E731  the asked_at, or the import / latest turn time
    # an exact vector search (search_ef of at least the number of turns): the same rankings every run
    exact = ChromaConfig(search_ef=max(100, len(turns)))
    config = MemoryConfig(importance_threshold=0.0, chroma=exact)
    target: str = folder
    if postgres is not None:
        host, _, port = (chroma or "").rpartition(":")
        if not host or not port.isdigit():
            raise SystemExit("--postgres needs --chroma HOST:PORT (the Chroma server keeping the vectors)")
        server = ChromaConfig(host=host, port=int(port), search_ef=exact.search_ef)
        config = MemoryConfig(importance_threshold=0.0, chroma=server)
        target = postgres
    try:
        mem = Memory(target, embedder=embedder, config=config, clock=clock)
        try:
            observe_history(mem, turns, imported or set(), now)
            out: Rankings = {}
            for q in questions:
                now["t"] = float(q["asked_at"])
                hits = mem.remember(q["question"], k=TOP_K, user_id=q["user_id"], now=q["asked_at"])
                ranked = [h.metadata.get("turn_id") for h in hits]
                out[q["qid"]] = [tid for tid in dict.fromkeys(ranked) if tid]
            return out
        finally:
            mem.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Conversational-memory retrieval benchmark (recall@k, MRR).")
    parser.add_argument(
        "--embedder",
        choices=["hashing", "local"],
        default="hashing",
        help="embedder for dense and ucma: hashing (no model) or local (MiniLM int8)",
    )
    parser.add_argument("--limit", type=int, default=None, help="at most N questions per kind (a quick run)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_OUT, help="dataset JSON (default: the shipped one)"
    )
    parser.add_argument(
        "--methods",
        default="bm25,dense,rrf,ucma,bm25-noname,dense-noname",
        help="comma-separated subset of bm25, dense, dense-noname, rrf, ucma",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the scores here")
    parser.add_argument(
        "--postgres",
        default=None,
        help="run ucma on a shared memory: a postgresql:// URL naming a new memory (needs --chroma)",
    )
    parser.add_argument("--chroma", default=None, help="HOST:PORT of the Chroma server for --postgres")
    parser.add_argument(
        "--servers",
        action="store_true",
        help="run ucma on a shared memory in a throwaway PostgreSQL 15 cluster and Chroma server "
        "(started and removed by the run, as the tests do)",
    )
    args = parser.parse_args(argv)
    if args.servers:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.servers import throwaway_servers

        with throwaway_servers(prefix="ucma-quality-") as servers:
            rest = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--servers"]
            return main(
                [*rest, "--postgres", servers.url("quality"), "--chroma", f"127.0.0.1:{servers.chroma_port}"]
            )

    dataset = load_dataset(args.data)
    questions, turns = select(dataset, args.limit)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    names = {u["user_id"]: u["name"] for u in dataset["users"]}
    n_users, n_sessions = len({t["user_id"] for t in turns}), len({t["session_id"] for t in turns})
    print(f"dataset: {n_users} users, {n_sessions} sessions, {len(turns)} turns, {len(questions)} questions")
    print(
        "ucma on: "
        + ("a shared memory in PostgreSQL + a Chroma server" if args.postgres else "a memory folder")
    )
    embedder, origin = (None, "-")
    if any(m in methods for m in ("dense", "dense-noname", "rrf", "ucma")):
        embedder, origin = make_embedder(args.embedder)
        print(f"embedder: {origin}")

    rankings: dict[str, Rankings] = {}
    timings: dict[str, float] = {}
    notes: list[str] = []
    failed = False
    for method in methods:
        started = time.perf_counter()
        if method in ("bm25", "bm25-noname"):
            if method not in rankings:
                plain, stripped = run_bm25(turns, questions, names)
                rankings.update(
                    {m: r for m, r in (("bm25", plain), ("bm25-noname", stripped)) if m in methods}
                )
        elif method in ("dense", "dense-noname"):
            if method not in rankings:
                plain, stripped = run_dense(turns, questions, embedder, names)
                rankings.update(
                    {m: r for m, r in (("dense", plain), ("dense-noname", stripped)) if m in methods}
                )
        elif method == "rrf":
            bm25 = rankings.get("bm25") or run_bm25(turns, questions)[0]
            dense = rankings.get("dense") or run_dense(turns, questions, embedder)[0]
            rankings[method] = {q["qid"]: rrf([bm25[q["qid"]], dense[q["qid"]]], TOP_K) for q in questions}
        elif method == "ucma":
            try:
                import ucma_core  # noqa: F401
            except ImportError as exc:
                notes.append(f"ucma: skipped, ucma_core is not importable ({exc})")
                continue
            try:
                rankings[method] = run_ucma(
                    turns,
                    questions,
                    embedder,
                    imported_users(dataset),
                    postgres=args.postgres,
                    chroma=args.chroma,
                )
            except Exception as exc:  # report the library's failure, still print the baselines
                notes.append(f"ucma: FAILED with {type(exc).__name__}: {exc}")
                failed = True
                continue
        else:
            parser.error(f"unknown method {method!r}")
        timings[method] = time.perf_counter() - started

    results = {m: evaluate(rankings[m], questions) for m in methods if m in rankings}
    groups = ["overall"] + [k for k in KINDS if any(q["kind"] == k for q in questions)]
    print()
    print(format_table(results, groups))
    print("seconds: " + ", ".join(f"{m} {s:.1f}" for m, s in timings.items()))
    for note in notes:
        print(note)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"embedder": origin, "ks": list(KS), "results": results, "seconds": timings, "notes": notes},
                indent=2,
            )
            + "\n"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
