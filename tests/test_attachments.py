"""Memory.attach: what an adapter keeps in the folder is reached by forgetting, verify,
close, the manifest and the disk-space guard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from ucma_core import LimitsConfig, Memory, MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import DiskFullError, InvalidInputError


class Notes:
    """A minimal attachment: one text file of ``user<TAB>session<TAB>text`` lines."""

    def __init__(self, memory: Memory, name: str = "notes") -> None:
        self.memory = memory
        self.name = name
        self.path = memory.path / f"{name}.txt"
        self.path.touch()
        self.calls: list[str] = []
        self.closed = False
        memory.attach(self)

    def add(self, user: str, session: str, text: str) -> None:
        with self.path.open("a") as f:
            f.write(f"{user}\t{session}\t{text}\n")

    def _keep(self, keep: object) -> None:
        lines = self.path.read_text().splitlines(keepends=True)
        self.path.write_text("".join(line for line in lines if keep(line.split("\t"))))  # type: ignore[operator]

    def files(self) -> Sequence[Path]:
        return (self.path,)

    def flush(self, timeout: float | None = None) -> bool:
        return True

    def close(self) -> None:
        self.calls.append("close")
        self.closed = True
        self.memory.detach(self)

    def forget_user(self, user_id: str) -> None:
        self.calls.append(f"forget_user {user_id}")
        self._keep(lambda parts: parts[0] != user_id)

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        self.calls.append(f"forget_session {session_id} {user_id}")
        self._keep(lambda parts: not (parts[1] == session_id and parts[0] == user_id))

    def verify(self) -> Sequence[str]:
        return ["damaged"] if "DAMAGED" in self.path.read_text() else []


def test_forget_verify_close_reach_the_attachment(tmp_path: Path) -> None:
    mem = Memory(tmp_path, embedder=HashingEmbedder())
    notes = Notes(mem)
    notes.add("ana", "s1", "ana's secret")
    notes.add("ben", "s1", "ben's note")
    notes.add("ben", "s2", "ben's other note")
    assert mem.attachments == {"notes": (tmp_path / "notes.txt",)}
    mem.forget_user("ana")
    mem.forget_session("s2", user_id="ben")
    assert notes.path.read_text() == "ben\ts1\tben's note\n"
    assert mem.verify().ok
    notes.add("ben", "s1", "DAMAGED")
    assert mem.verify().problems == ("notes: damaged",)
    mem.close()
    assert notes.calls == ["forget_user ana", "forget_session s2 ben", "close"]


def test_the_manifest_records_files_and_pending_forgets(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        Notes(mem).add("ana", "s1", "ana's secret")
    manifest = json.loads((tmp_path / "ucma.json").read_text())
    assert manifest["attachments"] == {"notes": {"files": ["notes.txt"]}}
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        assert mem.attachments == {"notes": (tmp_path / "notes.txt",)}
        mem.forget_user("ana")  # no open attachment, no entry point: recorded as pending
        [problem] = mem.verify().problems
        assert "notes: 1 forget(s) wait" in problem
        assert "ana's secret" in (tmp_path / "notes.txt").read_text()
        notes = Notes(mem)  # attaching applies it first
        assert notes.calls == ["forget_user ana"] and notes.path.read_text() == ""
        assert mem.verify().ok
    assert "pending" not in json.loads((tmp_path / "ucma.json").read_text())["attachments"]["notes"]


def test_an_installed_entry_point_applies_a_forget_at_once(tmp_path: Path) -> None:
    """``ucma forget-user`` with no app running: the core opens the attachment through the
    ``ucma.attachments`` entry point group (a package installed for this test)."""
    site = tmp_path / "site"
    (site / "notes_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "notes_plugin-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: notes-plugin\nVersion: 1.0\n"
    )
    (site / "notes_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[ucma.attachments]\nnotes = notes_plugin:open_notes\n"
    )
    (site / "notes_plugin.py").write_text(
        "from pathlib import Path\n"
        "class Notes:\n"
        "    name = 'notes'\n"
        "    def __init__(self, memory):\n"
        "        self.memory, self.path = memory, memory.path / 'notes.txt'\n"
        "        memory.attach(self)\n"
        "    def files(self): return (self.path,)\n"
        "    def flush(self, timeout=None): return True\n"
        "    def close(self): self.memory.detach(self)\n"
        "    def forget_user(self, user_id):\n"
        "        lines = self.path.read_text().splitlines(keepends=True)\n"
        "        self.path.write_text(''.join(l for l in lines if not l.startswith(user_id + '\\t')))\n"
        "    def forget_session(self, session_id, *, user_id, agent_id): pass\n"
        "    def verify(self): return []\n"
        "def open_notes(memory): return Notes(memory)\n"
    )
    folder = tmp_path / "mem"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        Notes(mem).add("ana", "s1", "ana's secret")
    script = textwrap.dedent(
        f"""
        from ucma_core import Memory
        from ucma_core.embedders import HashingEmbedder
        with Memory({str(folder)!r}, embedder=HashingEmbedder()) as mem:
            mem.forget_user("ana")
            assert mem.verify().ok, mem.verify().problems
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    assert (folder / "notes.txt").read_text() == ""
    assert "pending" not in json.loads((folder / "ucma.json").read_text())["attachments"]["notes"]


def test_attach_refuses_what_is_not_an_attachment_or_a_second_of_a_name(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        with pytest.raises(InvalidInputError, match="Attachment"):
            mem.attach(object())  # type: ignore[arg-type]
        first = Notes(mem)
        mem.attach(first)  # the same object again: nothing happens
        with pytest.raises(InvalidInputError, match="already open"):
            Notes(mem)
        assert mem.detach("notes") and not mem.detach("notes")
        bad = Notes.__new__(Notes)
        bad.name = "Not A Name"
        with pytest.raises(InvalidInputError, match="lowercase"):
            mem.attach(bad)


def test_the_disk_space_guard_covers_attachments(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        mem.check_space()
    huge = MemoryConfig(limits=LimitsConfig(min_free_bytes=2**62))
    with Memory(tmp_path, embedder=HashingEmbedder(), config=huge) as mem, pytest.raises(DiskFullError):
        mem.check_space()
