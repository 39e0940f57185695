"""Overhead of the LlamaIndex adapters over the core calls they make.

Run::

    python -m benchmarks.adapters_llamaindex [--memories 2000] [--ops 200] [--rounds 3]
                                             [--out FILE.md]

One memory folder (hashing embedder, every observation kept) is filled with
``--memories`` chat statements of the throughput corpus, spread over its users and
over 20 sessions each; each user also gets a 24-message session the chat memory
reads. Then, for each adapter operation, the same work is timed twice per step,
through the adapter and through the core calls the adapter makes, in alternating
order (core first on even steps, adapter first on odd ones):

* retrieve: ``UCMARetriever.retrieve(q)`` vs ``view.remember(q, k=5)``;
* chat get: ``UCMAChatMemory.get(input=q)`` vs ``view.history(limit=32)``,
  ``view.remember(q, k=15)`` and ``render_memories``;
* chat put: ``UCMAChatMemory.put(ChatMessage)`` vs ``observe_turns(view, [ChatTurn])``;
* block aget: ``await UCMAMemoryBlock.aget([message])`` vs ``await view.aremember(q, k=5)``
  and ``render_memories``;
* tool recall: ``FunctionTool.call(query=q)`` vs the neutral tool's ``ToolSpec.func(query=q)``.

Queries are embedded once before timing, so both sides find them in UCMA's
embedding cache; writes use distinct texts on both sides. Each round gives the
median time of the core calls and the median *paired* overhead (adapter minus core
on the same step, which cancels most of the drift of a busy machine), in wall time
and in process CPU time (which other load on the machine disturbs less); the report
gives the medians over rounds and the ratios adapter / core (the target is at most
1.05).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage

from benchmarks.chat_corpus import make_items, make_queries
from ucma_core import Memory, MemoryConfig
from ucma_core.conversation import ChatTurn, memory_tools, observe_turns, render_memories
from ucma_core.embedders import HashingEmbedder
from ucma_llamaindex import UCMAChatMemory, UCMAMemoryBlock, UCMARetriever, UCMAToolSpec


@dataclass(frozen=True)
class Figures:
    """One operation's medians in ms: the core calls, and the adapter's paired overhead."""

    core_wall: float
    extra_wall: float
    core_cpu: float
    extra_cpu: float


SESSIONS_PER_USER = 20
HISTORY = 24
K = 5


def fill(mem: Memory, memories: int) -> list[str]:
    """Store the corpus and a chat session per user; return the users."""
    items = make_items(memories)
    mem.observe_many(
        {
            "content": it.text,
            "user_id": it.user_id,
            "session_id": f"s{n % SESSIONS_PER_USER}",
            "participants": [it.user_id],
        }
        for n, it in enumerate(items)
    )
    users = sorted({it.user_id for it in items})
    for user in users:
        chat = UCMAChatMemory(mem, user_id=user, session_id="bench")
        chat.put_messages(
            [
                ChatMessage(role="user" if n % 2 == 0 else "assistant", content=f"turn {n} of {user}'s chat")
                for n in range(HISTORY)
            ]
        )
    return users


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    """Wall and process CPU milliseconds of one call."""
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    call()
    return (time.perf_counter_ns() - wall) / 1e6, (time.process_time_ns() - cpu) / 1e6


def compare(pairs: list[tuple[Callable[[], Any], Callable[[], Any]]]) -> Figures:
    """Medians of the core calls and of the paired overhead (adapter minus core, same step),
    in wall and CPU time, alternating which of the two goes first."""
    core: list[tuple[float, float]] = []
    extra: list[tuple[float, float]] = []
    for step, (core_call, adapter_call) in enumerate(pairs):
        if step % 2 == 0:
            c, a = timed(core_call), timed(adapter_call)
        else:
            a, c = timed(adapter_call), timed(core_call)
        core.append(c)
        extra.append((a[0] - c[0], a[1] - c[1]))
    return Figures(
        core_wall=statistics.median(w for w, _ in core),
        extra_wall=statistics.median(w for w, _ in extra),
        core_cpu=statistics.median(c for _, c in core),
        extra_cpu=statistics.median(c for _, c in extra),
    )


Call = Callable[[str, str], object]


def operations(
    mem: Memory, users: list[str], round_no: int, loop: asyncio.AbstractEventLoop
) -> dict[str, tuple[Call, Call]]:
    """Per operation, the core calls and the adapter call, each taking ``(user, text)``."""
    counter = mem.token_counter
    views = {u: mem.scope(user_id=u, session_id="bench") for u in users}
    retrievers = {u: UCMARetriever(mem, user_id=u, k=K) for u in users}
    chats = {u: UCMAChatMemory(mem, user_id=u, session_id="bench", recall_k=K) for u in users}
    blocks = {u: UCMAMemoryBlock(mem, user_id=u, k=K) for u in users}
    tools = {u: UCMAToolSpec(mem, user_id=u, k=K).to_tool_list()[0] for u in users}
    neutral = {u: memory_tools(mem, user_id=u, k=K)[0] for u in users}
    put_core = {u: mem.scope(user_id=u, session_id=f"put-core-{round_no}") for u in users}
    put_adapter = {u: UCMAChatMemory(mem, user_id=u, session_id=f"put-adapter-{round_no}") for u in users}

    def render(hits: list[Any]) -> str:
        return render_memories(hits, max_tokens=600, token_counter=counter, now=mem.now())

    def retrieve_core(u: str, q: str) -> object:
        return views[u].remember(q, k=K, include_generated=True)

    def chat_get_core(u: str, q: str) -> object:
        views[u].history(limit=32)  # the window: 24 turns fit in the first page
        return render(views[u].remember(q, k=K + 2 * K, include_generated=True)[:K])

    def put_core_call(u: str, text: str) -> object:
        return observe_turns(put_core[u], [ChatTurn("user", f"core {text}")])

    def put_adapter_call(u: str, text: str) -> None:
        put_adapter[u].put(ChatMessage(role="user", content=f"adapter {text}"))

    async def block_core(u: str, q: str) -> object:
        return render(await views[u].aremember(q, k=K, include_generated=True))

    return {
        "retrieve": (retrieve_core, lambda u, q: retrievers[u].retrieve(q)),
        "chat get": (chat_get_core, lambda u, q: chats[u].get(input=q)),
        "chat put": (put_core_call, put_adapter_call),
        "block aget": (
            lambda u, q: loop.run_until_complete(block_core(u, q)),
            lambda u, q: loop.run_until_complete(blocks[u].aget([ChatMessage(role="user", content=q)])),
        ),
        "tool recall": (lambda u, q: neutral[u].func(query=q), lambda u, q: tools[u].call(query=q)),
    }


def run_round(
    mem: Memory, users: list[str], queries: list[tuple[str, str]], round_no: int
) -> dict[str, Figures]:
    """The figures of every operation for one round."""
    loop = asyncio.new_event_loop()
    try:
        results: dict[str, Figures] = {}
        for name, (core, adapter) in operations(mem, users, round_no, loop).items():
            # writes get a distinct text per step; reads the step's query
            texts = [f"note {round_no}.{n}" if name == "chat put" else q for n, (q, _) in enumerate(queries)]
            results[name] = compare(
                [
                    (partial(core, u, text), partial(adapter, u, text))
                    for text, (_, u) in zip(texts, queries, strict=True)
                ]
            )
        return results
    finally:
        loop.close()


def report(rounds: list[dict[str, Figures]], memories: int, ops: int) -> str:
    lines = [
        f"LlamaIndex adapter overhead: {memories} memories, {ops} operations x {len(rounds)} rounds. "
        "Medians in ms; overhead = median of (adapter - core) on the same step; "
        "CPU = process CPU time (all threads).",
        "",
        "| operation | core | adapter | overhead | adapter / core "
        "| core CPU | overhead CPU | adapter / core CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in rounds[0]:
        core, extra, core_cpu, extra_cpu = (
            statistics.median(getattr(r[name], f) for r in rounds)
            for f in ("core_wall", "extra_wall", "core_cpu", "extra_cpu")
        )
        lines.append(
            f"| {name} | {core:.3f} | {core + extra:.3f} | {extra:+.3f} | {(core + extra) / core:.3f} "
            f"| {core_cpu:.3f} | {extra_cpu:+.3f} | {(core_cpu + extra_cpu) / core_cpu:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--ops", type=int, default=200, help="operations per measurement and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(importance_threshold=0.0)
        with Memory(Path(tmp) / "memory", embedder=HashingEmbedder(), config=config) as mem:
            users = fill(mem, args.memories)
            corpus = make_items(args.memories)
            queries = [(q, u) for q, u, _ in make_queries(corpus, args.ops)]
            mem.embedder.embed([q for q, _ in queries])  # both sides find the queries in the cache
            run_round(mem, users, queries[: min(20, len(queries))], -1)  # warm-up
            rounds = [run_round(mem, users, queries, n) for n in range(args.rounds)]
    table = report(rounds, args.memories, args.ops)
    print(table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
