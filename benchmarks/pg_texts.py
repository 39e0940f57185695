"""Reading candidates' texts from a shared memory's ``records`` table: ``texts`` (the text
only) against ``rows`` (text and stored fields, decoded), side by side in the same run.

Run: ``python -m benchmarks.pg_texts [--rows 2000] [--ids 40] [--reads 300]``.
It starts a throwaway PostgreSQL 15 cluster (as the tests do), fills a new memory's
``records`` table with ``--rows`` records whose stored fields are the size a memory's are,
then times ``--reads`` reads of ``--ids`` random ids each way, alternating. Prints a
Markdown table of p50 / p95 in ms and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any


def _ms(times: list[float]) -> str:
    times = sorted(times)
    return f"{1000 * statistics.median(times):.3f} | {1000 * times[int(0.95 * (len(times) - 1))]:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--ids", type=int, default=40)
    parser.add_argument("--reads", type=int, default=300)
    args = parser.parse_args()

    import psycopg

    from tests.servers import throwaway_servers
    from ucma_core.storage.keywords import KeywordRow
    from ucma_core.storage.postgres import PostgresTarget
    from ucma_core.storage.postgres.connection import create_schema
    from ucma_core.storage.postgres.keywords import PgKeywordIndex

    rng = random.Random(7)
    stored: dict[str, Any] = {f"t_{n:040x}": True for n in range(6)} | {
        "record": "x" * 300,
        "importance": 0.5,
    }
    rows = [
        KeywordRow(
            f"m{n:06d}", f"note {n} about the garden and the river", "ana", None, None, "episodic", n, stored
        )
        for n in range(args.rows)
    ]
    with throwaway_servers(prefix="ucma-bench-texts-") as servers:
        target = PostgresTarget.parse(servers.url("t" + uuid.uuid4().hex[:12]))
        with psycopg.connect(target.conninfo, autocommit=True) as conn:
            create_schema(conn, target)
            index = PgKeywordIndex(conn)
            index.add(rows)
            ways: dict[str, Callable[[list[str]], object]] = {"rows": index.rows, "texts": index.texts}
            times: dict[str, list[float]] = {name: [] for name in ways}
            for _ in range(args.reads):
                ids = [r.id for r in rng.sample(rows, args.ids)]
                for name, read in ways.items():
                    start = time.perf_counter()
                    read(ids)
                    times[name].append(time.perf_counter() - start)
    print(f"| read of {args.ids} ids ({args.rows} rows) | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for name, taken in times.items():
        print(f"| `{name}` | {_ms(taken)} |")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
