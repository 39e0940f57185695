"""What ``forget_user`` costs, and what the queries right after it cost.

    python -m benchmarks.forget_cost [--records 200 2000] [--queries 5]

For each size, a folder holds ``--records`` memories of two users (hashing embedder, no
model), observed in bulk and flushed. One user is forgotten, then ``--queries`` questions
are asked of the other. The first question after the forget is reported apart (it is
the one that opens Chroma's vector index). Wall times in ms, with the load average.

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


def _run(records: int, queries: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp), embedder=HashingEmbedder())
        try:
            items = [
                f"note {n}: the garden plan number {n} for the {('ana', 'bob')[n % 2]} team"
                for n in range(records)
            ]
            for user in ("ana", "bob"):
                mem.observe_many([t for t in items if user in t], user_id=user, importance=0.9)
            mem.flush()
            start = time.perf_counter()
            mem.forget_user("ana")
            forget = time.perf_counter() - start
            times = []
            for n in range(queries):
                start = time.perf_counter()
                mem.remember(f"garden plan {n}", user_id="bob")
                times.append(time.perf_counter() - start)
        finally:
            mem.close()
    rest = statistics.median(times[1:]) if len(times) > 1 else float("nan")
    return 1000 * forget, 1000 * times[0], 1000 * rest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--queries", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print("| records | forget_user ms | first remember ms | later remember p50 ms |")
    print("|---:|---:|---:|---:|")
    for records in args.records:
        forget, first, rest = _run(records, args.queries)
        print(f"| {records} | {forget:.0f} | {first:.1f} | {rest:.1f} |", flush=True)


if __name__ == "__main__":
    main()
