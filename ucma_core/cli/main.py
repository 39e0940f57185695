"""The ``ucma`` command: argument parsing, dispatch, exit codes and one-line errors.

Exit codes: 0 success; 1 the command found a problem (``verify``) or could not do
its work (a UCMA error: no such folder, folder locked, unknown id…); 2 a usage
error (unknown option, malformed value); 130 interrupted. Errors are one line on
stderr, ``ucma: error: …``, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from ucma_core.cli import explore, maintain, plot, transfer
from ucma_core.cli.common import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Output
from ucma_core.cli.settings import Settings, add_options
from ucma_core.errors import InvalidInputError, UCMAError

__all__ = ["build_parser", "main"]

_EPILOG = """\
exit codes: 0 ok, 1 a problem found or a UCMA error, 2 usage error
examples:
  ucma info ./agent_memory
  ucma search ./agent_memory "where does Ana live?" --user ana
  ucma verify ./agent_memory || ucma verify ./agent_memory --repair
  ucma export ./agent_memory backup.jsonl && ucma import backup.jsonl ./copy --embedder hashing
  OPENAI_API_KEY=... ucma --provider openai --config ucma.toml consolidate ./agent_memory --apply
"""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (each module adds its own)."""
    from ucma_core import __version__

    common = argparse.ArgumentParser(add_help=False)
    options = common.add_argument_group("output")
    options.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for scripts"
    )
    bars = options.add_mutually_exclusive_group()
    bars.add_argument(
        "--progress", action="store_true", default=argparse.SUPPRESS, help="always show progress bars"
    )
    bars.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        default=argparse.SUPPRESS,
        help="never show progress bars (default: on a terminal)",
    )
    add_options(common)
    parser = argparse.ArgumentParser(
        prog="ucma",
        description="Look inside, search, maintain, verify, export and import UCMA memory folders.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"ucma {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (explore, maintain, transfer, plot):
        module.register(commands, common)
    return parser


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the ``ucma`` command with ``argv`` (default ``sys.argv[1:]``); return its exit code."""
    err = stderr if stderr is not None else sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    out = Output(
        json_mode=getattr(args, "json", False),
        progress=getattr(args, "progress", None),
        stdout=stdout,
        stderr=stderr,
    )
    settings: Settings | None = None
    try:
        settings = args.settings = Settings.from_args(args)
        code: int = args.run(args, out)
        return code
    except InvalidInputError as e:
        err.write(f"ucma: error: {_one_line(e)}\n")
        return EXIT_USAGE
    except UCMAError as e:
        err.write(f"ucma: error: {_one_line(e)}\n")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        err.write("ucma: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `ucma search … | head`: the reader left; say nothing more
        return EXIT_OK
    except OSError as e:  # a file named on the command line that cannot be read or written
        err.write(f"ucma: error: {_one_line(e)}\n")
        return EXIT_FAILURE
    finally:
        if settings is not None:
            settings.close()
