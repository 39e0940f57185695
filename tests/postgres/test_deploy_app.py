"""The example app of ``deploy/`` as ``compose.yaml`` runs it: gunicorn with 4 worker
processes, each with its own ``Memory`` on one shared memory, against the throwaway
PostgreSQL and Chroma servers, driven over loopback HTTP. A write acknowledged by one
worker is found by the others, and a worker killed -9 (gunicorn starts another) loses
no acknowledged write. ``compose.yaml`` itself is not run: there is no docker here."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.postgres.conftest import HOST, Servers
from ucma_core import ANY, Memory
from ucma_core.embedders import HashingEmbedder

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
WORKERS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    with urllib.request.urlopen(request, timeout=60) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def _remember(base: str, user: str, q: str) -> dict[str, Any]:
    return _call(base, "GET", "/remember?" + urllib.parse.urlencode({"user_id": user, "q": q}))


@pytest.fixture
def app(servers: Servers) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    url = servers.url()
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "UCMA_URL": url,
        "CHROMA_HOST": HOST,
        "CHROMA_PORT": str(servers.chroma_port),
    }
    # compose.yaml's command, on loopback (workers open the memory one after the other: each
    # open holds the write lock, so a generous boot timeout)
    command = ["gunicorn", "--workers", str(WORKERS), "--bind", f"{HOST}:{port}", "--timeout", "120"]
    proc = subprocess.Popen(
        [sys.executable, "-m", *command, "deploy.app:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://{HOST}:{port}"
    try:
        # every worker up: a worker still opening the memory accepts nothing, so until then
        # the first one booted takes every request
        deadline, up = time.monotonic() + 120, set()

        def health(_: int) -> int | None:
            try:
                return int(_call(base, "GET", "/health")["worker"])
            except (urllib.error.URLError, ConnectionError):
                return None

        with ThreadPoolExecutor(WORKERS * 2) as clients:
            while len(up) < WORKERS:
                up |= {w for w in clients.map(health, range(WORKERS * 2)) if w is not None}
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, f"gunicorn workers up: {len(up)} of {WORKERS}"
                time.sleep(0.3)
        yield base, url, proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_writes_in_one_worker_are_found_from_the_others_and_a_killed_worker_loses_none(
    servers: Servers, app: tuple[str, str, subprocess.Popen[str]]
) -> None:
    base, url, _ = app
    acked: dict[str, tuple[str, int]] = {}  # id -> (text, worker)

    def observe(n: int) -> tuple[str, str, int]:
        text = f"Ana parked the red bicycle at dock {n}"
        answer = _call(base, "POST", "/observe", {"user_id": "ana", "text": text})
        return answer["id"], text, answer["worker"]

    # several clients at once, as a web app's users are: one client's requests in a row may
    # all be accepted by the same idle worker
    with ThreadPoolExecutor(WORKERS * 2) as clients:
        for memory_id, text, worker in clients.map(observe, range(24)):
            acked[memory_id] = (text, worker)
    writers = {w for _, w in acked.values()}
    assert len(writers) >= 2, writers  # the writes went to several workers
    # every worker finds the writes the others acknowledged (keyword and vector search)
    found_by: dict[int, set[str]] = {}

    def ask(n: int) -> tuple[int, dict[str, Any]]:
        return n, _remember(base, "ana", f"where is the red bicycle dock {n}")

    deadline = time.monotonic() + 60
    with ThreadPoolExecutor(WORKERS * 2) as clients:
        while len(found_by) < WORKERS and time.monotonic() < deadline:
            for n, answer in clients.map(ask, [0, 7, 15, 23] * 2):
                assert all(m.startswith("Ana parked") for m in answer["memories"])  # no other user's
                if f"Ana parked the red bicycle at dock {n}" in answer["memories"]:
                    found_by.setdefault(answer["worker"], set()).add(str(n))
    assert len(found_by) == WORKERS, found_by
    crossed = [
        (n, w)
        for w, ns in found_by.items()
        for n in ns
        if acked_by(acked, f"Ana parked the red bicycle at dock {n}") != w
    ]
    assert crossed  # found by a worker other than the one that wrote it

    # kill -9 one worker while another client keeps writing; gunicorn starts a new one
    victim = sorted(writers)[0]
    stop = threading.Event()
    failed: list[str] = []

    def write() -> None:
        n = 0
        while not stop.is_set():
            text = f"Bob logged parcel {n} at the depot"
            n += 1
            try:
                answer = _call(base, "POST", "/observe", {"user_id": "bob", "text": text})
            except (urllib.error.URLError, ConnectionError) as e:  # the killed worker's request
                failed.append(str(e))
                continue
            acked[answer["id"]] = (text, answer["worker"])

    writer = threading.Thread(target=write)
    writer.start()
    try:
        time.sleep(2.0)
        os.kill(victim, signal.SIGKILL)
        seen: set[int] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (seen - writers - {victim}):
            seen |= {w for _, w in list(acked.values())}
            time.sleep(0.2)
        assert seen - writers - {victim}, "no new worker answered after the kill"
        time.sleep(1.0)
    finally:
        stop.set()
        writer.join(timeout=120)
    bob = [i for i, (text, _) in acked.items() if text.startswith("Bob")]
    assert len(bob) >= 5
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as mem:
        stored = {r.id for r in mem.list_memories(user_id=ANY, limit=100_000)}
        assert set(acked) <= stored  # no acknowledged write lost
        report = mem.verify()
        assert report.ok, report


def acked_by(acked: dict[str, tuple[str, int]], text: str) -> int:
    return next(w for t, w in acked.values() if t == text)
