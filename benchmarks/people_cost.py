"""What reading names as people costs ``remember`` in a chat: observe a turn, ask, repeat.

    python -m benchmarks.people_cost [--turns 5000] [--sessions 100] [--rounds 200]

One user's memory holds ``--turns`` turns of two named people over ``--sessions`` sessions
(hashing embedder, no model), observed in bulk. Then, ``--rounds`` times, one new turn is
observed and a question that names one of the people is asked, as in a chat loop: every
question finds the scope changed since the one before. The first question of the scope
(which counts every session once) is reported apart from the rest.

Run it on two checkouts (``PYTHONPATH=…``) to compare; the numbers are per call, in ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

_WORDS = (
    "boat garden piano lighthouse recipe marathon kitten bakery harbour museum violin "
    "bicycle pottery ferry glacier orchard library castle market festival"
).split()


def _text(n: int) -> str:
    a, b, c = (_WORDS[(n * k) % len(_WORDS)] for k in (1, 3, 7))
    return f"Turn {n}: the {a} near the {b} reminded me of the {c}, she said."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="ucma-people-")
    people = ("Caroline", "Melanie")
    start = 1_700_000_000.0
    try:
        with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0)) as mem:
            per = max(1, args.turns // args.sessions)
            mem.observe_many(
                [
                    {
                        "content": _text(n),
                        "participants": [people[n % 2]],
                        "session_id": f"s{n // per}",
                        "timestamp": start + n * 60.0,
                    }
                    for n in range(args.turns)
                ],
                user_id="conv-1",
            )
            t = time.perf_counter()
            mem.remember("What did Caroline say about the harbour?", user_id="conv-1", k=10)
            first = (time.perf_counter() - t) * 1000
            times = []
            for r in range(args.rounds):
                n = args.turns + r
                mem.observe(
                    _text(n),
                    participants=[people[n % 2]],
                    session_id="live",
                    timestamp=start + n * 60.0,
                    user_id="conv-1",
                )
                question = f"What did {people[r % 2]} say about the {_WORDS[r % len(_WORDS)]}?"
                t = time.perf_counter()
                mem.remember(question, user_id="conv-1", k=10)
                times.append((time.perf_counter() - t) * 1000)
        times.sort()
        p95 = times[int(0.95 * (len(times) - 1))]
        print(
            f"turns {args.turns}, sessions {args.sessions}: first remember {first:.1f} ms; "
            f"then observe + remember x{args.rounds}: remember p50 {statistics.median(times):.1f} ms, "
            f"p95 {p95:.1f} ms"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
