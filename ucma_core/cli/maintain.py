"""Keeping a folder healthy: ``ucma consolidate``, ``prune``, ``verify`` and ``forget-user``.

``consolidate`` and ``prune`` change or delete memories by policy, so both run dry
by default and act only with ``--apply``. ``forget-user`` deletes what it is told
to (one named user), so it acts at once; ``--dry-run`` only counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ucma_core.cli.common import (
    EMBEDDER_HELP,
    EXIT_FAILURE,
    EXIT_OK,
    Output,
    add_command,
    check_folder,
    embedder_from_spec,
    open_memory,
    recorded_embedder,
    settings_of,
)
from ucma_core.config import ChromaConfig
from ucma_core.consolidation import PHASES, ConsolidationReport
from ucma_core.errors import ConfigurationError, RepairNeededError
from ucma_core.memory import Memory
from ucma_core.plots.figure import short
from ucma_core.portable import export_memory, import_memory
from ucma_core.scope import ANY
from ucma_core.storage.verify import RepairReport, VerifyReport

__all__ = ["register"]

_PROBLEMS = {
    "only_in_chroma": "records in Chroma without a graph node",
    "only_in_graph": "graph memories without a Chroma record",
    "missing_keywords": "records missing from the keyword index",
    "stale_keywords": "keyword rows of deleted records",
    "bare_nodes": "graph nodes that are neither a memory nor an entity",
}


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    consolidate = add_command(
        commands,
        "consolidate",
        parents=[common],
        run=_consolidate,
        help="run one sleep cycle (dry run unless --apply)",
    )
    consolidate.add_argument("path", help="the memory folder")
    _apply_options(consolidate)
    consolidate.add_argument(
        "--phase", action="append", dest="phases", choices=PHASES, help="run only this phase (repeatable)"
    )
    consolidate.add_argument("--embedder", help=EMBEDDER_HELP)

    prune = add_command(
        commands, "prune", parents=[common], run=_prune, help="forget faded memories (dry run unless --apply)"
    )
    prune.add_argument("path", help="the memory folder")
    _apply_options(prune)
    prune.add_argument("--user", help="only this user's memories (default: every user's)")
    prune.add_argument("--limit", type=int, default=20, help="memories to list (default 20)")
    prune.add_argument("--embedder", help=EMBEDDER_HELP)

    verify = add_command(
        commands,
        "verify",
        parents=[common],
        run=_verify,
        help="check Chroma, the graph and the keyword index agree (exit 1 if not)",
    )
    verify.add_argument("path", help="the memory folder")
    verify.add_argument(
        "--repair", action="store_true", help="repair what is wrong (Memory.repair), then check again"
    )
    verify.add_argument(
        "--deep", action="store_true", help="also read a sample of vectors from Chroma's index"
    )
    verify.add_argument("--embedder", help=EMBEDDER_HELP)

    forget = add_command(
        commands,
        "forget-user",
        parents=[common],
        run=_forget_user,
        help="delete every memory of one user and scrub their text",
    )
    forget.add_argument("path", help="the memory folder")
    forget.add_argument("user", help="the user id")
    forget.add_argument("--dry-run", action="store_true", help="only count the user's memories")
    forget.add_argument("--embedder", help=EMBEDDER_HELP)


def _apply_options(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--apply", action="store_true", help="do it (the default is a dry run)")
    mode.add_argument("--dry-run", action="store_true", help="only report what would happen (the default)")


# ------------------------------------------------------------------ consolidate
def _cycle(memory: Memory, phases: tuple[str, ...], out: Output) -> ConsolidationReport:
    """One cycle, with a progress bar per phase."""
    progress = out.progress()
    try:
        return memory.consolidate(phases=list(phases), progress=progress)
    finally:
        close = getattr(progress, "close", None)
        if callable(close):  # end a bar left open by a phase that stopped short
            close()


def _consolidate(args: argparse.Namespace, out: Output) -> int:
    """Run one sleep cycle (compress, group, extract, patterns, merge, transitions, reinforce,
    prune) with the provider of --provider (default: offline, no model). Without --apply it
    runs on a temporary copy of the folder (made by export and import) and reports what the
    cycle would do; the folder itself is not changed."""
    phases = tuple(p for p in PHASES if p in (args.phases or PHASES))
    settings = settings_of(args)
    with open_memory(args.path, embedder=args.embedder, settings=settings) as memory:
        if args.apply:
            report = _cycle(memory, phases, out)
        else:
            scratch = Path(tempfile.mkdtemp(prefix="ucma-dry-run-"))
            try:
                export_memory(memory, scratch / "copy.jsonl", progress=out.progress())
                # the copy keeps its vectors in its own folder, even if the config names a Chroma server
                local = dataclasses.replace(memory.config, chroma=ChromaConfig())
                with Memory(
                    scratch / "copy", embedder=memory.embedder, config=local, provider=settings.provider
                ) as copy:
                    import_memory(copy, scratch / "copy.jsonl", progress=out.progress())
                    report = _cycle(copy, phases, out)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    data = {"dry_run": not args.apply, "provider": settings.describe(), **dataclasses.asdict(report)}
    if out.json_mode:
        out.json(data)
        return EXIT_OK
    for phase in phases:
        counts = report.phases.get(phase, {})
        done = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()) or "nothing to do"
        out.print(f"  {phase:<12} {done}")
    for error in report.errors:
        out.print(f"  error: {error}")
    out.print(f"  ({report.seconds:.2f} s, provider {settings.describe()})")
    if not args.apply:
        out.print("dry run on a copy: the folder was not changed; run again with --apply to do it")
    return EXIT_OK


# ------------------------------------------------------------------ prune
def _prune(args: argparse.Namespace, out: Output) -> int:
    """Let faded memories go: those whose retention fell below the prune threshold and that no
    protection keeps (important, central in the graph, open intention, working procedure,
    validated learning). Without --apply, only lists them."""
    user = ANY if args.user is None else str(args.user)
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        plan = memory.prune(dry_run=True, user_id=user)
        shown = [
            {"id": i, "memory_type": r.memory_type.value, "content": r.content}
            for i in plan.forgotten[: max(0, args.limit)]
            if (r := memory.get(i)) is not None
        ]
        report = memory.prune(dry_run=False, user_id=user) if args.apply else plan
    data = {**dataclasses.asdict(report), "listed": shown}
    if out.json_mode:
        out.json(data)
        return EXIT_OK
    verb = "forgot" if args.apply else "would forget"
    out.print(f"examined {report.examined} memories; {verb} {len(report.forgotten)}")
    if report.by_type:
        out.print("  by type:     " + ", ".join(f"{k} {v}" for k, v in sorted(report.by_type.items())))
    if report.protected:
        out.print("  kept faded:  " + ", ".join(f"{k} {v}" for k, v in sorted(report.protected.items())))
    for row in shown:
        out.print(f"  {row['id']}  {row['memory_type']:<11} {short(row['content'], 70)}")
    if len(report.forgotten) > len(shown):
        out.print(f"  … and {len(report.forgotten) - len(shown)} more (--limit to list more)")
    if not args.apply:
        out.print("dry run: nothing was deleted; run again with --apply to forget them")
    return EXIT_OK


# ------------------------------------------------------------------ verify
def _problems(report: VerifyReport) -> dict[str, list[str]]:
    return {name: list(getattr(report, name)) for name in _PROBLEMS if getattr(report, name)}


def _check(folder: Path, args: argparse.Namespace) -> VerifyReport:
    with open_memory(folder, embedder=args.embedder, settings=settings_of(args)) as memory:
        return memory.verify(deep=args.deep)


def _repair(folder: Path, args: argparse.Namespace, out: Output) -> RepairReport:
    embedder = None if args.embedder is None else embedder_from_spec(args.embedder, recorded_embedder(folder))
    progress = out.progress()
    try:
        return Memory.repair(folder, embedder=embedder, config=settings_of(args).config, progress=progress)
    finally:
        close = getattr(progress, "close", None)
        if callable(close):
            close()


def _verify(args: argparse.Namespace, out: Output) -> int:
    """Check that Chroma, the memory graph and the keyword index agree. Exit 0 if the folder is
    consistent, 1 if not. Nothing is changed without --repair.

    Opening a folder already recovers what it can without losing anything (a torn journal
    line, a damaged snapshot replaced by the previous one, a rebuilt keyword index: listed
    as notes). A folder that cannot be opened without losing memories (a missing
    chroma/, ucma.json or journal tail, Chroma and the graph disagreeing) is refused: verify
    then lists what is wrong and what a repair would do, including any memories it would
    drop. --repair applies Memory.repair(): it keeps all it can (records put back from the
    keyword index's copy, graph nodes rebuilt from Chroma with their first values) and drops
    only memories whose text is left nowhere. Restoring a backup is always better."""
    folder = Path(args.path)
    missing = check_folder(folder)
    if missing:
        raise ConfigurationError(missing[0])
    data: dict[str, Any] = {
        "ok": False,
        "needs_repair": False,
        "problems": [],
        "plan": [],
        "repair": None,
        "checks": None,
    }
    report: VerifyReport | None
    try:
        report = _check(folder, args)
    except RepairNeededError as e:
        report = None
        data.update(needs_repair=True, problems=list(e.problems), plan=list(e.plan))
    if args.repair and (report is None or not report.ok):
        data["repair"] = dataclasses.asdict(_repair(folder, args, out))
        report = _check(folder, args)
    if report is not None:
        data.update(ok=report.ok, checks=dataclasses.asdict(report))
    if out.json_mode:
        out.json(data)
    else:
        _print_verify(out, data, report, repairing=args.repair)
    return EXIT_OK if report is not None and report.ok else EXIT_FAILURE


def _print_verify(out: Output, data: dict[str, Any], report: VerifyReport | None, *, repairing: bool) -> None:
    if data["needs_repair"]:
        out.print("needs repair: opening this folder as it is would lose memories (nothing was changed)")
        for problem in data["problems"]:
            out.print(f"  problem: {problem}")
        for step in data["plan"]:
            out.print(f"  a repair would: {step}")
    repaired = data["repair"]
    if repaired is not None:
        out.print("repaired:" if repaired["problems"] or repaired["actions"] else "reopened to reconcile:")
        for action in repaired["actions"]:
            out.print(f"  did: {action}")
        for name in ("restored_from_chroma", "restored_from_keywords", "dropped"):
            if repaired[name]:
                shown = ", ".join(repaired[name][:5])
                out.print(f"  {name.replace('_', ' ')}: {len(repaired[name])} ({shown})")
    if report is None:
        out.print("restore the folder from a backup, or run again with --repair to apply that plan")
        return
    counts = (
        f"{report.chroma_records} records in Chroma, {report.graph_memories} graph memories, "
        f"{report.keyword_rows} keyword rows, {report.entities} entities"
    )
    out.print(("consistent: " if report.ok else "not consistent: ") + counts)
    for name, ids in _problems(report).items():
        out.print(f"  {len(ids)} {_PROBLEMS[name]}: {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}")
    for problem in report.problems:
        out.print(f"  problem: {problem}")
    for note in report.notes:
        out.print(f"  recovered on open: {note}")
    if report.skipped:
        out.print(f"  {len(report.skipped)} chat turn(s) were not stored (see ucma info, Memory.skipped())")
    if not report.ok and not repairing:
        out.print("run again with --repair to repair the folder")


# ------------------------------------------------------------------ forget-user
def _forget_user(args: argparse.Namespace, out: Output) -> int:
    """Delete every memory of one user from Chroma, the graph and every index, and scrub their
    text from the folder's files. Acts at once (you named the user); --dry-run only counts."""
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        count = _count(memory, args.user) if args.dry_run else memory.forget_user(args.user)
        waiting = sorted(memory.pending_forgets) if not args.dry_run else []
    if out.json_mode:
        data: dict[str, object] = {"user_id": args.user, "dry_run": bool(args.dry_run), "memories": count}
        out.json(data if args.dry_run else {**data, "pending": waiting})
    elif args.dry_run:
        out.print(f"user {args.user!r} has {count} memories; run again without --dry-run to forget them")
    else:
        out.print(f"forgot {count} memories of user {args.user!r} and scrubbed their text from the folder")
        for name in waiting:
            out.print(
                f"  {name}: not open and no installed package opens it; its files keep the user's text "
                "until it is next opened on this folder (it applies the forget first)"
            )
    return EXIT_OK


def _count(memory: Memory, user: str) -> int:
    total, page = 0, 2000
    while True:
        n = len(memory.list_memories(user_id=user, limit=page, offset=total))
        total += n
        if n < page:
            return total
