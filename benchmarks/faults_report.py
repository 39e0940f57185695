"""The fault table: crash, disk-full, damaged-file and hostile-input trials against UCMA.

    python -m benchmarks.faults_report [--kills 10] [--crash-repeats 2] [--adapter-kills 5]
                                       [--langgraph-kills 10] [--seed N] [--no-tmpfs] [--adapters-only]
                                       [--large-kills 20] [--large-records 15000] [--only-large]

Every multi-record operation (``observe_many``, exclusive ``assert_fact``, ``upsert``,
``forget``, ``forget_user``, the ``group`` / ``extract`` / ``patterns`` consolidation
phases) is run in a writer process that is killed with SIGKILL at a random moment
(``--kills`` times each) and crashed at every point between the stores
(``--crash-repeats`` times each, at the first and later matching calls). Then one store
at a time runs out of space, Chroma stops answering, a real tmpfs fills up (root only),
each file of a folder is damaged or deleted, and hostile arguments are thrown at the API.
A LangGraph run with the message mirror in the background is killed at random points
(``--langgraph-kills`` times; ``tests/faults/langgraph_trials.py``): every checkpointed
message must be in the memory exactly once after reopening.
Chroma's HNSW index files are among the damaged files. Last, ``observe_many`` into
copies of a folder of ``--large-records`` memories (past the size at which Chroma persists its vector
index) is killed ``--large-kills`` times; each folder must reopen, directly or after
rebuilding its vector index, with every acknowledged record, while no index file grows
past the bound the folder's size allows.

Prints one row per operation and fault: trials, acknowledged writes (kill and crash
trials) apart from the records a damaged-file trial puts at risk, acknowledged writes lost,
partial states seen after reopening, clear errors (a UCMA error that says what is wrong),
other errors (anything else), hangs, silent wipes and bytes of a forgotten user's text
left in the folder (``residue``); then the details of any trial that was not clean.
The scenarios live in ``tests/faults/scenarios.py`` and are the ones the tests run.

A second table does the same at the adapters (``tests/faults/adapter_scenarios.py``): a
``create_agent`` + ``UCMAMiddleware`` agent and LlamaIndex chat engines with
``UCMAChatMemory`` are killed during their turns (``--adapter-kills`` times each); it counts
the messages the framework acknowledged, those lost and those stored twice.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.faults import adapter_scenarios as ad
from tests.faults import scenarios as sc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10, help="SIGKILL trials per operation")
    parser.add_argument("--crash-repeats", type=int, default=2, help="trials per crash point")
    parser.add_argument("--langgraph-kills", type=int, default=10, help="SIGKILL trials of a LangGraph run")
    parser.add_argument("--seed", type=int, default=20250611)
    parser.add_argument("--no-tmpfs", action="store_true", help="skip the real full-disk trial")
    parser.add_argument("--adapter-kills", type=int, default=5, help="SIGKILL trials per adapter")
    parser.add_argument("--adapters-only", action="store_true", help="only the adapters' table")
    parser.add_argument("--large-kills", type=int, default=20, help="kills of observe_many in a large folder")
    parser.add_argument("--large-records", type=int, default=15_000, help="records in the large folder")
    parser.add_argument("--only-large", action="store_true", help="run only the large-folder kills")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    outcomes: list[sc.Outcome] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ucma-faults-") as tmp:
        work = Path(tmp)
        n = 0

        def next_dir() -> Path:
            nonlocal n
            n += 1
            return work / f"t{n}"

        for name in () if args.only_large or args.adapters_only else sc.SCENARIOS:
            for _ in range(args.kills):
                outcomes.append(sc.kill_trial(name, next_dir(), rng))
            for point in sc.POINTS_FOR[name]:
                for skip in range(args.crash_repeats):
                    outcomes.append(sc.crash_trial(name, point, next_dir(), skip=skip))
            print(f"{name}: done ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
        if not (args.only_large or args.adapters_only):
            for where in ("journal", "keyword index", "Chroma", "Chroma replace"):
                outcomes.append(sc.disk_full_trial(where, next_dir()))
            outcomes.append(sc.hang_trial(next_dir()))
            if not args.no_tmpfs and sc.tmpfs_available():
                outcomes.append(sc.tmpfs_trial(next_dir(), guard=0))
                outcomes.append(sc.tmpfs_trial(next_dir(), guard=512 * 1024))
            template = sc.damage_template(next_dir())
            for case in sc.DAMAGE:
                outcomes.append(sc.damage_trial(case, next_dir(), template))
            hostile = sc.hostile_trial(next_dir())
            for o in hostile:  # one row for all hostile calls, one for the close() race
                if o.operation == "hostile input":
                    o.fault = f"{len(sc.HOSTILE)} kinds of bad argument"
            outcomes += hostile
        adapter_outcomes: list[ad.AdapterOutcome] = []
        for name in () if args.only_large else ad.ADAPTERS:
            for _ in range(args.adapter_kills):
                adapter_outcomes.append(ad.kill_trial(name, next_dir(), rng))
            print(f"{name}: done ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
        if args.langgraph_kills and not args.only_large:
            from tests.faults.langgraph_trials import behind, kill_run_trial

            runs = [kill_run_trial(next_dir(), rng) for _ in range(args.langgraph_kills)]
            outcomes += runs
            print(f"LangGraph: done, {behind(runs)} messages recovered from the outbox", file=sys.stderr)
        if args.large_kills and not args.adapters_only:
            large = sc.large_template(next_dir(), args.large_records)
            for _ in range(args.large_kills):
                trial_dir = next_dir()
                outcomes.append(sc.large_kill_trial(large, trial_dir, rng))
                shutil.rmtree(trial_dir, ignore_errors=True)
            healed = sum(any("vector index rebuilt" in d for d in o.detail) for o in outcomes)
            sizes = [d for o in outcomes for d in o.detail if d.startswith("largest index file")]
            largest = max(
                sizes, key=lambda d: int(d.split(": ")[1].split(" ")[0].replace(",", "")), default=""
            )
            summary = f"large-folder kills: {args.large_kills}, vector index rebuilt on reopen: {healed}"
            print(f"{summary}; {largest}", file=sys.stderr)
    if outcomes:
        print(sc.table(outcomes))
    print("\nAt the adapters:\n" + ad.table(adapter_outcomes))
    trials = len(outcomes) + len(adapter_outcomes)
    print(f"\n{trials} trials in {time.monotonic() - started:.0f} s")
    bad = [o for o in [*outcomes, *adapter_outcomes] if not o.clean]
    for o in bad:
        print(f"- {o.operation} / {o.fault}: {'; '.join(o.detail)[:600]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
