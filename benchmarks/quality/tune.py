"""Tune ``remember()``'s fusion and ranking weights on the conversation benchmark.

    python -m benchmarks.quality.tune [--embedder hashing|local] [--split dev|test|all] [--rounds 2]

The turns of the chosen users are observed once into a memory folder; every
candidate configuration then runs on a fresh copy of that folder (so one run's
reinforcement does not leak into the next) through the public API only. The
search is coordinate descent: one weight at a time over a few values, keeping
a change only when it raises the objective (mean of recall@5, recall@10 and MRR).

``--split dev`` tunes on the first half of the version-1 users and the first half of the
harder ones (sorted by id); report the chosen weights on ``--split test`` (the other
halves) with ``run.py`` to see that they carry over.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ucma_core import ChromaConfig, Memory, MemoryConfig

from .embedders import make_embedder
from .generate import DEFAULT_OUT
from .metrics import evaluate
from .run import TOP_K, imported_users, load_dataset, observe_history

GRID: dict[str, tuple[float, ...]] = {
    "fusion.dense": (0.5, 0.75, 1.0, 1.5),
    "fusion.keyword": (0.35, 0.5, 0.75, 1.0),
    "fusion.dense_floor": (0.0, 0.1, 0.25, 0.4, 0.5),
    "fusion.rank_fusion": (0.0, 0.15, 0.3, 0.5),
    "fusion.time": (0.6, 1.0, 1.5, 2.0),
    "fusion.recency": (0.5, 1.0, 1.5),
    "fusion.context": (0.0, 0.4, 0.6, 0.8),
    "fusion.event": (0.5, 0.7, 0.85, 1.0),
    "fusion.hop": (0.0, 0.3, 0.5),
    "fusion.speaker": (0.0, 0.3, 0.6),
    "fusion.entity": (0.0, 0.2, 0.4, 0.8),
    "fusion.graph": (0.0, 0.1, 0.2, 0.4),
    "fusion.mmr_lambda": (0.8, 0.9, 1.0),
    "ranking.relevance": (0.55, 0.7, 0.85),
    "ranking.recency": (0.0, 0.05, 0.15),
    "ranking.retention": (0.0, 0.05, 0.15),
    "ranking.importance": (0.0, 0.05, 0.15),
}


def split_users(dataset: dict[str, Any], split: str) -> set[str]:
    """The users of a split: each half takes half of the live users and half of the imported ones."""
    imported = imported_users(dataset)
    chosen: set[str] = set()
    for group in (sorted({t["user_id"] for t in dataset["turns"]} - imported), sorted(imported)):
        half = len(group) // 2
        chosen.update(group[:half] if split == "dev" else group[half:] if split == "test" else group)
    return chosen


def ingest(
    folder: Path,
    turns: list[dict[str, Any]],
    embedder: Any,
    imported: set[str] | None = None,
    *,
    exact: bool = True,
) -> None:
    """Observe ``turns`` into a new memory folder as :func:`.run.run_ucma` does.

    With ``exact`` Chroma searches the folder exactly (``search_ef`` of at least the number of
    turns, kept in the collection), so two folders built from the same turns rank alike; with
    Chroma's default search the index it builds in parallel differs from one build to the next,
    and so do rankings.
    """
    clock = {"t": float(min(t["timestamp"] for t in turns))}
    chroma = ChromaConfig(search_ef=max(100, len(turns))) if exact else ChromaConfig()
    config = MemoryConfig(importance_threshold=0.0, chroma=chroma)
    with Memory(folder, embedder=embedder, config=config, clock=lambda: clock["t"]) as mem:
        observe_history(mem, turns, imported or set(), clock)


def with_value(config: MemoryConfig, key: str, value: float) -> MemoryConfig:
    group, name = key.split(".")
    section = dataclasses.replace(getattr(config, group), **{name: value})
    return dataclasses.replace(config, **{group: section})


def score(base: Path, config: MemoryConfig, questions: list[dict[str, Any]], embedder: Any) -> float:
    work = Path(tempfile.mkdtemp(prefix="ucma-tune-")) / "m"
    shutil.copytree(base, work)
    try:
        clock = {"t": 0.0}
        with Memory(work, embedder=embedder, config=config, clock=lambda: clock["t"]) as mem:
            rankings = {}
            for q in questions:
                clock["t"] = float(q["asked_at"])
                hits = mem.remember(q["question"], k=TOP_K, user_id=q["user_id"], now=q["asked_at"])
                rankings[q["qid"]] = [h.metadata.get("turn_id") for h in hits]
        overall = evaluate(rankings, questions)["overall"]
        return (overall["recall@5"] + overall["recall@10"] + overall["mrr"]) / 3
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=["hashing", "local"], default="hashing")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    dataset = load_dataset(args.data)
    users = split_users(dataset, args.split)
    turns = [t for t in dataset["turns"] if t["user_id"] in users]
    questions = [q for q in dataset["questions"] if q["user_id"] in users]
    embedder, _ = make_embedder(args.embedder)
    base = Path(tempfile.mkdtemp(prefix="ucma-tune-base-")) / "m"
    try:
        ingest(base, turns, embedder, imported_users(dataset))
        config = MemoryConfig(importance_threshold=0.0)
        best = score(base, config, questions, embedder)
        print(f"users {sorted(users)}: {len(turns)} turns, {len(questions)} questions; start {best:.4f}")
        for round_no in range(args.rounds):
            for key, values in GRID.items():
                for value in values:
                    try:
                        candidate = with_value(config, key, value)
                    except ValueError:
                        continue
                    result = score(base, candidate, questions, embedder)
                    if result > best + 1e-4:
                        best, config = result, candidate
                        print(f"  round {round_no + 1}: {key}={value} -> {best:.4f}", flush=True)
        print("best:", best)
        print("fusion:", config.fusion)
        print("ranking:", config.ranking)
    finally:
        shutil.rmtree(base.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
