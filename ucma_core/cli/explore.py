"""Looking inside a folder: ``ucma info``, ``ucma search`` and ``ucma show``."""

from __future__ import annotations

import argparse
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ucma_core.cli.common import (
    EMBEDDER_HELP,
    EXIT_OK,
    Output,
    add_command,
    open_memory,
    settings_of,
    when,
)
from ucma_core.dynamics.retention import retention
from ucma_core.errors import MemoryNotFoundError
from ucma_core.memory import Memory
from ucma_core.plots.figure import short
from ucma_core.plots.forgetting import fade_threshold, fade_time
from ucma_core.plots.signals import FACTORS, score_contributions
from ucma_core.portable.lines import record_to_json
from ucma_core.records import Fact, MemoryRecord, MemoryType, RetrievalResult
from ucma_core.scope import ANY, ScopeId

__all__ = ["register"]

#: One line each, for the legend under ``ucma search``.
SIGNAL_MEANINGS = {
    "dense": "cosine similarity of the query and memory embeddings",
    "keyword": "BM25 score of the query's words (higher is better; not 0..1)",
    "entity": "a fact about an entity the query names (1.0), or an episode it came from (0.7)",
    "time": "inside the time range the query asked about",
    "speaker": "a turn of the person the query asks about",
    "kind": "a procedure, for a 'how do I' question",
    "graph": "reached by spreading activation from the best candidates",
}
_TIMES = {"valid_from", "valid_to", "triggered_at"}
_COMMON = {
    "id",
    "memory_type",
    "content",
    "timestamp",
    "user_id",
    "agent_id",
    "session_id",
    "importance",
    "source",
    "tags",
    "metadata",
    "source_ids",
    "stability",
    "last_access",
    "access_count",
    "key",
}


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    info = add_command(
        commands, "info", parents=[common], run=_info, help="counts by type and scope, disk use, embedder"
    )
    info.add_argument("path", help="the memory folder")
    info.add_argument("--embedder", help=EMBEDDER_HELP)

    search = add_command(
        commands,
        "search",
        parents=[common],
        run=_search,
        help="recall by meaning, with each result's signals explained",
    )
    search.add_argument("path", help="the memory folder")
    search.add_argument("query", help="what to recall, in words")
    _scope_options(search)
    search.add_argument("-k", type=int, default=5, help="how many results (default 5)")
    search.add_argument(
        "--type", action="append", dest="types", metavar="TYPE", help="only this memory type (repeatable)"
    )
    search.add_argument("--embedder", help=EMBEDDER_HELP)

    show = add_command(
        commands,
        "show",
        parents=[common],
        run=_show,
        help="one memory with its graph neighbours and retention",
    )
    show.add_argument("path", help="the memory folder")
    show.add_argument("id", help="a memory id (or an entity id from another memory's edges)")
    show.add_argument("--hops", type=int, default=2, help="neighbour hops (default 2)")
    show.add_argument("--embedder", help=EMBEDDER_HELP)


def _scope_options(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--user", help="only this user's memories (default: every user's)")
    who.add_argument("--no-user", action="store_true", help="only memories stored without a user")
    parser.add_argument("--agent", help="only this agent's memories")
    parser.add_argument("--session", help="only this session's memories")


def scope_user(args: argparse.Namespace) -> ScopeId:
    """The ``user_id`` a command's ``--user`` / ``--no-user`` options ask for (default: every user)."""
    if args.no_user:
        return None
    return ANY if args.user is None else str(args.user)


# ------------------------------------------------------------------ info
def _disk(folder: Path) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            total = 0
            for root, _, files in os.walk(entry):
                total += sum((Path(root) / f).stat().st_size for f in files)
            sizes[entry.name + "/"] = total
        else:
            sizes[entry.name] = entry.stat().st_size
    return sizes


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _scopes(memory: Memory) -> list[dict[str, Any]]:
    counts: dict[str | None, Counter[str]] = defaultdict(Counter)
    page, offset = 2000, 0
    while True:
        records = memory.list_memories(user_id=ANY, limit=page, offset=offset)
        for record in records:
            counts[record.user_id][record.memory_type.value] += 1
        if len(records) < page:
            break
        offset += page
    sessions: dict[str | None, set[str | None]] = defaultdict(set)
    agents: dict[str | None, set[str]] = defaultdict(set)
    for user, agent, session in memory.list_scopes(user_id=ANY):
        sessions[user].add(session)
        if agent is not None:
            agents[user].add(agent)
    return [
        {
            "user_id": user,
            "memories": sum(by_type.values()),
            "by_type": {t.value: by_type.get(t.value, 0) for t in MemoryType},
            "agents": sorted(agents[user]),
            "sessions": len(sessions[user] - {None}),
        }
        for user, by_type in sorted(counts.items(), key=lambda kv: (kv[0] is not None, kv[0] or ""))
    ]


