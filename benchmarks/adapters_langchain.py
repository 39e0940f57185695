"""Overhead of the LangChain adapters over the core calls they make.

Run::

    python -m benchmarks.adapters_langchain [--memories 2000] [--ops 200] [--rounds 3]
                                            [--out FILE.md]

One memory folder (hashing embedder, every observation kept) is filled with
``--memories`` chat statements of the throughput corpus, spread over its users and
over 20 sessions each; each user also gets a 24-message session the chat history
and the classic memory read. Then, for each adapter operation, the same work is
timed twice per step, through the adapter and through the core calls the adapter
makes, in alternating order (core first on even steps, adapter first on odd ones):

* **retrieve**: ``UCMARetriever.invoke(q)`` against ``Memory.remember(q, k=5, user_id=u)``;
  **retrieve async**: ``await UCMARetriever.ainvoke(q)`` against ``await Memory.aremember(...)``.
* **tool recall**: ``recall_memory.invoke({"query": q})`` (the LangChain tool) against
  ``ToolSpec.func(query=q)`` (the neutral tool it wraps).
* **middleware turn**: ``UCMAMiddleware``'s ``before_agent``, ``wrap_model_call`` (the
  model call itself a no-op) and ``after_agent`` for one user message and its answer,
  against ``view.remember``, ``render_memories`` and ``observe_turns(view, [user,
  assistant])``.
* **history get** / **history add**: ``UCMAChatMessageHistory.messages`` /
  ``add_messages([Human, AI])`` against ``view.history()`` / ``observe_turns``.
* **classic load** / **classic save**: ``UCMAMemory.load_memory_variables`` /
  ``save_context`` against ``view.history(limit=10)``, ``view.remember`` and
  ``render_memories`` / ``observe_turns``.

Queries are embedded once before timing, so both sides find them in UCMA's
embedding cache; writes use distinct texts on both sides. Each round gives the
median time per operation on each side; the report gives the median over rounds
and the ratio adapter / core (the target is at most 1.05).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from benchmarks.chat_corpus import make_items, make_queries
from ucma_core import Memory, MemoryConfig
from ucma_core.conversation import ChatTurn, memory_tools, observe_turns, render_memories
from ucma_core.embedders import HashingEmbedder
from ucma_langchain import UCMAChatMessageHistory, UCMAMiddleware, UCMARetriever, create_memory_tools

warnings.filterwarnings("ignore", category=DeprecationWarning)  # langchain_classic's BaseMemory

from ucma_langchain import UCMAMemory  # noqa: E402

SESSIONS_PER_USER = 20
HISTORY = 24
RECENT = 10
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
        UCMAChatMessageHistory(mem, "bench", user_id=user).add_messages(
            [
                HumanMessage(f"turn {n} of {user}'s chat") if n % 2 == 0 else AIMessage(f"turn {n} answered")
                for n in range(HISTORY)
            ]
        )
    return users


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) / 1e6


def compare(pairs: list[tuple[Callable[[], Any], Callable[[], Any]]]) -> tuple[float, float]:
    """Median ms of the core and the adapter call of each pair, alternating which goes first."""
    core: list[float] = []
    adapter: list[float] = []
    for step, (core_call, adapter_call) in enumerate(pairs):
        if step % 2 == 0:
            core.append(timed(core_call))
            adapter.append(timed(adapter_call))
        else:
            adapter.append(timed(adapter_call))
            core.append(timed(core_call))
    return statistics.median(core), statistics.median(adapter)


def middleware_turn(middleware: UCMAMiddleware, question: str, answer: str, turn_id: str) -> None:
    """One agent turn through the middleware's hooks, as ``create_agent`` calls them."""
    runtime: Runtime[Any] = Runtime(context=None)
    state: dict[str, Any] = {"messages": [HumanMessage(question, id=f"q-{turn_id}")]}
    state.update(middleware.before_agent(state, runtime) or {})  # type: ignore[arg-type]
    request = ModelRequest(model=None, messages=state["messages"], state=state, runtime=runtime)  # type: ignore[arg-type]
    middleware.wrap_model_call(request, lambda r: r)  # type: ignore[arg-type, return-value]
    state["messages"] = [*state["messages"], AIMessage(answer, id=f"a-{turn_id}")]
    middleware.after_agent(state, runtime)  # type: ignore[arg-type]


