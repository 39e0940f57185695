"""Keyword search on a shared memory's ``records`` table: search and write latency,
this checkout against another one (``--code``), side by side in the same run.

Run: ``python -m benchmarks.pg_keywords [--rows 12000] [--searches 200] [--code PATH]``.
It starts a throwaway PostgreSQL 15 cluster (as the tests do), and for each checkout
(this one, then ``--code``'s, alternating rounds) fills a new memory's ``records``
table with the same ``--rows`` synthetic texts (4 to 16 words of 784, Zipf-distributed; 4 users)
through that checkout's :class:`~ucma_core.storage.postgres.keywords.PgKeywordIndex`,
then times ``--searches`` keyword searches (one user's scope, 20 hits) and 200
one-row writes and deletes. Prints a Markdown table of p50 / p95 / mean in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SYLLABLES = "har gar inv fli rec con doc lap riv isl fer cel spr win".split()
_WORDS = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("a", "o", "en", "ix")]  # 784 words


def _texts(n: int, seed: int = 7) -> list[tuple[str, str, float]]:
    rng = random.Random(seed)
    weights = [1 / (r + 1) for r in range(len(_WORDS))]
    out = []
    for i in range(n):
        words = rng.choices(_WORDS, weights, k=rng.randint(4, 16))
        out.append((" ".join(words), f"user{i % 4}", float(i)))
    return out


def _queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    weights = [1 / (r + 1) for r in range(len(_WORDS))]
    return [" ".join(rng.choices(_WORDS, weights, k=rng.randint(1, 4))) for _ in range(n)]


def _work(conninfo: str, memory: str, rows: int, searches: int) -> dict[str, list[float]]:
    import psycopg

    from ucma_core.storage.keywords import KeywordRow
    from ucma_core.storage.postgres import PostgresTarget
    from ucma_core.storage.postgres.connection import create_schema
    from ucma_core.storage.postgres.keywords import PgKeywordIndex

    target = PostgresTarget.parse(f"{conninfo}?memory={memory}")
    with psycopg.connect(target.conninfo, autocommit=True) as conn:
        create_schema(conn, target)
        index = PgKeywordIndex(conn)
        data = [
            KeywordRow(f"r{i}", t, u, None, None, "episodic", ts) for i, (t, u, ts) in enumerate(_texts(rows))
        ]
        for start in range(0, len(data), 1000):
            index.add(data[start : start + 1000])
        conn.execute("VACUUM ANALYZE records")
        search: list[float] = []
        for query in _queries(searches):
            t = time.perf_counter()
            index.search(query, 20, user_id="user1")
            search.append(time.perf_counter() - t)
        write: list[float] = []
        delete: list[float] = []
        for i, (text, user, ts) in enumerate(_texts(200, seed=99)):
            row = KeywordRow(f"w{i}", text, user, None, None, "episodic", ts)
            t = time.perf_counter()
            index.add([row])
            write.append(time.perf_counter() - t)
            t = time.perf_counter()
            index.delete([row.id])
            delete.append(time.perf_counter() - t)
    return {"search": search, "write": write, "delete": delete}


def _measure(code: Path, conninfo: str, rows: int, searches: int) -> dict[str, list[float]]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", conninfo, str(rows), str(searches)],
        capture_output=True,
        text=True,
        check=True,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    return json.loads(out.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=12_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--code", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--worker", nargs=3)
    args = parser.parse_args()
    if args.worker:
        conninfo, rows, searches = args.worker
        print(json.dumps(_work(conninfo, "k" + uuid.uuid4().hex[:8], int(rows), int(searches))))
        return
    sys.path.insert(0, str(ROOT))
    from tests.servers import throwaway_servers

    codes = [("this checkout", ROOT)] + ([("--code", args.code.resolve())] if args.code else [])
    results: dict[str, dict[str, list[float]]] = {name: {} for name, _ in codes}
    with throwaway_servers(prefix="ucma-bench-kw-") as servers:
        base = servers.url("x").split("?")[0]
        for _ in range(args.rounds):
            for name, code in codes:
                for key, values in _measure(code, base, args.rows, args.searches).items():
                    results[name].setdefault(key, []).extend(values)

    def pct(xs: list[float], q: float) -> float:
        s = sorted(xs)
        return 1000 * s[min(len(s) - 1, int(q * len(s)))]

    load = os.getloadavg()[0]
    print(f"\n{args.rows} rows, {args.searches} searches x {args.rounds} rounds, load average {load:.2f}\n")
    print("| code | call | p50 ms | p95 ms | mean ms |")
    print("|---|---|---:|---:|---:|")
    for name, _ in codes:
        for key, values in results[name].items():
            print(
                f"| {name} | {key} | {pct(values, 0.5):.2f} | {pct(values, 0.95):.2f} | "
                f"{1000 * statistics.fmean(values):.2f} |"
            )


if __name__ == "__main__":
    main()