def _info(args: argparse.Namespace, out: Output) -> int:
    """Show what a memory folder holds: memories by type and by user, entities, graph size,
    disk use and the embedder it was made with."""
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        stats = memory.stats()
        scopes = _scopes(memory)
        disk = _disk(memory.path)
        skipped = memory.skipped()
        attached = {
            name: [
                f.relative_to(memory.path).as_posix() if f.is_relative_to(memory.path) else str(f)
                for f in files
            ]
            for name, files in memory.attachments.items()
        }
    data = {
        "path": str(Path(args.path).resolve()),
        "embedder": {"name": stats["embedder"], "dimension": stats["dimension"]},
        "memories": stats["memories"],
        "by_type": stats["by_type"],
        "entities": stats["entities"],
        "graph": {"nodes": stats["graph_nodes"], "edges": stats["graph_edges"]},
        "disk": {"total": sum(disk.values()), "files": disk},
        "scopes": scopes,
        "skipped": [entry.to_dict() for entry in skipped],
        "attachments": attached,
    }
    if out.json_mode:
        out.json(data)
        return EXIT_OK
    types = ", ".join(f"{k} {v}" for k, v in stats["by_type"].items() if v) or "none"
    out.print(f"Memory folder {data['path']}")
    out.print(f"  embedder   {stats['embedder']} ({stats['dimension']} dimensions)")
    out.print(f"  memories   {stats['memories']} ({types})")
    out.print(f"  entities   {stats['entities']}")
    out.print(f"  graph      {stats['graph_nodes']} nodes, {stats['graph_edges']} edges")
    parts = ", ".join(f"{name} {_size(size)}" for name, size in disk.items() if size)
    out.print(f"  disk       {_size(sum(disk.values()))} ({parts})")
    if skipped:
        out.print(f"  skipped    {len(skipped)} message(s) not stored (Memory.skipped() lists them):")
        for reason, n in Counter(entry.reason for entry in skipped).most_common(3):
            out.print(f"             {n} x {short(reason, 100)}")
    for name, files in attached.items():
        out.print(f"  attached   {name}: {', '.join(files) or '(no files)'}")
    if scopes:
        out.print()
        heads = [t.value for t in MemoryType]
        out.print(
            f"  {'user':<20} {'memories':>8} " + " ".join(f"{h:>11}" for h in heads) + "  sessions  agents"
        )
        for row in scopes:
            user = "(no user)" if row["user_id"] is None else short(str(row["user_id"]), 20)
            cells = " ".join(f"{row['by_type'][h]:>11}" for h in heads)
            agents = ", ".join(row["agents"]) or "-"
            out.print(f"  {user:<20} {row['memories']:>8} {cells}  {row['sessions']:>8}  {agents}")
    return EXIT_OK


# ------------------------------------------------------------------ search
def explain(result: RetrievalResult, memory: Memory) -> dict[str, Any]:
    """``result.to_dict()`` plus the score's split into its factors' contributions."""
    data = result.to_dict()
    data["contributions"] = score_contributions(result, memory.config.ranking)
    return data


def _search(args: argparse.Namespace, out: Output) -> int:
    """Recall memories the way Memory.remember() does and explain each result: its score split
    into relevance, importance, recency and retention, and the retrieval signals behind its
    relevance. A search only looks: unlike remember(), it does not reinforce the memories it
    returns (their retention, access count and last access stay as they were)."""
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        results = memory.remember(
            args.query,
            k=args.k,
            user_id=scope_user(args),
            agent_id=args.agent,
            session_id=args.session,
            memory_types=args.types,
            reinforce=False,
        )
        explained = [explain(r, memory) for r in results]
    route = results[0].route.to_dict() if results else None
    if out.json_mode:
        out.json({"query": args.query, "route": route, "results": explained})
        return EXIT_OK
    if not results:
        out.print("no memories match")
        return EXIT_OK
    out.print(f"route: {results[0].route}")
    seen: set[str] = set()
    for n, (result, data) in enumerate(zip(results, explained, strict=True), 1):
        record = result.record
        scope = ", ".join(
            f"{k} {v}" for k, v in (("user", record.user_id), ("session", record.session_id)) if v is not None
        )
        out.print()
        out.print(
            f"{n:>2}. {result.score:.3f}  {result.memory_type.value:<11} {when(result.timestamp)}  {scope}"
        )
        out.print(f"    {short(result.content, 100)}")
        out.print(f"    id {result.id}")
        parts = " + ".join(f"{data['contributions'][f]:.3f} {f} ({getattr(result, f):.2f})" for f in FACTORS)
        out.print(f"    score = {parts}")
        signals = " · ".join(f"{k} {v:.3g}" for k, v in sorted(result.signals.items(), key=lambda kv: -kv[1]))
        out.print(f"    signals: {signals or 'none'}")
        seen.update(result.signals)
    out.print()
    out.print("signals: " + "; ".join(f"{k} = {SIGNAL_MEANINGS[k]}" for k in SIGNAL_MEANINGS if k in seen))
    return EXIT_OK


