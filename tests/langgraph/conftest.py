"""Fixtures for the LangGraph adapter tests: memories on the hashing embedder, a
checkpointer and a Store on them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMACheckpointer, UCMAStore


class WordCounter:
    """Counts whitespace-separated words: a fast, deterministic token counter."""

    def count(self, text: str) -> int:
        return len(text.split())


@pytest.fixture
def words() -> WordCounter:
    return WordCounter()


@pytest.fixture
def lg_mem(tmp_path: Path) -> Iterator[Memory]:
    """A memory on the real clock (LangGraph's checkpoint ids and times are real-time)."""
    with Memory(tmp_path / "memory", embedder=HashingEmbedder()) as m:
        yield m


@pytest.fixture
def saver(lg_mem: Memory) -> Iterator[UCMACheckpointer]:
    with UCMACheckpointer(lg_mem) as s:
        yield s


@pytest.fixture
def store(lg_mem: Memory) -> UCMAStore:
    return UCMAStore(lg_mem)