def run_round(
    mem: Memory, users: list[str], queries: list[tuple[str, str]], round_no: int
) -> dict[str, tuple[float, float]]:
    loop = asyncio.new_event_loop()
    results: dict[str, tuple[float, float]] = {}
    try:
        views = {u: mem.scope(user_id=u, session_id="bench") for u in users}
        retrievers = {u: UCMARetriever(memory=mem, user_id=u, k=K) for u in users}
        recall_tools = {u: create_memory_tools(mem, user_id=u, k=K)[0] for u in users}
        neutral_recall = {u: memory_tools(mem, user_id=u, k=K)[0] for u in users}
        histories = {u: UCMAChatMessageHistory(mem, "bench", user_id=u) for u in users}
        classic = {
            u: UCMAMemory(memory=mem, user_id=u, session_id="bench", k=K, recent_turns=RECENT) for u in users
        }

        def render(hits: list[Any]) -> str:
            return render_memories(hits, max_tokens=800, now=mem.now(), timezone=mem.config.timezone)

        results["retrieve"] = compare(
            [
                (
                    lambda u=u, q=q: mem.remember(q, k=K, user_id=u),
                    lambda u=u, q=q: retrievers[u].invoke(q),
                )
                for q, u in queries
            ]
        )
        results["retrieve async"] = compare(
            [
                (
                    lambda u=u, q=q: loop.run_until_complete(mem.aremember(q, k=K, user_id=u)),
                    lambda u=u, q=q: loop.run_until_complete(retrievers[u].ainvoke(q)),
                )
                for q, u in queries
            ]
        )
        results["tool recall"] = compare(
            [
                (
                    lambda u=u, q=q: neutral_recall[u].func(query=q),
                    lambda u=u, q=q: recall_tools[u].invoke({"query": q}),
                )
                for q, u in queries
            ]
        )

        core_turn = {u: mem.scope(user_id=u, session_id=f"turn-core-{round_no}") for u in users}
        agents = {
            u: UCMAMiddleware(mem, user_id=u, session_id=f"turn-adapter-{round_no}", k=K) for u in users
        }

        def turn_core(u: str, q: str, n: int) -> None:
            view = core_turn[u]
            render(view.remember(q, k=K, include_generated=True))
            turn_id = f"core-{round_no}-{n}"
            observe_turns(
                view,
                [
                    ChatTurn("user", q, message_id=f"q-{turn_id}"),
                    ChatTurn("assistant", f"answer {turn_id}", message_id=f"a-{turn_id}"),
                ],
            )

        results["middleware turn"] = compare(
            [
                (
                    lambda u=u, q=q, n=n: turn_core(u, q, n),
                    lambda u=u, q=q, n=n: middleware_turn(
                        agents[u], q, f"answer adapter-{round_no}-{n}", f"adapter-{round_no}-{n}"
                    ),
                )
                for n, (q, u) in enumerate(queries)
            ]
        )
        results["history get"] = compare(
            [(lambda u=u: views[u].history(), lambda u=u: histories[u].messages) for _, u in queries]
        )

        core_add = {u: mem.scope(user_id=u, session_id=f"add-core-{round_no}") for u in users}
        adapter_add = {u: UCMAChatMessageHistory(mem, f"add-adapter-{round_no}", user_id=u) for u in users}
        results["history add"] = compare(
            [
                (
                    lambda u=u, n=n: observe_turns(
                        core_add[u], [ChatTurn("user", f"core q {round_no}.{n}"), ChatTurn("assistant", "ok")]
                    ),
                    lambda u=u, n=n: adapter_add[u].add_messages(
                        [HumanMessage(f"adapter q {round_no}.{n}"), AIMessage("ok")]
                    ),
                )
                for n, (_, u) in enumerate(queries)
            ]
        )

        def load_core(u: str, q: str) -> None:
            view = views[u]
            view.history(limit=RECENT)
            render(view.remember(q, k=K))

        results["classic load"] = compare(
            [
                (
                    lambda u=u, q=q: load_core(u, q),
                    lambda u=u, q=q: classic[u].load_memory_variables({"input": q}),
                )
                for q, u in queries
            ]
        )
        core_save = {u: mem.scope(user_id=u, session_id=f"save-core-{round_no}") for u in users}
        adapter_save = {
            u: UCMAMemory(memory=mem, user_id=u, session_id=f"save-adapter-{round_no}") for u in users
        }
        results["classic save"] = compare(
            [
                (
                    lambda u=u, n=n: observe_turns(
                        core_save[u],
                        [ChatTurn("user", f"core s {round_no}.{n}"), ChatTurn("assistant", "ok")],
                    ),
                    lambda u=u, n=n: adapter_save[u].save_context(
                        {"input": f"adapter s {round_no}.{n}"}, {"output": "ok"}
                    ),
                )
                for n, (_, u) in enumerate(queries)
            ]
        )
    finally:
        loop.close()
    return results


def report(rounds: list[dict[str, tuple[float, float]]], memories: int, ops: int) -> str:
    lines = [
        f"LangChain adapter overhead: {memories} memories, {ops} operations x {len(rounds)} rounds "
        "(median ms per operation)",
        "",
        "| operation | core ms | adapter ms | adapter / core | overhead ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in rounds[0]:
        core = statistics.median(r[name][0] for r in rounds)
        adapter = statistics.median(r[name][1] for r in rounds)
        lines.append(
            f"| {name} | {core:.3f} | {adapter:.3f} | {adapter / core:.3f} | {adapter - core:+.3f} |"
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
