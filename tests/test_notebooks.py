"""The notebooks in notebooks/ run top to bottom, offline, in a fresh kernel; the committed
ones carry their outputs (what a reader sees on a code host) and are what notebooks/build.py writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).parents[1]
FOLDER = ROOT / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
CELL_TIMEOUT = 300  # seconds per cell


def _builder() -> ModuleType:
    sys.path.insert(0, str(FOLDER))
    try:
        spec = importlib.util.spec_from_file_location("notebooks_build", FOLDER / "build.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(FOLDER))


def _definitions() -> dict[str, list[tuple[str, str]]]:
    """Each notebook's cells as notebooks/nb*.py define them, by notebook file name."""
    sys.path.insert(0, str(FOLDER))
    try:
        found = {}
        for source in sorted(FOLDER.glob("nb[0-9]*.py")):
            spec = importlib.util.spec_from_file_location(f"notebooks_{source.stem}", source)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            found[module.NAME] = module.CELLS
        return found
    finally:
        sys.path.remove(str(FOLDER))


def test_every_defined_notebook_is_committed() -> None:
    assert sorted(_definitions()) == [path.name for path in NOTEBOOKS]
    assert len(NOTEBOOKS) >= 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_shows_its_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code_cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code_cells
    assert all(cell.execution_count is not None for cell in code_cells), "a cell was never run"
    outputs = [output for cell in code_cells for output in cell.outputs]
    assert outputs, "committed without outputs: run python notebooks/build.py"
    errors = [output for output in outputs if output.output_type == "error"]
    assert not errors, f"error output: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not any("Traceback" in text for text in stderr)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_is_what_build_py_writes(path: Path) -> None:
    pytest.importorskip("ruff")  # build.py formats code cells with ruff
    nb = nbformat.read(path, as_version=4)
    defined = _builder().notebook(_definitions()[path.name])
    assert [(c.cell_type, c.source) for c in nb.cells] == [(c.cell_type, c.source) for c in defined.cells], (
        "the notebook differs from its definition: run python notebooks/build.py"
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom_in_a_fresh_kernel(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the offline path, as in CI
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel's memory folders go here, and are cleaned up
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    outputs = [output for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs]
    assert outputs
    assert not [output for output in outputs if output.output_type == "error"]
