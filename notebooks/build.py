"""Write the notebooks in this folder from the cells below, run each top to bottom and store its outputs.

Usage (from the checkout, in its venv)::

    python notebooks/build.py                 # every notebook
    python notebooks/build.py 01 05           # the notebooks whose names start with 01 / 05
    python notebooks/build.py --no-execute    # write the cells only

Each notebook is a list of cells (``md(...)`` / ``code(...)``) in a module next to this
file (``nb01_quickstart.py`` ...), so a review reads Python, not JSON. A notebook is run in
a fresh kernel in a temporary working directory, offline; its outputs (tables, PNG plots)
are stored so a reader sees them on a code host. Cell ids are fixed and timings are not
recorded, so rebuilding an unchanged notebook changes nothing.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def formatted(source: str) -> str:
    """A code cell's source as ``ruff format`` writes it (the project's settings); unchanged without ruff."""
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        return source
    out = subprocess.run(
        [find_ruff_bin(), "format", "--stdin-filename", str(HERE / "cell.py"), "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE,
    )
    return out.stdout.rstrip("\n")


def notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook of ``(kind, source)`` cells (code cells formatted by ruff), with stable cell ids."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for n, (kind, source) in enumerate(cells):
        make = nbformat.v4.new_markdown_cell if kind == "md" else nbformat.v4.new_code_cell
        text = source.strip("\n")
        cell = make(formatted(text) if kind == "code" else text)
        cell.id = f"cell-{n:02d}"
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode, *, timeout: int = 600) -> None:
    """Run every cell in a fresh kernel, in a temporary working directory."""
    saved = os.environ.get("TMPDIR")
    with tempfile.TemporaryDirectory() as workdir:
        os.environ["TMPDIR"] = workdir  # the kernel inherits it: its memory folders are cleaned up
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,
            resources={"metadata": {"path": workdir}},
        )
        try:
            client.execute()
        finally:
            if saved is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="build only notebooks whose names start with these")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    for source in sorted(HERE.glob("nb[0-9]*.py")):
        module = importlib.import_module(source.stem)
        name: str = module.NAME
        if args.only and not any(name.startswith(prefix) for prefix in args.only):
            continue
        nb = notebook(module.CELLS)
        if not args.no_execute:
            print(f"running {name} ...", flush=True)
            execute(nb)
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
        print(f"wrote {HERE / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
