"""Shared fixtures: a controllable clock and memories on the hashing embedder.

Sockets to anything but loopback are refused for the whole run, so no test can
reach the network by accident.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    host = address[0] if isinstance(address, tuple) else address
    remote = isinstance(host, str) and host not in ("::1", "localhost") and not host.startswith("127.")
    if remote and self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"test tried to reach {host!r}; tests run offline")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


class FakeClock:
    """A clock the test moves by hand (epoch seconds)."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, *, days: float = 0.0, seconds: float = 0.0) -> None:
        self.now += days * 86_400.0 + seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def mem(folder: Path, clock: FakeClock) -> Iterator[Memory]:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        yield m


@pytest.fixture
def keep_all(folder: Path, clock: FakeClock) -> Iterator[Memory]:
    """A memory that keeps every observation (importance threshold 0)."""
    with Memory(
        folder, embedder=HashingEmbedder(), clock=clock, config=MemoryConfig(importance_threshold=0.0)
    ) as m:
        yield m
