"""What every command shares: exit codes, opening a folder safely, embedders by name, output.

Opening is careful in ways ``Memory(path)`` is not, because a shell user mistypes
paths: a command never creates a folder it was asked to read and never opens a
directory that is not a UCMA folder. A folder the core refuses to open as it is
(:class:`~ucma_core.errors.RepairNeededError`) gets a hint at ``ucma verify --repair``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from ucma_core.cli.settings import Settings
from ucma_core.errors import ConfigurationError, EmbedderMismatchError, InvalidInputError, RepairNeededError
from ucma_core.memory import Memory
from ucma_core.progress import ProgressCallback, TerminalProgress, auto_progress
from ucma_core.protocols import Embedder
from ucma_core.storage.manifest import Manifest
from ucma_core.storage.postgres.url import PostgresTarget, is_postgres_url

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Output",
    "add_command",
    "check_folder",
    "embedder_from_spec",
    "open_memory",
    "recorded_embedder",
    "settings_of",
    "when",
]

EXIT_OK = 0
#: The command ran and found a problem, or could not do its work (a UCMA error).
EXIT_FAILURE = 1
#: Bad arguments: unknown options, malformed values.
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

EMBEDDER_HELP = (
    "embedder to open the folder with: hashing[:DIM], minilm, openai[:MODEL[:DIM]] "
    "(default: the one recorded in the folder)"
)


class Output:
    """Where a command writes: its result on stdout (text, or one JSON document with
    ``--json``), progress and notes on stderr."""

    def __init__(
        self,
        *,
        json_mode: bool,
        progress: bool | None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.json_mode = json_mode
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self._progress = progress

    def print(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def note(self, text: str) -> None:
        """A remark for the person at the terminal (stderr, so pipes get only the result)."""
        self.stderr.write(text + "\n")

    def json(self, data: Any) -> None:
        self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def progress(self) -> ProgressCallback | None:
        """A progress bar on stderr: when it is a terminal (default), always (``--progress``)
        or never (``--no-progress``)."""
        if self._progress is None:
            return auto_progress(self.stderr)
        return TerminalProgress(self.stderr, force=True) if self._progress else None


Command = Callable[[argparse.Namespace, "Output"], int]


def add_command(
    commands: Any, name: str, *, parents: list[argparse.ArgumentParser], run: Command, help: str
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` that calls ``run``; its ``--help`` shows ``run``'s docstring."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        parents=parents,
        help=help,
        description=inspect.cleandoc(run.__doc__ or help),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=run)
    return parser


def when(epoch: float | None) -> str:
    """``2025-06-15 14:00 UTC`` (or ``-``)."""
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def embedder_from_spec(spec: str, recorded: tuple[str, int] | None = None) -> Embedder:
    """An embedder from its command-line name: ``hashing[:DIM]``, ``minilm``,
    ``openai[:MODEL[:DIM]]``. ``hashing`` alone takes the folder's recorded dimension
    (else 256)."""
    from ucma_core.embedders import HashingEmbedder, LocalMiniLMEmbedder, OpenAIEmbedder

    kind, _, rest = spec.strip().partition(":")
    kind = kind.lower()
    try:
        if kind == "hashing":
            if rest:
                return HashingEmbedder(int(rest))
            known = recorded[1] if recorded and recorded[0].startswith("hashing-") else 256
            return HashingEmbedder(known)
        if kind in ("minilm", "local") and not rest:
            return LocalMiniLMEmbedder()
        if kind == "openai":
            model, _, dim = rest.partition(":")
            return OpenAIEmbedder(model or "text-embedding-3-small", dimension=int(dim) if dim else None)
    except ValueError as e:
        raise InvalidInputError(f"bad --embedder {spec!r}: {e}") from e
    raise InvalidInputError(f"unknown --embedder {spec!r}; use hashing[:DIM], minilm or openai[:MODEL[:DIM]]")


def recorded_embedder(folder: str | Path) -> tuple[str, int] | None:
    """The embedder name and dimension ``folder``'s manifest records (``None`` if it has none);
    ``folder`` may be a ``postgresql://`` URL (``None`` if the database holds no such memory)."""
    if is_postgres_url(folder):
        from ucma_core.storage.postgres.backend import recorded_embedder as recorded_in_database

        return recorded_in_database(PostgresTarget.parse(str(folder)))
    manifest = Manifest.load(Path(folder))
    return None if manifest is None else (manifest.embedder_name, manifest.dimension)


#: Files only a UCMA memory folder has (any one of them makes a directory one, even without ucma.json).
_UCMA_FILES = ("ucma.json", "chroma", "keywords.sqlite3", "graph.snapshot.json", "graph.journal.jsonl")


def check_folder(folder: Path) -> list[str]:
    """Why ``folder`` is not an existing memory folder (empty: it is one, perhaps a damaged one
    that the core will refuse to open until it is repaired)."""
    if not folder.exists():
        return [f"no memory folder at {folder}"]
    if not folder.is_dir():
        return [f"{folder} is a file, not a memory folder"]
    if not any((folder / name).exists() for name in _UCMA_FILES):
        return [f"{folder} is not a UCMA memory folder (it has no ucma.json)"]
    return []


REPAIR_HINT = (
    "; on the command line, `ucma verify PATH` shows that plan and `ucma verify PATH --repair` applies it"
)


def settings_of(args: argparse.Namespace) -> Settings:
    """The ``--config`` / ``--provider`` choices :func:`~ucma_core.cli.main` put on ``args``
    (the defaults when a command is run without it)."""
    settings = getattr(args, "settings", None)
    return settings if isinstance(settings, Settings) else Settings()


@contextmanager
def open_memory(
    path: str | Path, *, embedder: str | None = None, settings: Settings | None = None
) -> Iterator[Memory]:
    """Open an existing memory folder (see the module docstring for the checks), or an existing
    memory in PostgreSQL named by a ``postgresql://`` URL (its Chroma server comes from the
    ``--config`` file's ``[chroma]`` table), with the configuration and provider of
    ``settings`` and close it after."""
    folder: str | Path = path
    if is_postgres_url(path):
        if recorded_embedder(path) is None:
            raise ConfigurationError(f"no memory {PostgresTarget.parse(str(path)).display} in that database")
    else:
        folder = Path(path)
        problems = check_folder(folder)
        if problems:
            raise ConfigurationError(problems[0])
    chosen = None if embedder is None else embedder_from_spec(embedder, recorded_embedder(folder))
    options = (settings or Settings()).memory_options()
    try:
        memory = Memory(folder, embedder=chosen, **options)
    except RepairNeededError as e:
        raise RepairNeededError(f"{e}{REPAIR_HINT}", problems=e.problems, plan=e.plan) from e
    except EmbedderMismatchError as e:
        raise EmbedderMismatchError(f"{e} (choose it with --embedder)") from e
    except ConfigurationError as e:
        if embedder is None and "embedder" in str(e):
            raise ConfigurationError(f"{e}; on the command line, pass it with --embedder") from e
        raise
    try:
        yield memory
    finally:
        memory.close()
