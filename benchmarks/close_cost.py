"""What closing a memory folder costs, and what the first question after reopening it costs.

    python -m benchmarks.close_cost [--records 20 200 900] [--repeat 3]

For each size, a folder holds ``--records`` memories (hashing embedder, no model, fewer
than Chroma's 1,000 changes after which it saves its vector index by itself), observed
in bulk and flushed, then closed (``close after writes``). It is reopened, asked one
question (``first remember``) and closed again (``close after reads``). Wall times in
ms, median of ``--repeat`` runs, with the load average at the end.

Run it on two checkouts (``PYTHONPATH=…``) to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder


def _run(records: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp), embedder=HashingEmbedder())
        mem.observe_many([f"note {n}: the garden plan number {n}" for n in range(records)], importance=0.9)
        mem.flush()
        start = time.perf_counter()
        mem.close()
        written = time.perf_counter() - start
        mem = Memory(Path(tmp), embedder=HashingEmbedder())
        start = time.perf_counter()
        mem.remember("garden plan")
        first = time.perf_counter() - start
        start = time.perf_counter()
        mem.close()
        read = time.perf_counter() - start
    return 1000 * written, 1000 * first, 1000 * read


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[20, 200, 900])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print("| records | close after writes ms | first remember after reopen ms | close after reads ms |")
    print("|---:|---:|---:|---:|")
    for records in args.records:
        runs = [_run(records) for _ in range(args.repeat)]
        written, first, read = (statistics.median(column) for column in zip(*runs, strict=True))
        print(f"| {records} | {written:.1f} | {first:.1f} | {read:.1f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
