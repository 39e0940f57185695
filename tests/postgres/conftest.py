"""A throwaway PostgreSQL 15 cluster and a real ``chroma run`` server for the whole session.

The cluster is made with ``initdb`` into a temporary folder and started with ``pg_ctl``
on 127.0.0.1 (a free port, unix sockets in the same folder, trust authentication on
loopback, no fsync); when the tests run as root it runs as the ``postgres`` user. Both
servers are stopped at the end. A machine without PostgreSQL 15 fails here with a clear
message: these tests are not skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ucma_core import ChromaConfig, MemoryConfig

HOST = "127.0.0.1"
PG_BIN = Path(os.environ.get("UCMA_PG_BIN", "/usr/lib/postgresql/15/bin"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class Servers:
    pg_port: int
    chroma_port: int
    base: Path
    #: The Chroma server's process id (a test may pause it with SIGSTOP / SIGCONT).
    chroma_pid: int

    def url(self, memory: str | None = None) -> str:
        """A ``postgresql://`` URL naming a new memory (or ``memory``) in the cluster."""
        name = memory or "t" + uuid.uuid4().hex[:12]
        return f"postgresql://postgres@{HOST}:{self.pg_port}/postgres?memory={name}"

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


def _start_postgres(base: Path) -> int:
    initdb = PG_BIN / "initdb"
    if not initdb.exists():
        raise AssertionError(
            f"PostgreSQL 15 is not installed ({initdb} is missing); the postgresql:// tests need it: "
            "install postgresql-15 or set UCMA_PG_BIN to its bin folder"
        )
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    data = base / "data"
    subprocess.run(
        _as_postgres(
            [str(initdb), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    for _attempt in range(3):
        port = _free_port()
        started = subprocess.run(
            _as_postgres(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(base / "postgres.log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    f"-h {HOST} -p {port} -k {base} -F -c max_connections=200",
                    "start",
                ]
            ),
            capture_output=True,
            timeout=90,
        )
        if started.returncode == 0:
            return port
    log = (base / "postgres.log").read_text(errors="replace")[-3000:]
    raise AssertionError(f"PostgreSQL did not start:\n{log}")


def _heartbeat(port: int) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{HOST}:{port}/api/v2/heartbeat", timeout=1.0) as resp:
            body = json.loads(resp.read().decode("utf-8"))
            return resp.status == 200 and any("heartbeat" in key for key in body)
    except (OSError, urllib.error.URLError, ValueError):
        return False


def _start_chroma(base: Path) -> tuple[int, subprocess.Popen[bytes]]:
    cli = Path(sys.executable).parent / "chroma"
    if not cli.is_file():
        raise AssertionError(f"the chroma CLI (shipped with chromadb) is not next to {sys.executable}")
    log = open(base / "chroma.log", "wb")  # noqa: SIM115 - closed with the server
    for _attempt in range(3):
        port = _free_port()
        proc = subprocess.Popen(
            [str(cli), "run", "--path", str(base / "chroma"), "--host", HOST, "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not _heartbeat(port):
            time.sleep(0.1)
        if proc.poll() is None and _heartbeat(port):
            return port, proc
        proc.terminate()
        proc.wait(timeout=30)
    raise AssertionError(f"chroma server did not start:\n{(base / 'chroma.log').read_text()[-3000:]}")


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = f"{HOST},localhost"
    base = Path(tempfile.mkdtemp(prefix="ucma-pg-"))
    base.chmod(0o755)
    chroma: subprocess.Popen[bytes] | None = None
    pg_port: int | None = None
    try:
        pg_port = _start_postgres(base)
        chroma_port, chroma = _start_chroma(base)
        yield Servers(pg_port, chroma_port, base, chroma.pid)
    finally:
        if chroma is not None and chroma.poll() is None:
            chroma.terminate()
            try:
                chroma.wait(timeout=20)
            except subprocess.TimeoutExpired:
                chroma.kill()
                chroma.wait(timeout=20)
        if (base / "data" / "postmaster.pid").exists():
            subprocess.run(
                _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(base / "data"), "-m", "immediate", "stop"]),
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(base, ignore_errors=True)
