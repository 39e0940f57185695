"""Moving a memory between a folder and PostgreSQL with ``ucma export`` / ``ucma import``:
every record comes across with its id, text, scope and retention state, and back."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from tests.postgres.conftest import HOST, Servers
from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.cli.main import main
from ucma_core.embedders import HashingEmbedder


def _ucma(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return out.getvalue()


def _records(mem: Memory) -> list[tuple[Any, ...]]:
    return sorted(
        (r.id, r.content, r.user_id, r.session_id, r.memory_type.value, r.timestamp, r.access_count)
        for r in mem.list_memories(user_id=ANY)
    )


def test_a_folder_moves_into_postgresql_and_back(servers: Servers, tmp_path: Path) -> None:
    folder, back = tmp_path / "memory", tmp_path / "back"
    with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0)) as mem:
        mem.observe("Ana keeps bees on her roof in Porto", user_id="ana", session_id="s1")
        mem.observe("Ana's sister Rita plays the cello", user_id="ana", session_id="s2")
        mem.observe("Bob repairs vintage radios", user_id="bob", key="hobby")
        mem.remember("bees", user_id="ana")  # retention state moves too
        before = _records(mem)
    config = tmp_path / "servers.toml"
    config.write_text(f'[chroma]\nhost = "{HOST}"\nport = {servers.chroma_port}\n')
    url = servers.url()

    _ucma("export", str(folder), str(tmp_path / "a.jsonl"))
    _ucma("import", "--config", str(config), str(tmp_path / "a.jsonl"), url)
    with Memory(url, embedder=HashingEmbedder(), config=servers.config()) as shared:
        assert _records(shared) == before
        assert shared.remember("who keeps bees", user_id="ana", k=1)[0].record.content == (
            "Ana keeps bees on her roof in Porto"
        )
        assert all(h.record.user_id == "ana" for h in shared.remember("radios", user_id="ana", k=5))
        shared.observe("Bob moved to Braga", user_id="bob", importance=1.0)
        after = _records(shared)

    # importing the same file again skips what is there
    again = json.loads(_ucma("import", "--json", "--config", str(config), str(tmp_path / "a.jsonl"), url))
    assert again["created"] is False and again["skipped"] == len(before)

    _ucma("export", "--config", str(config), url, str(tmp_path / "b.jsonl"))
    _ucma("import", str(tmp_path / "b.jsonl"), str(back))
    with Memory(back, embedder=HashingEmbedder()) as local:
        assert _records(local) == after
