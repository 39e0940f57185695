"""shared_memory: one open Memory per folder per process, for modules a host imports twice."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import ModuleType

import pytest

from ucma_core import Memory, MemoryConfig, shared_memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ConfigurationError, MemoryLockedError

MODULE = """
from ucma_core import {opener}
from ucma_core.embedders import HashingEmbedder

memory = {opener}({folder!r}, embedder=HashingEmbedder())
"""


def load_as_a_server_does(path: Path, name: str) -> ModuleType:
    """Execute ``path`` as a fresh module (what LangGraph's server does for each path it loads)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_executed_twice_gets_one_memory(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    path.write_text(MODULE.format(opener="shared_memory", folder=str(tmp_path / "mem")))
    first = load_as_a_server_does(path, "graph_copy")
    second = load_as_a_server_does(path, "store_copy")
    assert first is not second
    assert first.memory is second.memory
    first.memory.observe("Ana's cat is called Miso", user_id="ana")
    assert second.memory.remember("cat", user_id="ana")
    first.memory.close()


def test_the_same_module_with_a_plain_memory_fails_on_its_own_lock(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    path.write_text(MODULE.format(opener="Memory", folder=str(tmp_path / "mem")))
    first = load_as_a_server_does(path, "graph_copy")
    try:
        with pytest.raises(MemoryLockedError):
            load_as_a_server_does(path, "store_copy")
    finally:
        first.memory.close()


def test_spellings_of_one_folder_share_it_and_a_closed_one_reopens(tmp_path: Path) -> None:
    folder = tmp_path / "mem"
    first = shared_memory(folder, embedder=HashingEmbedder())
    assert shared_memory(str(folder) + "/", embedder=HashingEmbedder()) is first
    assert shared_memory(tmp_path / "x" / ".." / "mem") is first
    assert shared_memory(tmp_path / "other", embedder=HashingEmbedder()) is not first
    shared_memory(tmp_path / "other").close()
    first.close()
    again = shared_memory(folder, embedder=HashingEmbedder())
    assert again is not first
    again.close()


def test_another_config_is_refused_not_ignored(tmp_path: Path) -> None:
    mem = shared_memory(tmp_path, embedder=HashingEmbedder(), config=MemoryConfig())
    try:
        assert shared_memory(tmp_path, config=MemoryConfig()) is mem
        with pytest.raises(ConfigurationError, match="another MemoryConfig"):
            shared_memory(tmp_path, config=MemoryConfig(embedding_cache_size=7))
    finally:
        mem.close()


def test_threads_racing_to_open_get_one_memory(tmp_path: Path) -> None:
    got: list[Memory] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            got.append(shared_memory(tmp_path, embedder=HashingEmbedder()))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({id(m) for m in got}) == 1
    got[0].close()


def test_a_process_that_ends_without_closing_leaves_a_sound_folder(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from ucma_core import shared_memory
        from ucma_core.embedders import HashingEmbedder
        mem = shared_memory({str(tmp_path)!r}, embedder=HashingEmbedder())
        mem.observe("Ana's cat is called Miso", user_id="ana")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    # never closed by the script: the folder opens again, checks clean and holds the note
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        assert mem.verify().ok
        assert [r.record.content for r in mem.remember("cat", user_id="ana")] == ["Ana's cat is called Miso"]
