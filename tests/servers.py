"""Throwaway servers for tests and benchmarks: a real ``chroma run`` server and a real
PostgreSQL 15 cluster, on 127.0.0.1 only.

One helper for every place that needs them (tests/test_chroma_server.py's fixture,
tests/postgres/conftest.py, the fault suites, ``benchmarks.workers`` and
``benchmarks.quality.run --servers``). Free of pytest: a benchmark imports it too.

* :func:`start_chroma` runs the ``chroma`` CLI that ships with chromadb (next to the
  Python executable) on a free port and waits for its heartbeat.
* :func:`start_postgres` makes a cluster with ``initdb`` in a folder and starts it with
  ``pg_ctl`` (trust authentication on loopback, unix sockets in the same folder, no
  fsync; run as the ``postgres`` user when the caller is root). A machine without
  PostgreSQL 15 gets an :class:`AssertionError` saying what to install: the tests that
  need it fail, they are not skipped.
* :func:`throwaway_servers` starts both in a temporary folder and removes everything
  when the block ends.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
PG_BIN = Path(os.environ.get("UCMA_PG_BIN", "/usr/lib/postgresql/15/bin"))

__all__ = [
    "HOST",
    "PG_BIN",
    "Throwaway",
    "as_postgres",
    "chroma_cli",
    "free_port",
    "heartbeat",
    "start_chroma",
    "start_postgres",
    "stop_chroma",
    "stop_postgres",
    "throwaway_servers",
]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (a caller retries if it is taken before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def as_postgres(cmd: list[str]) -> list[str]:
    """``cmd`` run as the ``postgres`` user when we are root (PostgreSQL refuses root)."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def heartbeat(port: int) -> bool:
    """Whether a Chroma server answers its heartbeat on ``port`` (never through a proxy)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{HOST}:{port}/api/v2/heartbeat", timeout=1.0) as resp:
            body = json.loads(resp.read().decode("utf-8"))
            return resp.status == 200 and any("heartbeat" in key for key in body)
    except (OSError, urllib.error.URLError, ValueError):
        return False


def chroma_cli() -> Path:
    """The ``chroma`` CLI shipped with chromadb, next to this Python."""
    bindir = Path(sys.executable).parent
    for name in ("chroma", "chroma.exe"):
        if (bindir / name).is_file():
            return bindir / name
    found = shutil.which("chroma", path=str(bindir))
    if found is None:
        raise AssertionError(
            f"the chroma CLI (shipped with the chromadb package) is not next to {sys.executable}"
        )
    return Path(found)


def start_chroma(data: Path, log: Path) -> tuple[int, subprocess.Popen[bytes]]:
    """Start ``chroma run`` keeping its files in ``data`` (output appended to ``log``);
    returns its port and process once it answers its heartbeat."""
    cli = chroma_cli()
    for var in ("NO_PROXY", "no_proxy"):  # chromadb's HTTP client must not route loopback via a proxy
        os.environ[var] = f"{HOST},localhost"
    with open(log, "ab") as out:  # the child keeps its own copy of the handle
        for _attempt in range(3):  # a port picked free can be taken before the server binds it
            port = free_port()
            proc = subprocess.Popen(
                [str(cli), "run", "--path", str(data), "--host", HOST, "--port", str(port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and not heartbeat(port):
                time.sleep(0.1)
            if proc.poll() is None and heartbeat(port):
                return port, proc
            stop_chroma(proc)
    raise AssertionError(
        f"chroma server did not answer its heartbeat:\n{log.read_text(errors='replace')[-3000:]}"
    )


def stop_chroma(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a server :func:`start_chroma` started (killed if it does not stop in 20 s)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=20)


def start_postgres(base: Path) -> int:
    """Make a cluster in ``base/data`` and start it on a free port; returns the port."""
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
        as_postgres(
            [str(initdb), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]
        ),
        check=True,
        capture_output=True,
        timeout=120,
    )
    for _attempt in range(3):
        port = free_port()
        started = subprocess.run(
            as_postgres(
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


def stop_postgres(base: Path) -> None:
    """Stop the cluster :func:`start_postgres` started in ``base`` (if it runs)."""
    if (base / "data" / "postmaster.pid").exists():
        subprocess.run(
            as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(base / "data"), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
        )


@dataclass
class Throwaway:
    """What :func:`throwaway_servers` started."""

    pg_port: int
    chroma_port: int
    base: Path
    #: The Chroma server's process id (a test may pause it with SIGSTOP / SIGCONT).
    chroma_pid: int

    def url(self, memory: str) -> str:
        """A ``postgresql://`` URL naming ``memory`` in the cluster."""
        return f"postgresql://postgres@{HOST}:{self.pg_port}/postgres?memory={memory}"


@contextlib.contextmanager
def throwaway_servers(prefix: str = "ucma-servers-") -> Iterator[Throwaway]:
    """A PostgreSQL cluster and a Chroma server in a temporary folder, for the block."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)
    chroma: subprocess.Popen[bytes] | None = None
    try:
        pg_port = start_postgres(base)
        chroma_port, chroma = start_chroma(base / "chroma", base / "chroma.log")
        yield Throwaway(pg_port, chroma_port, base, chroma.pid)
    finally:
        if chroma is not None:
            stop_chroma(chroma)
        stop_postgres(base)
        shutil.rmtree(base, ignore_errors=True)
