"""What the tests of the generated benchmark datasets share: the dataset built once per
module (``text``, ``data``, ``turns`` fixtures) and the check that the shipped file is a
fresh generation, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.quality.generate import dumps

ROOT = Path(__file__).resolve().parents[1]


def dataset_fixtures(build: Callable[[], dict[str, Any]]) -> tuple[Any, Any, Any]:
    """The module-scoped fixtures ``text`` (``build()`` serialised), ``data`` (parsed back)
    and ``turns`` (by turn id); assign them to those names in the test module."""

    @pytest.fixture(scope="module")
    def text() -> str:
        return dumps(build())

    @pytest.fixture(scope="module")
    def data(text: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    @pytest.fixture(scope="module")
    def turns(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {t["turn_id"]: t for t in data["turns"]}

    return text, data, turns


def assert_fresh(text: str, build: Callable[[], dict[str, Any]], shipped: Path, module: str) -> None:
    """A second build gives the same bytes, and ``shipped`` holds them (else: regenerate
    with ``python -m <module>``)."""
    assert dumps(build()) == text
    assert shipped.read_text(encoding="utf-8") == text, (
        f"{shipped.relative_to(ROOT)} is stale: run python -m {module}"
    )
