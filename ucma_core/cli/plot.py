"""Pictures to a file: ``ucma plot forgetting``, ``ucma plot graph`` and ``ucma plot signals``
(matplotlib from ``ucma[plots]``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ucma_core.cli.common import EMBEDDER_HELP, EXIT_OK, Output, add_command, open_memory, settings_of

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    plot = commands.add_parser("plot", help="draw forgetting curves, the graph or search signals to an image")
    plot.description = "Draw a picture of a memory folder to an image file (needs ucma[plots])."
    kinds = plot.add_subparsers(dest="plot", metavar="KIND", required=True)

    forgetting = add_command(
        kinds, "forgetting", parents=[common], run=_forgetting, help="retention curves of some memories"
    )
    forgetting.add_argument("path", help="the memory folder")
    forgetting.add_argument("ids", nargs="+", metavar="ID", help="memory ids (at most 12)")
    forgetting.add_argument("--days", type=float, default=30.0, help="days ahead to draw (default 30)")
    _output(forgetting)

    graph = add_command(
        kinds, "graph", parents=[common], run=_graph, help="the memory graph around a memory or entity"
    )
    graph.add_argument("path", help="the memory folder")
    graph.add_argument("id", nargs="?", help="a memory id (or use --entity)")
    graph.add_argument("--entity", help="draw around the entity of this name instead")
    graph.add_argument("--user", help="the user whose facts name the entity (default: any)")
    graph.add_argument("--hops", type=int, default=1, help="edges to follow outward (default 1)")
    graph.add_argument("--max-nodes", type=int, default=40, help="most nodes to draw (default 40)")
    _output(graph)

    signals = add_command(
        kinds, "signals", parents=[common], run=_signals, help="what each signal gave each search result"
    )
    signals.add_argument("path", help="the memory folder")
    signals.add_argument("query", help="what to recall")
    signals.add_argument("--user", help="only this user's memories (default: every user's)")
    signals.add_argument("-k", type=int, default=8, help="how many results (default 8)")
    _output(signals)


def _output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, help="the image file to write (.png, .svg, .pdf)")
    parser.add_argument("--embedder", help=EMBEDDER_HELP)


def _done(args: argparse.Namespace, out: Output) -> int:
    size = Path(args.output).stat().st_size
    if out.json_mode:
        out.json({"output": args.output, "bytes": size})
    else:
        out.print(f"wrote {args.output} ({size} bytes)")
    return EXIT_OK


def _forgetting(args: argparse.Namespace, out: Output) -> int:
    """Draw the retention curves of some memories: from each one's last review on, with its
    stability, its reviews and the retention below which the forgetting engine lets it go."""
    from ucma_core.plots import plot_forgetting_curves

    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        plot_forgetting_curves(memory, args.ids, args.output, days_after=args.days)
    return _done(args, out)


def _graph(args: argparse.Namespace, out: Output) -> int:
    """Draw the memory graph around a memory (its id) or an entity (--entity NAME): nodes
    coloured by memory type, edges by type, the centre ringed."""
    from ucma_core.plots import plot_memory_graph
    from ucma_core.scope import ANY

    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        plot_memory_graph(
            memory,
            args.id,
            args.output,
            entity=args.entity,
            user_id=ANY if args.user is None else args.user,
            hops=args.hops,
            max_nodes=args.max_nodes,
        )
    return _done(args, out)


def _signals(args: argparse.Namespace, out: Output) -> int:
    """Recall QUERY as `ucma search` does (a look: nothing is reinforced) and draw each result's
    score split into relevance, importance, recency and retention, next to its retrieval signals."""
    from ucma_core.plots import plot_signals
    from ucma_core.scope import ANY

    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        user = ANY if args.user is None else args.user
        results = memory.remember(args.query, k=args.k, user_id=user, reinforce=False)
        if not results:
            out.note("no memories match; nothing to draw")
            return EXIT_OK
        plot_signals(results, args.output, ranking=memory.config.ranking, title=f"“{args.query}”")
    return _done(args, out)