# ------------------------------------------------------------------ show
def _type_fields(record: MemoryRecord) -> dict[str, Any]:
    return {
        k: v for k, v in record_to_json(record).items() if k not in _COMMON and v not in (None, "", [], {})
    }


def _label(memory: Memory, node: str) -> str:
    record = memory.get(node)
    if record is not None:
        return f"{record.memory_type.value} “{short(record.content, 60)}”"
    for fact_id, _, role, _ in memory.edges(node, direction="in"):
        fact = memory.get(fact_id)
        if isinstance(fact, Fact):
            return f"entity “{fact.subject if role == 'subject' else fact.object}”"
    return "entity"


def _show(args: argparse.Namespace, out: Output) -> int:
    """Show one memory: every field, its retention now and when it fades, its graph edges
    and the memories spreading activation reaches from it. An entity id shows its edges."""
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        record = memory.get(args.id)
        edges = memory.edges(args.id)
        if record is None and not edges:
            raise MemoryNotFoundError(f"no memory with id {args.id!r} in {args.path}")
        now = memory.now()
        edge_rows = [
            {
                "from": u,
                "to": v,
                "type": t,
                "weight": w,
                "other": v if u == args.id else u,
                "label": _label(memory, v if u == args.id else u),
            }
            for u, v, t, w in edges
        ]
        neighbours = []
        if record is not None:
            for node, hops, activation in memory.neighbours(args.id, hops=max(1, args.hops)):
                neighbours.append(
                    {"id": node, "hops": hops, "activation": activation, "label": _label(memory, node)}
                )
        config = memory.config
        title = _label(memory, args.id)
    data: dict[str, Any] = {"id": args.id, "record": None if record is None else record_to_json(record)}
    if record is not None:
        data["retention"] = {
            "now": retention(record.stability, record.last_access, now),
            "stability_days": record.stability,
            "last_access": record.last_access,
            "access_count": record.access_count,
            "prune_threshold": fade_threshold(record, config),
            "fades_at": fade_time(record, config),
        }
    data["edges"] = edge_rows
    data["neighbours"] = neighbours
    if out.json_mode:
        out.json(data)
        return EXIT_OK
    if record is None:
        out.print(f"{title} {args.id}")
    else:
        scope = ", ".join(
            f"{k} {v}"
            for k, v in (("user", record.user_id), ("agent", record.agent_id), ("session", record.session_id))
            if v is not None
        )
        out.print(f"{record.memory_type.value} {record.id}  ({scope or 'no user'}; source {record.source})")
        out.print(f"  {record.content}")
        out.print(f"  time        {when(record.timestamp)}")
        out.print(f"  importance  {record.importance:.2f}")
        if record.key is not None:
            out.print(f"  key         {record.key}")
        if record.tags:
            out.print(f"  tags        {', '.join(record.tags)}")
        if record.metadata:
            out.print(f"  metadata    {record.metadata}")
        if record.source_ids:
            out.print(
                f"  derived     from {len(record.source_ids)} memories: {', '.join(record.source_ids[:5])}"
            )
        for name, value in _type_fields(record).items():
            shown = when(value) if name in _TIMES and isinstance(value, (int, float)) else value
            out.print(f"  {name:<11} {shown}")
        r = data["retention"]
        out.print(
            f"  retention   {r['now']:.2f} now · stability {record.stability:.1f} days · "
            f"{record.access_count} reviews, last {when(record.last_access)}"
        )
        out.print(
            f"              falls below the prune threshold {r['prune_threshold']:.2f} on "
            f"{when(r['fades_at'])} unless reviewed again or protected"
        )
    out.print()
    out.print(f"Edges ({len(edge_rows)}):")
    for row in edge_rows:
        arrow = "→" if row["from"] == args.id else "←"
        out.print(f"  {arrow} {row['type']:<13} {row['weight']:.2f}  {row['other']}  {row['label']}")
    if record is not None:
        out.print()
        out.print(f"Neighbours by spreading activation ({len(neighbours)}):")
        for row in neighbours:
            out.print(f"  {row['activation']:.3f}  {row['hops']} hop(s)  {row['id']}  {row['label']}")
    return EXIT_OK
