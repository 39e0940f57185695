"""A worker process on a shared memory (run by the tests with ``python -m``).

``python -m tests.postgres._worker URL CHROMA_PORT USER COUNT [WAIT_FOR_USERS...]``
observes COUNT notes as USER, printing ``ack <id>`` after each one returns (so the test
knows which writes were acknowledged), then, for each user in WAIT_FOR_USERS, waits
until it sees that user's COUNT notes, and prints one JSON line with what it saw. It
prints ``open`` once the memory is open and then waits ``UCMA_TEST_PAUSE`` seconds.
With ``UCMA_TEST_FORGET=1`` it then waits ``UCMA_TEST_GAP`` seconds and forgets its
first note (a deletion: the journaled path, its intent before Chroma is touched).
"""

from __future__ import annotations

import json
import os
import sys
import time

from ucma_core import ChromaConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder


def main() -> None:
    url, port, user, count, *others = sys.argv[1:]
    config = MemoryConfig(chroma=ChromaConfig(host="127.0.0.1", port=int(port)))
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        print("open", flush=True)
        time.sleep(float(os.environ.get("UCMA_TEST_PAUSE", "0")))
        acked: list[str] = []
        for n in range(int(count)):
            text = f"{user} wrote note number {n} about the harbour lighthouse"
            memory_id = mem.observe(text, user_id=user, importance=1.0)
            print("ack", memory_id, flush=True)
            acked = acked or [memory_id]
        if os.environ.get("UCMA_TEST_FORGET") == "1":
            time.sleep(float(os.environ.get("UCMA_TEST_GAP", "0")))
            mem.forget(acked[0])
            print("forgot", acked[0], flush=True)
        seen: dict[str, int] = {}
        leaked: list[str] = []
        deadline = time.monotonic() + 60
        for other in others:
            while time.monotonic() < deadline:
                seen[other] = len(mem.list_memories(user_id=other))
                if seen[other] >= int(count):
                    break
                time.sleep(0.05)
            hits = mem.remember("note about the harbour lighthouse", user_id=other, k=50)
            leaked += [h.id for h in hits if h.record.user_id != other]
        print(json.dumps({"seen": seen, "leaked": leaked}), flush=True)


if __name__ == "__main__":
    main()
