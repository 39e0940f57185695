"""How long one sleep-consolidation cycle takes over N episodes with the offline provider.

    python -m benchmarks.consolidation [--episodes 1000] [--embedder local|hashing]

The episodes are the first N turns (in time order) of the shipped conversation
benchmark (``benchmarks/quality``), observed with their real timestamps; the
clock is then moved three days past the last one, so every phase has work to do
(compression, grouping, fact extraction, patterns, merging, pruning). Prints the
cycle's wall time, its report, and the time per episode.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from ucma_core import Memory, MemoryConfig

from .quality.embedders import make_embedder
from .quality.generate import DEFAULT_OUT
from .quality.run import load_dataset
from .quality.tune import ingest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--embedder", choices=["hashing", "local"], default="local")
    args = parser.parse_args()
    turns = sorted(load_dataset(DEFAULT_OUT)["turns"], key=lambda t: (t["timestamp"], t["turn_id"]))
    turns = turns[: args.episodes]
    embedder, where = make_embedder(args.embedder)
    folder = Path(tempfile.mkdtemp(prefix="ucma-consolidation-")) / "m"
    try:
        ingest(folder, turns, embedder, exact=False)  # Chroma's default search, as users have it
        clock = {"t": float(turns[-1]["timestamp"]) + 3 * 86_400.0}
        config = MemoryConfig(importance_threshold=0.0)
        with Memory(folder, embedder=embedder, config=config, clock=lambda: clock["t"]) as mem:
            before = mem.stats()["by_type"]
            started = time.perf_counter()
            report = mem.consolidate()
            seconds = time.perf_counter() - started
            after = mem.stats()["by_type"]
        print(f"embedder: {where}")
        print(f"episodes observed: {len(turns)}")
        print(f"consolidation cycle: {seconds:.2f} s ({1000 * seconds / len(turns):.2f} ms per episode)")
        print(f"memories before: {before}")
        print(f"memories after:  {after}")
        print("| phase | what it did |")
        print("|---|---|")
        for phase, counts in report.phases.items():
            print(f"| {phase} | {', '.join(f'{k} {v}' for k, v in counts.items()) or '-'} |")
        if report.errors:
            print("errors:", report.errors)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
