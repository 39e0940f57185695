"""What ``close()`` costs while a background cadence cycle runs, and what it leaves behind.

    python -m benchmarks.close_during_cycle [--episodes 64] [--batch 8] [--model-ms 200] [--repeat 3]

A memory folder (hashing embedder) holds ``--episodes`` episodes; a provider answers like
the offline one after ``--model-ms`` of simulated model latency per call. A
``Cadence(1, background=True)`` starts a cycle; once its ``extract`` phase is inside its
first model call, ``close()`` is timed. Printed per run: ``close ms``, whether the cycle's
thread was still running when ``close()`` returned, the cycle's report (interrupted?),
the episodes it extracted, and, for scale, what one whole cycle takes inline. Median of
``--repeat`` runs, load average at the end. Run it on two checkouts (``PYTHONPATH=…``) to
compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time

from ucma_core import ConsolidationConfig, Memory, MemoryConfig
from ucma_core.conversation import Cadence
from ucma_core.embedders import HashingEmbedder
from ucma_core.providers import OfflineProvider
from ucma_core.providers.protocols import ExtractedFact


class SlowProvider(OfflineProvider):
    """The offline provider, ``seconds`` slower per fact extraction call."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.entered = threading.Event()

    def extract_facts(self, texts: list[str], *, speakers: list[str | None]) -> list[list[ExtractedFact]]:
        self.entered.set()
        time.sleep(self.seconds)  # a model's latency (a benchmark, not a test)
        return super().extract_facts(texts, speakers=speakers)


def _memory(folder: str, provider: SlowProvider, batch: int, episodes: int) -> Memory:
    config = MemoryConfig(importance_threshold=0.0, consolidation=ConsolidationConfig(batch_size=batch))
    mem = Memory(folder, embedder=HashingEmbedder(), provider=provider, config=config)
    for n in range(episodes):
        mem.observe(f"I moved to city number {n} and I love jazz number {n}.", user_id="ana", keep=True)
    return mem


def one_run(episodes: int, batch: int, model_s: float) -> tuple[float, bool, bool | None, int, float]:
    """``(close ms, thread alive after close, interrupted, episodes extracted, whole cycle ms)``."""
    with tempfile.TemporaryDirectory() as scratch:
        provider = SlowProvider(model_s)
        mem = _memory(os.path.join(scratch, "a"), provider, batch, episodes)
        cadence = Cadence(1, background=True)
        cadence.tick(mem)
        provider.entered.wait()
        began = time.perf_counter()
        mem.close()
        close_ms = (time.perf_counter() - began) * 1000
        alive = not cadence.wait(timeout=0)
        cadence.wait()  # a cycle left running ends (ClosedMemoryError) before the folder goes
        report = cadence.last_report
        extracted = int(report.phases.get("extract", {}).get("episodes", 0)) if report else 0
        with _memory(os.path.join(scratch, "b"), SlowProvider(model_s), batch, episodes) as whole:
            began = time.perf_counter()
            whole.consolidate()
            whole_ms = (time.perf_counter() - began) * 1000
        return close_ms, alive, None if report is None else report.interrupted, extracted, whole_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--model-ms", type=float, default=200.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [one_run(args.episodes, args.batch, args.model_ms / 1000) for _ in range(args.repeat)]
    print("| run | close ms | thread alive after close | report | episodes extracted | whole cycle ms |")
    print("|---:|---:|---|---|---:|---:|")
    for n, (close_ms, alive, interrupted, extracted, whole_ms) in enumerate(runs, 1):
        state = (
            "none (the cycle died on the closed memory)"
            if interrupted is None
            else ("interrupted" if interrupted else "finished")
        )
        print(f"| {n} | {close_ms:.0f} | {alive} | {state} | {extracted} | {whole_ms:.0f} |")
    print(
        f"median close ms {statistics.median(r[0] for r in runs):.0f}; load average {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
