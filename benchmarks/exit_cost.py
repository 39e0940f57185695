"""What a script's end costs with and without ``close()``, and what the next open pays for it.

    python -m benchmarks.exit_cost [--records 20 900] [--repeat 3] [--servers]

A child interpreter opens a memory (hashing embedder), observes ``--records`` notes one by
one, asks five questions, and ends either with ``mem.close()`` (``close``) or by simply
ending (``plain exit``). ``end ms`` is the wall time from the end of that work to the
child process being gone (the close, or what the interpreter's exit does, plus the
interpreter's own teardown); ``reopen + first remember ms`` is what the next process pays
to open the memory and answer one question. Median of ``--repeat`` runs, load average at
the end. ``--servers`` also runs it on a memory in PostgreSQL (throwaway PostgreSQL and
Chroma servers, see ``tests/servers.py``).

Run it on two checkouts (``PYTHONPATH=…``) to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

CHILD = """
import sys, time
from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
target, records, port, close = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "close"
config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=port)) if port else MemoryConfig()
mem = Memory(target, embedder=HashingEmbedder(), config=config)
for n in range(records):
    mem.observe(f"note {n}: the garden plan number {n}", user_id="ana", importance=0.9)
for n in range(5):
    mem.remember(f"garden plan {n}", user_id="ana")
print(time.time(), flush=True)
if close:
    mem.close()
"""


def _run(target: str, records: int, port: int, ending: str) -> tuple[float, float]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, target, str(records), str(port), ending],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    gone = time.time()
    ended = float(proc.stdout.split()[-1])
    config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=port)) if port else MemoryConfig()
    start = time.perf_counter()
    with Memory(target, embedder=HashingEmbedder(), config=config) as mem:
        mem.remember("garden plan", user_id="ana")
        reopened = time.perf_counter() - start
    return 1000 * (gone - ended), 1000 * reopened


def _table(name: str, targets: Callable[[], str], records_list: list[int], repeat: int, port: int) -> None:
    print(f"\n{name}\n")
    print("| records | ending | end ms | reopen + first remember ms |")
    print("|---:|---|---:|---:|")
    for records in records_list:
        for ending in ("close", "plain"):
            runs = [_run(targets(), records, port, ending) for _ in range(repeat)]
            end, reopen = (statistics.median(column) for column in zip(*runs, strict=True))
            label = "close()" if ending == "close" else "plain exit"
            print(f"| {records} | {label} | {end:.0f} | {reopen:.0f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[20, 900])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--servers", action="store_true", help="also a memory in PostgreSQL")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folders = (str(Path(tmp) / uuid.uuid4().hex) for _ in iter(int, 1))
        _table("memory folder", lambda: next(folders), args.records, args.repeat, 0)
    if args.servers:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.servers import throwaway_servers

        with throwaway_servers(prefix="ucma-exit-cost-") as servers:
            _table(
                "memory in PostgreSQL",
                lambda: servers.url("t" + uuid.uuid4().hex[:12]),
                args.records,
                args.repeat,
                servers.chroma_port,
            )
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
