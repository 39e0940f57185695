"""Cost of the LangGraph adapters next to LangGraph's own savers and store.

Run::

    python -m benchmarks.adapters_langgraph [--turns 200] [--rounds 5] [--items 1000]
                                            [--queries 100] [--store-embedder hashing|local]
                                            [--store-only] [--out FILE.md]

**Checkpointer.** One conversation thread per round grows by a user and an
assistant message per turn; each turn stores a checkpoint whose ``messages``
channel holds the whole conversation (as LangGraph's loop does), one pending write,
and reads the latest checkpoint back. The same checkpoints go to LangGraph's
``SqliteSaver`` (a file in a temp folder, its default connection) and to
``UCMACheckpointer`` (which delegates to ``SqliteSaver`` in the memory folder and
hands the new messages to its mirror):

* **put** / **get_tuple** / **put_writes**: per-operation time, UCMA with the mirror
  in the background (the default): its worker observes while both sides are
  timed; what is left for it at the end of a round (``flush``) is reported;
* **put, mirror inline**: ``background=False`` (put waits for the observation: an
  embedding and a Chroma write per turn), for reference;
* **aput** / **aget_tuple**: the async methods against LangGraph's ``AsyncSqliteSaver``.

Sides alternate within each round (which one goes first flips every round); the
report gives the median over rounds of the mean time per operation, and the
ratio UCMA / LangGraph (target for put and get_tuple: at most 1.3).

**Store.** ``--items`` items (short statements of the throughput corpus) in 10
namespaces ``("memories", user)``, written to ``InMemoryStore`` (with an index on
the same embedder: ``HashingEmbedder``, or with ``--store-embedder local`` the local
MiniLM model, one instance per side) and to ``UCMAStore``, side by side in blocks of 50
puts (which store goes first flips every block; UCMA's block time includes the
``flush()`` that waits for its background Chroma writes); then ``get``, a filtered
listing, and ``--queries`` query searches (limit 10) on each, side by side: each read
runs on both stores in turn (which one goes first flips), so the load of a shared
machine weighs on both sides alike. UCMA's query search
runs its hybrid retrieval (dense, keyword, entity and graph signals, ranking), so
it does more work than the reference's cosine scan; the ratio shows what it costs.
``--store-only`` skips the checkpointer part.

**Bulk Store writes.** ``--bulk`` items (default 10,000) written by one
``UCMAStore.batch`` of ``PutOp`` s with the memory's default embedder (the local
MiniLM model) and with ``HashingEmbedder`` (what the store and the core cost
without the model), timed end to end (embedding, the Chroma write, the journal),
with the same batch on ``InMemoryStore`` embedding with the same model for
reference (it goes first). Besides wall seconds the table gives the CPU seconds the
process used (all its threads) and the load average: on a shared machine the wall
time follows the load, the CPU time much less. ``--bulk-only`` runs just this part;
``--bulk-embedders hashing`` picks.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, Checkpoint, CheckpointMetadata, empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from benchmarks.chat_corpus import make_items, make_queries
from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder, LocalMiniLMEmbedder
from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore

Row = tuple[str, float, float]


# --------------------------------------------------------------------------- checkpoints
def _conversation(turns: int) -> list[list[BaseMessage]]:
    """The message list after each turn (fresh ids, as add_messages gives them)."""
    run = uuid.uuid4().hex[:8]
    messages: list[BaseMessage] = []
    out = []
    for n in range(turns):
        messages = [
            *messages,
            HumanMessage(f"turn {n}: I was thinking about the garden and the roses again", id=f"{run}-h{n}"),
            AIMessage(f"turn {n}: the roses need water every other day in summer", id=f"{run}-a{n}"),
        ]
        out.append(messages)
    return out


def _checkpoint(messages: list[BaseMessage], step: int) -> Checkpoint:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages, "step": step}
    cp["channel_versions"] = {"messages": step + 1, "step": step + 1}
    return cp


def _thread() -> RunnableConfig:
    return {"configurable": {"thread_id": uuid.uuid4().hex, "checkpoint_ns": ""}}


def _lockstep(savers: dict[str, BaseCheckpointSaver[Any]], turns: int) -> dict[str, dict[str, float]]:
    """One conversation per saver, the same operation on each side in turn (which side goes
    first flips every step, so a slow moment of the disk hits both); median seconds per op."""
    history = {name: _conversation(turns) for name in savers}
    configs = {name: _thread() for name in savers}
    spent: dict[str, dict[str, list[float]]] = {
        name: {"put": [], "put_writes": [], "get_tuple": []} for name in savers
    }
    names = list(savers)
    for step in range(turns):
        order = names if step % 2 == 0 else names[::-1]
        for op in ("put", "put_writes", "get_tuple"):
            for name in order:
                saver, config = savers[name], configs[name]
                messages = history[name][step]
                t0 = time.perf_counter()
                if op == "put":
                    metadata: CheckpointMetadata = {"source": "loop", "step": step}
                    configs[name] = saver.put(
                        config, _checkpoint(messages, step), metadata, {"messages": step + 1}
                    )
                elif op == "put_writes":
                    saver.put_writes(config, [("messages", messages[-1:])], f"task-{step}")
                else:
                    assert saver.get_tuple(
                        {"configurable": {"thread_id": config["configurable"]["thread_id"]}}
                    )
                spent[name][op].append(time.perf_counter() - t0)
    return {name: {op: statistics.median(v) for op, v in ops.items()} for name, ops in spent.items()}


async def _alockstep(savers: dict[str, BaseCheckpointSaver[Any]], turns: int) -> dict[str, dict[str, float]]:
    history = {name: _conversation(turns) for name in savers}
    configs = {name: _thread() for name in savers}
    spent: dict[str, dict[str, list[float]]] = {name: {"aput": [], "aget_tuple": []} for name in savers}
    names = list(savers)
    for step in range(turns):
        order = names if step % 2 == 0 else names[::-1]
        for op in ("aput", "aget_tuple"):
            for name in order:
                saver, config = savers[name], configs[name]
                t0 = time.perf_counter()
                if op == "aput":
                    metadata: CheckpointMetadata = {"source": "loop", "step": step}
                    checkpoint = _checkpoint(history[name][step], step)
                    configs[name] = await saver.aput(config, checkpoint, metadata, {"messages": step + 1})
                else:
                    latest: RunnableConfig = {
                        "configurable": {"thread_id": config["configurable"]["thread_id"]}
                    }
                    assert await saver.aget_tuple(latest)
                spent[name][op].append(time.perf_counter() - t0)
    return {name: {op: statistics.median(v) for op, v in ops.items()} for name, ops in spent.items()}


def bench_checkpoints(turns: int, rounds: int) -> tuple[list[Row], float]:
    samples: dict[str, list[tuple[float, float]]] = {}
    drains: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        conn = sqlite3.connect(root / "langgraph.sqlite3", check_same_thread=False)
        reference = SqliteSaver(conn)
        mem = Memory(root / "memory", embedder=HashingEmbedder())
        ucma = UCMACheckpointer(mem, user_id="bench")
        inline = UCMACheckpointer(mem, user_id="bench", path=root / "inline.sqlite3", background=False)
        _lockstep({"ref": reference, "ucma": ucma, "inline": inline}, 5)  # warm-up
        ucma.flush()
        for _ in range(rounds):
            got = _lockstep({"ref": reference, "ucma": ucma}, turns)
            t0 = time.perf_counter()
            ucma.flush()
            drains.append((time.perf_counter() - t0) / turns)
            for op in ("put", "put_writes", "get_tuple"):
                samples.setdefault(op, []).append((got["ref"][op], got["ucma"][op]))
            got = _lockstep({"ref": reference, "inline": inline}, turns)
            samples.setdefault("put, mirror inline", []).append((got["ref"]["put"], got["inline"]["put"]))

        async def run_async() -> None:
            async with aiosqlite.connect(root / "langgraph-async.sqlite3") as aconn:
                areference = AsyncSqliteSaver(aconn)
                await _alockstep({"ref": areference, "ucma": ucma}, 5)
                await ucma.aflush()
                for _ in range(rounds):
                    got = await _alockstep({"ref": areference, "ucma": ucma}, turns)
                    await ucma.aflush()
                    for op in ("aput", "aget_tuple"):
                        samples.setdefault(op, []).append((got["ref"][op], got["ucma"][op]))

        asyncio.run(run_async())
        ucma.close()
        inline.close()
        conn.close()
        mem.close()
    rows = [
        (op, statistics.median(r for r, _ in pairs), statistics.median(u for _, u in pairs))
        for op, pairs in samples.items()
    ]
    return rows, statistics.median(drains)


# --------------------------------------------------------------------------- store
PUT_BLOCK = 50


def _store_embedder(kind: str) -> Any:
    return LocalMiniLMEmbedder() if kind == "local" else HashingEmbedder()


def bench_store(n_items: int, n_queries: int, embedder_kind: str = "hashing") -> list[Row]:
    items = make_items(n_items)
    queries = [q for q, _, _ in make_queries(items, n_queries)]
    users = [f"user{n}" for n in range(10)]
    embedder = _store_embedder(embedder_kind)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory(Path(tmp) / "memory", embedder=_store_embedder(embedder_kind))
        stores: dict[str, Any] = {
            "ref": InMemoryStore(
                index={"dims": embedder.dimension, "embed": embedder.embed, "fields": ["text"]}
            ),
            "ucma": UCMAStore(mem, index={"fields": ["text"]}),
        }
        times: dict[str, dict[str, float]] = {name: {} for name in stores}
        # the puts side by side too: blocks of PUT_BLOCK items, each written to both stores
        # in turn (which one goes first flips); UCMA's block ends with ``flush()`` (its
        # Chroma writes, which group commit does in the background), timed with the block
        put_spent = dict.fromkeys(stores, 0.0)
        for block, start in enumerate(range(0, len(items), PUT_BLOCK)):
            for name in list(stores) if block % 2 == 0 else list(stores)[::-1]:
                store = stores[name]
                t0 = time.perf_counter()
                for n in range(start, min(start + PUT_BLOCK, len(items))):
                    store.put(("memories", users[n % 10]), f"k{n}", {"text": items[n].text, "n": n})
                if name == "ucma":
                    mem.flush()
                put_spent[name] += time.perf_counter() - t0
        for name, store in stores.items():
            times[name]["store put"] = put_spent[name] / len(items)
            for q in queries[:5]:
                store.search(("memories",), query=q, limit=10)
        # the reads side by side: each step runs on both stores in turn (which goes first flips),
        # so a busy moment of a shared machine hits both sides alike
        reads: dict[str, tuple[int, Callable[[Any, int], Any]]] = {
            "store get": (200, lambda s, _: s.get(("memories", "user3"), "k3")),
            "store search, filter": (
                50,
                lambda s, _: s.search(("memories", "user1"), filter={"n": {"$lt": 50}}, limit=10),
            ),
            "store search, query": (
                len(queries),
                lambda s, n: s.search(("memories",), query=queries[n], limit=10),
            ),
            "store search, query in a namespace": (
                len(queries),
                lambda s, n: s.search(("memories", "user2"), query=queries[n], limit=10),
            ),
        }
        names = list(stores)
        for op, (count, run) in reads.items():
            spent = dict.fromkeys(names, 0.0)
            for n in range(count):
                for name in names if n % 2 == 0 else names[::-1]:
                    t0 = time.perf_counter()
                    run(stores[name], n)
                    spent[name] += time.perf_counter() - t0
            for name in names:
                times[name][op] = spent[name] / count
        mem.close()
    return [(op, times["ref"][op], times["ucma"][op]) for op in times["ref"]]


Timed = tuple[float, float]  # wall seconds, CPU seconds of the process (all its threads)


def _timed(fn: Callable[[], object]) -> Timed:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def _bulk_run(ops: list[PutOp], embedder: str) -> tuple[Timed, Timed, str]:
    """Wall and CPU seconds for one ``batch`` of ``ops`` on UCMAStore and on InMemoryStore (the
    same model, outside UCMA's cache), and the embedder's name. InMemoryStore goes first."""
    with tempfile.TemporaryDirectory() as tmp:
        chosen = HashingEmbedder() if embedder == "hashing" else None
        with Memory(Path(tmp) / "memory", embedder=chosen) as mem:
            embed = HashingEmbedder().embed if embedder == "hashing" else LocalMiniLMEmbedder().embed
            embed(["warm up the model"])
            reference = InMemoryStore(
                index={"dims": mem.embedder.dimension, "embed": embed, "fields": ["text"]}
            )
            ref = _timed(lambda: reference.batch(ops))
            mem.embedder.embed(["warm up the model"])
            store = UCMAStore(mem, index={"fields": ["text"]})
            ucma = _timed(lambda: store.batch(ops))
            assert len(store.search(("memories",), limit=len(ops) + 1)) == len(ops)
            return ucma, ref, mem.embedder.name


def bench_bulk(n_items: int, embedders: Sequence[str]) -> str:
    """One ``batch`` of ``n_items`` puts per embedder (``default``, ``hashing``); a Markdown table."""
    ops = [
        PutOp(("memories", f"user{n % 10}"), f"k{n}", {"text": item.text, "n": n})
        for n, item in enumerate(make_items(n_items))
    ]
    lines = [
        f"Bulk: one batch of {n_items:,} puts.",
        "",
        "| store | embedder | seconds | items/s | CPU seconds | load average |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for embedder in embedders:
        ucma, ref, name = _bulk_run(ops, embedder)
        load = os.getloadavg()[0]
        lines += [
            f"| InMemoryStore (same model) | {name} | {ref[0]:.1f} | {n_items / ref[0]:,.0f} | "
            f"{ref[1]:.1f} | {load:.1f} |",
            f"| UCMAStore.batch | {name} | {ucma[0]:.1f} | {n_items / ucma[0]:,.0f} | "
            f"{ucma[1]:.1f} | {load:.1f} |",
        ]
        print(lines[-2], lines[-1], sep="\n", flush=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------- report
def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


def table(rows: Sequence[Row], checkpoint_flush: float, args: argparse.Namespace) -> str:
    lines = [
        f"Checkpoints: {args.turns} turns per round, {args.rounds} rounds (median); "
        f"store: {args.items} items, {args.queries} queries; embedder: hashing"
        + (f" (store: {args.store_embedder})." if args.store_embedder != "hashing" else "."),
        "",
        "| operation | LangGraph (ms) | UCMA (ms) | ratio |",
        "|---|---:|---:|---:|",
    ]
    for op, ref, ucma in rows:
        reference = "SqliteSaver" if not op.startswith(("a", "store")) else ""
        label = f"{op} (vs {reference or ('AsyncSqliteSaver' if op.startswith('a') else 'InMemoryStore')})"
        lines.append(f"| {label} | {_ms(ref)} | {_ms(ucma)} | {ucma / ref:.2f}x |")
    lines += [
        "",
        f"Mirror: left to observe at the end of a round (`flush`), per turn: {_ms(checkpoint_flush)} ms "
        "(2 messages a turn: one embedding batch and one Chroma write, off the checkpoint path).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--bulk", type=int, default=10_000)
    parser.add_argument("--bulk-only", action="store_true")
    parser.add_argument("--bulk-embedders", default="default,hashing")
    parser.add_argument("--store-embedder", default="hashing", choices=["hashing", "local"])
    parser.add_argument("--store-only", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    bulk = bench_bulk(args.bulk, args.bulk_embedders.split(",")) if args.bulk else ""
    if args.bulk_only:
        report = bulk
    else:
        checkpoint_rows, flush = ([], 0.0) if args.store_only else bench_checkpoints(args.turns, args.rounds)
        store_rows = bench_store(args.items, args.queries, args.store_embedder)
        report = table([*checkpoint_rows, *store_rows], flush, args)
        report += "\n\n" + bulk if bulk else ""
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
