"""Run the held-out benchmark and print recall@5 / @10 / @20 and MRR per question kind.

    python -m benchmarks.heldout.run --embedder hashing --methods bm25,dense,ucma
    python -m benchmarks.heldout.run --limit 8            # at most 8 questions per kind: a smoke run

Methods (rows) are those of :mod:`benchmarks.quality.run`, whose code this runner calls:
``bm25``, ``dense`` (plain Chroma, same embedder), ``rrf`` (their naive fusion) and ``ucma``
(``Memory.remember``). ``bm25-noname`` and ``dense-noname`` ask the same indexes the
question with every participant's name removed.

``ucma`` keeps two memory folders. The live conversations are observed as they happen (the
clock follows the turns). The imported ones are observed after the fact, the clock one day
past their last turn, then one default ``consolidate()`` runs before any question is asked;
the runner prints how many of their turns, and of the evidence turns, are still stored after it.

Besides the table: recall@20 of the ``spread`` questions (answers of 3 to 6 turns), and for
``correction`` questions how often the latest statement ranks above every earlier one, and how
many of the top 5 are small talk (turns no question refers to), per question.
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

from ..quality.baselines import rrf
from ..quality.embedders import make_embedder
from ..quality.generate import dumps
from ..quality.metrics import KS, evaluate, format_table
from ..quality.run import TOP_K, Rankings, observe_history, run_bm25, run_dense, run_ucma
from .generate import DEFAULT_OUT, KINDS, SHAPES, build_dataset

METHODS = ("bm25", "dense", "rrf", "ucma", "bm25-noname", "dense-noname")


def load_dataset(path: Path) -> dict[str, Any]:
    """The dataset at ``path``; generated in memory (not written) when the file is absent."""
    text = path.read_text(encoding="utf-8") if path.exists() else dumps(build_dataset())
    data: dict[str, Any] = json.loads(text)
    return data


def select(dataset: dict[str, Any], limit: int | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Questions to ask (at most ``limit`` per kind, every ``n``-th one) and the turns of their chats."""
    questions = dataset["questions"]
    if limit is not None:
        chosen = []
        for kind in KINDS:
            of_kind = [q for q in questions if q["kind"] == kind]
            step = max(1, len(of_kind) // limit)
            chosen += of_kind[::step][:limit]
        questions = sorted(chosen, key=lambda q: q["qid"])
    chats = {q["user_id"] for q in questions}
    return questions, [t for t in dataset["turns"] if t["user_id"] in chats]


def without_names(
    questions: Sequence[dict[str, Any]], participants: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """The questions with every participant's name (and its possessive) taken out."""
    out = []
    for q in questions:
        text = q["question"]
        for name in participants[q["user_id"]]:
            text = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", "", text)
        out.append({**q, "question": re.sub(r"\s{2,}", " ", text).strip()})
    return out


def run_ucma_imported(
    turns: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]], embedder: Any
) -> tuple[Rankings, str]:
    """Import every turn at once (clock one day past the last), run one default ``consolidate()``,
    then ``remember`` at ``asked_at``. Also says how many imported turns the sleep cycle kept."""
    from ucma_core import Memory, MemoryConfig

    folder = tempfile.mkdtemp(prefix="ucma-heldout-")
    now = {"t": float(min(t["timestamp"] for t in turns))}
    clock: Callable[[], float] = lambda: now["t"]  # noqa: E731
    chats = {t["user_id"] for t in turns}
    try:
        with Memory(
            folder, embedder=embedder, config=MemoryConfig(importance_threshold=0.0), clock=clock
        ) as mem:
            observe_history(mem, turns, chats, now)
            mem.consolidate()
            kept = {
                r.metadata.get("turn_id")
                for chat in chats
                for r in mem.list_memories(user_id=chat, memory_types=["episodic"], limit=100_000)
            }
            wanted = {tid for q in questions for tid in q["evidence"]}
            note = (
                f"ucma, imported conversations after one default consolidate(): "
                f"{len(kept & {t['turn_id'] for t in turns})} of {len(turns)} turns stored as episodes "
                f"(repeated small talk is merged), {len(kept & wanted)} of {len(wanted)} evidence turns"
            )
            out: Rankings = {}
            for q in questions:
                now["t"] = float(q["asked_at"])
                hits = mem.remember(q["question"], k=TOP_K, user_id=q["user_id"], now=q["asked_at"])
                out[q["qid"]] = [tid for tid in dict.fromkeys(h.metadata.get("turn_id") for h in hits) if tid]
            return out, note
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def small_talk(dataset: dict[str, Any]) -> set[str]:
    """Turns no question refers to (as evidence, superseded statement or distractor): the chatter."""
    used = {
        tid
        for q in dataset["questions"]
        for field in ("evidence", "superseded", "distractors")
        for tid in q.get(field, ())
    }
    return {t["turn_id"] for t in dataset["turns"]} - used


