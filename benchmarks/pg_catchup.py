"""The exclusive catch-up of a shared memory's rebuild (re-key, repair): what it reads.

Run: ``python -m benchmarks.pg_catchup [--rows 2000,20000,100000] [--changed 20] [--repeat 7]``.
It starts a throwaway PostgreSQL 15 cluster and a ``chroma run`` server (as the tests do),
creates one shared memory, fills its ``records`` table with ``--rows`` rows by SQL (texts
and stored fields the size of a chat turn's; the statistics triggers run as for any
write), changes ``--changed`` of them, and times, turn by turn on the same table, what
the catch-up does under the write lock to find the rows written since the copy began:

* before (the version up to this change): an md5 of every row's text and fields,
  computed by PostgreSQL, read and compared in Python with the digests of the copy;
* now: the rows whose change number is above the one noted when the copy began (an
  index range, :mod:`ucma_core.storage.postgres.repair`).

It prints the median of ``--repeat`` turns per size in a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_OLD = "SELECT id, md5(content || chr(1) || stored) FROM records WHERE stored IS NOT NULL"
_NEW = "SELECT id FROM records WHERE changed > %s"
_FILL = (
    "INSERT INTO records (id, content, user_id, agent_id, session_id, memory_type, ts, stored) "
    "SELECT 'r' || lpad(g::text, 8, '0'), 'Ana noted item ' || g || ' about the harbour crane and the ferry "
    "timetable for the weekend', 'ana', '', 's' || (g / 50), 'episodic', g, %s "
    "FROM generate_series(%s::int, %s::int) g"
)


def _median_ms(run: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def _measure(conn: Any, rows: int, changed: int, repeat: int) -> tuple[float, float]:
    """(before, now) median ms of the catch-up's read on a table of ``rows`` rows."""
    digests = {r[0]: r[1] for r in conn.execute(_OLD)}  # what the copy saw
    since = int(conn.execute("SELECT coalesce(max(changed), 0) FROM records").fetchone()[0])
    step = max(1, rows // changed)
    touched = [f"r{n:08d}" for n in range(1, rows + 1, step)][:changed]
    conn.execute("UPDATE records SET stored = stored || ' ' WHERE id = ANY(%s)", (touched,))
    committed = set(digests)

    def before() -> None:
        now = {r[0]: r[1] for r in conn.execute(_OLD) if r[0] in committed}
        found = [i for i, d in now.items() if digests.get(i) != d]
        assert len(found) == changed

    def after() -> None:
        found = {r[0] for r in conn.execute(_NEW, (since,))} & committed
        assert len(found) == changed

    old, new = [], []
    for _ in range(repeat):  # in turns: both see the same machine state
        old.append(_median_ms(before, 1))
        new.append(_median_ms(after, 1))
    return statistics.median(old), statistics.median(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", default="2000,20000,100000")
    parser.add_argument("--changed", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    sys.path.insert(0, str(ROOT))
    import psycopg

    from tests.servers import HOST, throwaway_servers
    from ucma_core import ChromaConfig, Memory, MemoryConfig
    from ucma_core.embedders import HashingEmbedder
    from ucma_core.storage.postgres import PostgresTarget

    stored = json.dumps({f"meta:k{n}": f"value {n}" for n in range(12)})
    table = []
    with throwaway_servers(prefix="ucma-bench-") as servers:
        config = MemoryConfig(chroma=ChromaConfig(host=HOST, port=servers.chroma_port))
        for rows in sizes:
            url = servers.url(f"c{uuid.uuid4().hex[:8]}")
            with Memory(url, embedder=HashingEmbedder(), config=config):
                pass  # the tables
            target = PostgresTarget.parse(url)
            with psycopg.connect(target.conninfo, autocommit=True) as conn:
                conn.execute(f'SET search_path TO "{target.schema}"')
                conn.execute(_FILL, (stored, 1, rows))
                conn.execute("VACUUM ANALYZE records")
                table.append((rows, *_measure(conn, rows, args.changed, args.repeat)))
    print(
        f"\ncatch-up read under the write lock, {args.changed} rows changed, median of {args.repeat} turns\n"
    )
    print("| rows | before: md5 of every row, ms | now: rows changed since, ms | before / now |")
    print("|---:|---:|---:|---:|")
    for rows, old, new in table:
        print(f"| {rows:,} | {old:.1f} | {new:.2f} | {old / new:.0f}× |")


if __name__ == "__main__":
    main()
