"""``Memory.rekey`` on a memory folder: a new key secret in ``ucma.json``, and tag and
metadata filters find the same memories afterwards, also after reopening. (A memory in
PostgreSQL: ``tests/postgres/test_shared_rebuild.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder


def _secret(folder: Path) -> str:
    return str(json.loads((folder / "ucma.json").read_text())["key_secret"])


def test_rekey_gives_the_folder_a_new_secret_and_keeps_every_filter(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        jam = mem.observe("Ana labelled the plum jam", user_id="ana", tags=["pantry"], metadata={"shelf": 2})
        mem.observe("Ana bought new jars", user_id="ana", tags=["shop"], metadata={"shelf": 3}, keep=True)
        before = _secret(folder)
        assert mem.rekey() == 2
        after = _secret(folder)
        assert after != before
        assert [m.id for m in mem.list_memories(user_id="ana", tags=["pantry"])] == [jam]
        hits = mem.remember("plum jam", user_id="ana", metadata_filter={"shelf": 2}, k=3)
        assert [h.id for h in hits] == [jam]
    with Memory(folder, embedder=HashingEmbedder()) as again:
        assert _secret(folder) == after and again.verify().ok
        assert [m.id for m in again.list_memories(user_id="ana", tags=["pantry"])] == [jam]
