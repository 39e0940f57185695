"""A throwaway PostgreSQL 15 cluster and a real ``chroma run`` server for the whole session
(started by :func:`tests.servers.throwaway_servers`, stopped at the end). A machine
without PostgreSQL 15 fails here with a clear message: these tests are not skipped.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.servers import HOST, PG_BIN, Throwaway, throwaway_servers
from ucma_core import ChromaConfig, MemoryConfig

__all__ = ["HOST", "PG_BIN", "Servers", "servers"]


@dataclass
class Servers(Throwaway):
    """The session's servers, with helpers for tests."""

    def url(self, memory: str | None = None) -> str:
        """A ``postgresql://`` URL naming a new memory (or ``memory``) in the cluster."""
        return super().url(memory or "t" + uuid.uuid4().hex[:12])

    def config(self) -> MemoryConfig:
        return MemoryConfig(chroma=ChromaConfig(host=HOST, port=self.chroma_port))

    def pg_dump(self, memory_url: str) -> str:
        """Everything ``pg_dump`` writes out for the database (schema and rows)."""
        out = subprocess.run(
            [str(PG_BIN / "pg_dump"), "-h", HOST, "-p", str(self.pg_port), "-U", "postgres", "postgres"],
            capture_output=True,
            check=True,
            timeout=60,
        )
        return out.stdout.decode("utf-8")


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    with throwaway_servers(prefix="ucma-pg-") as started:
        yield Servers(started.pg_port, started.chroma_port, started.base, started.chroma_pid)
