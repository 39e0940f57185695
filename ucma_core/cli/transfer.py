"""Moving a memory: ``ucma export`` and ``ucma import``."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ucma_core.cli.common import (
    EXIT_OK,
    Output,
    add_command,
    embedder_from_spec,
    open_memory,
    recorded_embedder,
    settings_of,
)
from ucma_core.cli.settings import Settings
from ucma_core.embedders.default import default_embedder
from ucma_core.errors import ConfigurationError
from ucma_core.memory import Memory
from ucma_core.portable import export_memory, import_memory, read_header
from ucma_core.protocols import Embedder
from ucma_core.storage.postgres.url import is_postgres_url

__all__ = ["register"]


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    export = add_command(
        commands, "export", parents=[common], run=_export, help="write a folder to a portable JSON-lines file"
    )
    export.add_argument("path", help="the memory folder, or a postgresql:// URL")
    export.add_argument("file", help="the file to write (.jsonl), or - for stdout")
    export.add_argument(
        "--no-vectors", action="store_true", help="leave the embeddings out (smaller; every import re-embeds)"
    )
    export.add_argument("--embedder", help="embedder to open the folder with (default: the recorded one)")

    imp = add_command(
        commands, "import", parents=[common], run=_import, help="load an export file into a folder"
    )
    imp.add_argument("file", help="a file written by ucma export")
    imp.add_argument("path", help="the memory folder (created if missing), or a postgresql:// URL (the same)")
    imp.add_argument(
        "--embedder",
        help="embedder of a new folder: hashing[:DIM], minilm, openai[:MODEL[:DIM]] "
        "(default: the file's, if it is a built-in one); another embedder than the file's re-embeds",
    )
    imp.add_argument("--reembed", action="store_true", help="embed the content again even if the vectors fit")


def _export(args: argparse.Namespace, out: Output) -> int:
    """Write every memory of every user (all fields, retention state, embeddings), the entities
    and the graph edges to a JSON-lines file that `ucma import` reads. The file is written
    atomically: an interrupted export leaves no partial file behind."""
    to_stdout = args.file == "-"
    with open_memory(args.path, embedder=args.embedder, settings=settings_of(args)) as memory:
        report = export_memory(
            memory,
            out.stdout if to_stdout else Path(args.file),
            vectors=not args.no_vectors,
            progress=out.progress(),
        )
    summary = (
        f"exported {report.memories} memories, {report.entities} entities and {report.edges} edges"
        f"{' with' if report.vectors else ' without'} vectors ({report.embedder_name})"
    )
    if to_stdout:
        out.note(summary)
    elif out.json_mode:
        out.json({"file": args.file, **report.__dict__})
    else:
        out.print(f"{summary} to {args.file}")
    return EXIT_OK


@contextmanager
def _new_memory(folder: str | Path, embedder: Embedder, settings: Settings) -> Iterator[Memory]:
    """A new memory folder that is removed again if the import into it fails, so an import into
    a new folder is all or nothing. A new memory in PostgreSQL stays (run the import again:
    the records already there are skipped)."""
    created = isinstance(folder, Path) and not folder.exists()
    memory = Memory(folder, embedder=embedder, **settings.memory_options())
    done = False
    try:
        yield memory
        done = True
    finally:
        memory.close()
        if created and not done:
            shutil.rmtree(folder, ignore_errors=True)


def _new_folder_embedder(spec: str | None, file: Path) -> Embedder:
    header = read_header(file)
    if spec is not None:
        return embedder_from_spec(spec, (header.embedder_name, header.dimension))
    try:
        return default_embedder((header.embedder_name, header.dimension))
    except ConfigurationError as e:
        raise ConfigurationError(
            f"{file} was exported with embedder {header.embedder_name!r}; choose the new folder's "
            "embedder with --embedder (another one re-embeds)"
        ) from e


def _import(args: argparse.Namespace, out: Output) -> int:
    """Load a file written by `ucma export` into a folder: a new one (created with the file's
    embedder, or --embedder) or an existing one (records already there are skipped, so an
    interrupted import can simply be run again). The records keep their ids, fields and
    retention state; the graph edges are restored with their weights. A folder whose
    embedder differs from the file's gets the content embedded again."""
    file = Path(args.file)
    folder: str | Path = args.path if is_postgres_url(args.path) else Path(args.path)
    header = read_header(file)
    if isinstance(folder, Path):
        existing = folder.exists() and (folder / "ucma.json").exists()
    else:
        existing = recorded_embedder(folder) is not None
    context: AbstractContextManager[Memory]
    if existing:
        context = open_memory(folder, embedder=args.embedder, settings=settings_of(args))
    else:
        if isinstance(folder, Path) and folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise ConfigurationError(
                f"{folder} exists and is not a UCMA memory folder; import into a new folder"
            )
        context = _new_memory(folder, _new_folder_embedder(args.embedder, file), settings_of(args))
    with context as memory:
        report = import_memory(memory, file, reembed=args.reembed, progress=out.progress())
        embedder = memory.embedder.name
    if out.json_mode:
        out.json(
            {
                "file": args.file,
                "path": args.path,
                "created": not existing,
                "embedder": embedder,
                **report.__dict__,
            }
        )
        return EXIT_OK
    out.print(
        f"imported {report.memories} memories into {'new folder ' if not existing else ''}{args.path} "
        f"({embedder}); {report.entities} entities restored, {report.edges} edges set"
    )
    if report.embedded:
        why = "another embedder than the file's" if header.embedder_name != embedder else "no usable vector"
        out.print(f"  {report.embedded} embedded again ({why})")
    if report.skipped or report.key_conflicts:
        out.print(f"  skipped {report.skipped} already there, {report.key_conflicts} whose key was taken")
    if report.edges_skipped:
        out.print(f"  {report.edges_skipped} edges skipped (an end is not in the folder)")
    return EXIT_OK