def latest_first(ranked: Sequence[str], q: dict[str, Any]) -> bool:
    """Whether a correction's latest statement is ranked and above every superseded one."""
    (latest,) = q["evidence"]
    if latest not in ranked:
        return False
    rank = ranked.index(latest)
    return all(old not in ranked[:rank] for old in q["superseded"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Held-out conversational retrieval benchmark (recall@k, MRR)."
    )
    parser.add_argument("--embedder", choices=["hashing", "local"], default="hashing")
    parser.add_argument("--limit", type=int, default=None, help="at most N questions per kind (a quick run)")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_OUT, help="dataset JSON (default: the shipped one)"
    )
    parser.add_argument(
        "--methods", default="bm25,dense,ucma", help=f"comma-separated subset of {', '.join(METHODS)}"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the scores here")
    args = parser.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for method in methods:
        if method not in METHODS:
            parser.error(f"unknown method {method!r}; choose from {', '.join(METHODS)}")

    began = time.perf_counter()
    dataset = load_dataset(args.data)
    questions, turns = select(dataset, args.limit)
    participants = {u["user_id"]: u["participants"] for u in dataset["users"]}
    imported = {u["user_id"] for u in dataset["users"] if u["imported"]}
    print(
        f"dataset: {len({t['user_id'] for t in turns})} conversations, "
        f"{len({t['session_id'] for t in turns})} sessions, {len(turns)} turns, {len(questions)} questions"
    )
    embedder: Any = None
    if any(m != "bm25" and m != "bm25-noname" for m in methods):
        embedder, origin = make_embedder(args.embedder)
        print(f"embedder: {origin}")

    rankings: dict[str, Rankings] = {}
    timings: dict[str, float] = {}
    notes: list[str] = []
    for method in methods:
        started = time.perf_counter()
        if method == "bm25":
            rankings[method] = run_bm25(turns, questions)[0]
        elif method == "dense":
            rankings[method] = run_dense(turns, questions, embedder)[0]
        elif method == "bm25-noname":
            rankings[method] = run_bm25(turns, without_names(questions, participants))[0]
        elif method == "dense-noname":
            rankings[method] = run_dense(turns, without_names(questions, participants), embedder)[0]
        elif method == "rrf":
            bm25 = rankings.get("bm25") or run_bm25(turns, questions)[0]
            dense = rankings.get("dense") or run_dense(turns, questions, embedder)[0]
            rankings[method] = {q["qid"]: rrf([bm25[q["qid"]], dense[q["qid"]]], TOP_K) for q in questions}
        elif method == "ucma":
            live_q = [q for q in questions if q["user_id"] not in imported]
            late_q = [q for q in questions if q["user_id"] in imported]
            ranked: Rankings = {}
            if live_q:
                ranked |= run_ucma([t for t in turns if t["user_id"] not in imported], live_q, embedder)
            if late_q:
                found, note = run_ucma_imported(
                    [t for t in turns if t["user_id"] in imported], late_q, embedder
                )
                ranked |= found
                notes.append(note)
            rankings[method] = ranked
        timings[method] = time.perf_counter() - started

    results = {m: evaluate(rankings[m], questions) for m in methods}
    groups = ["overall"] + [k for k in KINDS if any(q["kind"] == k for q in questions)]
    print()
    print(format_table(results, groups))
    by_shape = [{**q, "kind": f"imported:{q['shape']}"} for q in questions if q["kind"] == "imported"]
    if by_shape:
        shaped = {m: evaluate(rankings[m], by_shape) for m in methods}
        shapes = [f"imported:{s}" for s in SHAPES if any(q["kind"] == f"imported:{s}" for q in by_shape)]
        print("imported conversations, by question shape")
        print(format_table(shaped, shapes))
    spread = [q for q in questions if q["shape"] == "spread"]
    if spread:
        cells = ", ".join(f"{m} {evaluate(rankings[m], spread)['overall']['recall@20']:.3f}" for m in methods)
        print(f"spread questions (n={len(spread)}, live and imported), recall@20: {cells}")
    corrections = [q for q in questions if q["shape"] == "correction"]
    if corrections:
        cells = ", ".join(
            f"{m} {sum(latest_first(rankings[m].get(q['qid'], []), q) for q in corrections)}" for m in methods
        )
        print(
            f"correction questions (n={len(corrections)}), latest statement above every earlier one: {cells}"
        )
    chatter = small_talk(dataset)

    def chatty(method: str) -> float:
        top = [rankings[method].get(q["qid"], [])[:5] for q in questions]
        return sum(t in chatter for ranked in top for t in ranked) / max(len(questions), 1)

    cells = ", ".join(f"{m} {chatty(m):.2f}" for m in methods)
    print(f"small talk (turns no question refers to) among the top 5, per question: {cells}")
    for note in notes:
        print(note)
    total = time.perf_counter() - began
    print("seconds: " + ", ".join(f"{m} {s:.1f}" for m, s in timings.items()) + f"; total {total:.1f}")
    if args.json:
        args.json.write_text(
            json.dumps({"ks": list(KS), "results": results, "seconds": timings, "notes": notes}, indent=2)
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
