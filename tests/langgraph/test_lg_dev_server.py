"""The docs' ``langgraph.json`` recipe under ``langgraph dev``, driven over loopback HTTP.

The two files are taken from docs/langgraph.md as written, the server is the real
``langgraph dev`` (``langgraph-cli[inmem]``) in a subprocess, the client is
``langgraph_sdk``; the server is stopped and started again on the same folder.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

# Looked up, not imported: importing langgraph_runtime_inmem makes .langgraph_api/ in the cwd.
if not all(importlib.util.find_spec(m) for m in ("langgraph_api", "langgraph_runtime_inmem")):
    pytest.skip("needs langgraph-cli[inmem] (the dev extra)", allow_module_level=True)
langgraph_sdk = pytest.importorskip("langgraph_sdk")

from ucma_core import Memory  # noqa: E402
from ucma_core.embedders import HashingEmbedder  # noqa: E402

pytestmark = pytest.mark.slow

DOC = Path(__file__).parents[2] / "docs" / "langgraph.md"
SECTION = "## Serving with `langgraph dev` (`langgraph.json`)"
ANA = {"configurable": {"user_id": "ana"}}
# Offline: no analytics, no version check against PyPI, no tracing, no browser (--no-browser).
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}


# Loaded into the server process (a sitecustomize first on its PYTHONPATH): every lookup of or
# connection to a host other than loopback is refused and written down for the test to see.
NETWORK_GUARD = """
import os, socket

_LOG = os.environ["UCMA_TEST_NETWORK_LOG"]


def _remote(host):
    if isinstance(host, bytes):
        host = host.decode()
    local = ("", "localhost", "::1", "0.0.0.0")
    return isinstance(host, str) and host not in local and not host.startswith("127.")


def _refuse(host):
    with open(_LOG, "a") as log:
        log.write(f"{host}\\n")
    raise OSError(f"offline test: the server tried to reach {host!r}")


_connect = socket.socket.connect
_getaddrinfo = socket.getaddrinfo


def connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and _remote(host):
        _refuse(host)
    return _connect(self, address)


def getaddrinfo(host, *args, **kwargs):
    if _remote(host):
        _refuse(host)
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.getaddrinfo = getaddrinfo
"""


def recipe() -> tuple[str, str]:
    """The ``langgraph.json`` and ``agent.py`` of the docs section, as written there."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) :].split("\n## ", 1)[0]
    config = re.search(r"```json\n(.*?)```", section, re.S)
    module = re.search(r"```py\n(.*?)```", section, re.S)
    assert config and module, "the docs section lost its langgraph.json or agent.py"
    return config.group(1), module.group(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def dev_server(folder: Path) -> Iterator[str]:
    """``langgraph dev`` serving ``folder`` on a free loopback port, until the block ends."""
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    if cli is None:
        pytest.skip("langgraph-cli is not installed")
    port = free_port()
    guard = folder / "network_guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(NETWORK_GUARD)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | OFFLINE_ENV
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(guard), os.environ.get("PYTHONPATH")]))
    env["UCMA_TEST_NETWORK_LOG"] = str(folder / "network.log")
    log = (folder / f"server-{port}.log").open("wb")
    proc = subprocess.Popen(
        [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"langgraph dev exited:\n{log_text(folder, port)}")
            try:
                if httpx.get(f"{url}/ok", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:  # not serving yet
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"langgraph dev did not start:\n{log_text(folder, port)}")
            time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # as Ctrl-C: the server leaves the factories' contexts
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()


def log_text(folder: Path, port: int) -> str:
    return (folder / f"server-{port}.log").read_text(errors="replace")[-4000:]


def test_threads_store_items_and_memories_survive_a_server_restart(tmp_path: Path) -> None:
    config, module = recipe()
    (tmp_path / "langgraph.json").write_text(config)
    (tmp_path / "agent.py").write_text(module)

    with dev_server(tmp_path) as url:
        client = langgraph_sdk.get_sync_client(url=url, api_key=None)
        thread = client.threads.create()
        tid = thread["thread_id"]
        said = {"messages": [{"role": "user", "content": "Remember that my cat is called Miso"}]}
        client.runs.wait(tid, "agent", input=said, config=ANA)
        client.store.put_item(["ana", "notes"], "diet", {"text": "Ana is vegetarian"})
        found = client.store.search_items(["ana", "notes"], query="what does Ana eat?")
        assert [i["key"] for i in found["items"]] == ["diet"]

    with dev_server(tmp_path) as url:  # a new server process on the same folder
        client = langgraph_sdk.get_sync_client(url=url, api_key=None)
        assert client.threads.get(tid)["thread_id"] == tid
        state = client.threads.get_state(tid)
        assert state["values"]["messages"][0]["content"] == "Remember that my cat is called Miso"
        item = client.store.get_item(["ana", "notes"], "diet")
        assert item is not None and item["value"] == {"text": "Ana is vegetarian"}
        # a new thread recalls what the first one taught (a memory, not a checkpoint)
        other = client.threads.create()["thread_id"]
        asked = {"messages": [{"role": "user", "content": "What is my cat called?"}]}
        answer = client.runs.wait(other, "agent", input=asked, config=ANA)
        assert isinstance(answer, dict)
        assert "Miso" in answer["messages"][-1]["content"]

    assert not (tmp_path / "network.log").exists(), (tmp_path / "network.log").read_text()

    # the server is gone and its lock with it: the folder opens here and holds the memories
    with Memory(tmp_path / "agent_memory", embedder=HashingEmbedder()) as mem:
        taught = [t.content for t in mem.history(session_id=tid, user_id="ana")]
        assert "Remember that my cat is called Miso" in taught
