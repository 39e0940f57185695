"""The in-flight race: a worker killed -9 while its flush request is on its way to the
Chroma server, whose records another worker deletes before the server applies that
request. A loopback proxy between the doomed worker and the real Chroma server holds
the request, the worker is killed, another worker deletes the record, then the proxy
delivers the request: the vector arrives without its record, and the tombstone the
delete left makes the next flush after the Chroma timeout delete it again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import chromadb
import pytest

from tests.postgres.conftest import HOST, Servers
from ucma_core import ANY, ChromaConfig, LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


class HoldingProxy:
    """A loopback TCP proxy to the Chroma server that holds every byte a client sends
    from its first ``/upsert`` request on, until :meth:`release`."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.listener = socket.create_server((HOST, 0))
        self.port = self.listener.getsockname()[1]
        self.held = threading.Event()
        self.released = threading.Event()
        self.answered = threading.Event()
        self.pending: list[tuple[socket.socket, bytearray]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection((HOST, self.upstream))
            threading.Thread(target=self._up, args=(client, server), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket) -> None:
        held: bytearray | None = None
        while True:
            try:
                data = client.recv(65536)
            except OSError:
                data = b""
            if held is None and b"/upsert" in data:
                held = bytearray()
                self.pending.append((server, held))
                self.held.set()
            if not data:
                break
            if held is not None:
                held += data
            else:
                server.sendall(data)
        if held is None:
            server.close()

    def _down(self, server: socket.socket, client: socket.socket) -> None:
        while True:
            try:
                data = server.recv(65536)
            except OSError:
                break
            if not data:
                break
            if self.released.is_set():
                self.answered.set()  # the server answered the request that was held
            try:
                client.sendall(data)
            except OSError:
                continue  # the client is dead: keep reading the server's answers

    def complete(self) -> bool:
        """Whether the held request is whole (headers and ``Content-Length`` bytes of body)."""
        for _, held in self.pending:
            head, sep, body = bytes(held).partition(b"\r\n\r\n")
            if not sep:
                return False
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:") and len(body) < int(line.split(b":")[1]):
                    return False
        return bool(self.pending)

    def release(self) -> None:
        """Deliver what was held (its client is gone) and wait for the server's answer."""
        self.released.set()
        for server, held in self.pending:
            server.sendall(bytes(held))
        assert self.answered.wait(60), "the server did not answer the held request"
        for server, _ in self.pending:
            server.close()
        self.listener.close()


def _documents(servers: Servers, text: str) -> list[str]:
    client = chromadb.HttpClient(host=HOST, port=servers.chroma_port)
    return [d for c in client.list_collections() for d in (c.get()["documents"] or []) if text in d]


def test_a_late_flush_of_a_killed_worker_leaves_no_vector_without_its_record(servers: Servers) -> None:
    url = servers.url()
    window = 3.0
    config = MemoryConfig(
        chroma=ChromaConfig(host=HOST, port=servers.chroma_port),
        limits=LimitsConfig(chroma_timeout_seconds=window),
    )
    with Memory(url, embedder=HashingEmbedder(), config=config) as mem:
        kept = mem.observe("Amy keeps the harbour lighthouse logbook", user_id="amy", importance=1.0)
        mem.flush()
        proxy = HoldingProxy(servers.chroma_port)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.postgres._worker", url, str(proxy.port), "doomed", "1"],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "UCMA_TEST_PAUSE": "0.5"},
        )
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
            line = proc.stdout.readline()
            assert line.startswith("ack "), line
            assert proxy.held.wait(30)  # its flush request is on its way, held by the proxy
            deadline = time.monotonic() + 30
            while not proxy.complete() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proxy.complete()  # the whole request is in the proxy
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        doomed = line.split()[1]
        assert doomed in {r.id for r in mem.list_memories(user_id=ANY)}
        mem.forget(doomed)  # flushes the dead worker's pending row, then deletes it everywhere
        assert _documents(servers, "doomed wrote") == []
        proxy.release()  # the server applies the dead worker's late request
        assert _documents(servers, "doomed wrote") != []  # the race: a vector without its record
        assert [r.id for r in mem.list_memories(user_id=ANY)] == [kept]
        deadline = time.monotonic() + window + 30
        while _documents(servers, "doomed wrote") and time.monotonic() < deadline:
            time.sleep(0.2)  # the deleting worker's flush wakes once the window has passed
        assert _documents(servers, "doomed wrote") == []
        report = mem.verify()
        assert report.ok and report.chroma_records == 1 and not report.only_in_chroma, report
