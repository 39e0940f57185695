"""WriteBehind: turns written behind the caller's back are never lost, and one scope's
failure never keeps another's turns out."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ucma_core import ANY, Memory
from ucma_core.conversation import ChatTurn, WriteBehind
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import ClosedMemoryError, InvalidInputError

BAD_USER = "x" * 300  # a user id the core refuses (over 256 characters)


def contents(mem: Memory) -> list[str]:
    return sorted(r.content for r in mem.list_memories(user_id=ANY))


def test_turns_are_written_per_scope_and_tokens_reported(tmp_path: Path) -> None:
    done: list[object] = []
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        writer = WriteBehind(mem, on_written=done.extend, linger=5.0)
        writer.submit([ChatTurn("user", "ana one", message_id="a1")], user_id="ana", session_id="s", token=1)
        writer.submit([ChatTurn("user", "ben one", message_id="b1")], user_id="ben", session_id="s", token=2)
        writer.submit([ChatTurn("user", "ana one", message_id="a1")], user_id="ana", session_id="s", token=3)
        writer.submit([], user_id="ana", session_id="s", token=4)  # nothing new: reported after the rest
        assert writer.flush()
        assert sorted(done) == [1, 2, 3, 4] and writer.pending == 0
        assert contents(mem) == ["ana one", "ben one"]  # a repeated message id is stored once


def test_one_failing_scope_keeps_no_other_out_and_is_raised_and_recorded(tmp_path: Path) -> None:
    done: list[object] = []
    failed: list[tuple[object, int]] = []
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        writer = WriteBehind(
            mem, on_written=done.extend, on_failed=lambda scope, turns: failed.append((scope, len(turns)))
        )
        writer.submit([ChatTurn("user", "kept before", message_id="k1")], user_id="ana", token=1)
        writer.submit([ChatTurn("user", "refused", message_id="r1")], user_id=BAD_USER, token=2)
        writer.submit([ChatTurn("user", "kept after", message_id="k2")], user_id="ben", token=3)
        with pytest.raises(InvalidInputError, match="user_id"):
            writer.flush()
        assert writer.flush()  # raised once
        assert contents(mem) == ["kept after", "kept before"]
        assert sorted(done) == [1, 3]  # the failed scope's token is not reported
        assert failed == [((BAD_USER, None, None), 1)]
        [failure] = writer.failures
        assert failure.user_id == BAD_USER and failure.turns == 1 and "InvalidInputError" in failure.error
        assert any("not stored" in p for p in mem.verify().problems)


def test_memory_close_drains_the_writer_and_reraises_its_error(tmp_path: Path) -> None:
    mem = Memory(tmp_path, embedder=HashingEmbedder())
    writer = WriteBehind(mem, linger=30.0)
    writer.submit([ChatTurn("user", "queued for a while", message_id="q1")], user_id="ana")
    mem.close()  # does not wait 30 s: stores what is queued, then closes
    with Memory(tmp_path, embedder=HashingEmbedder()) as again:
        assert contents(again) == ["queued for a while"]
    with pytest.raises(ClosedMemoryError):
        writer.submit([ChatTurn("user", "late")], user_id="ana")

    mem = Memory(tmp_path, embedder=HashingEmbedder())
    writer = WriteBehind(mem, linger=30.0)
    writer.submit([ChatTurn("user", "refused")], user_id=BAD_USER)
    with pytest.raises(InvalidInputError):
        mem.close()
    with pytest.raises(ClosedMemoryError):  # closed all the same
        mem.observe("after close")


def test_inline_mode_raises_in_submit(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        writer = WriteBehind(mem, background=False)
        writer.submit([ChatTurn("user", "now", message_id="n1")], user_id="ana")
        assert contents(mem) == ["now"]
        with pytest.raises(InvalidInputError):
            writer.submit([ChatTurn("user", "refused")], user_id=BAD_USER)
        writer.close()
        assert mem.attachments == {}


def test_forget_user_drops_queued_turns(tmp_path: Path) -> None:
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        writer = WriteBehind(mem, linger=30.0)
        writer.submit([ChatTurn("user", "ana's secret", message_id="a1")], user_id="ana")
        writer.submit([ChatTurn("user", "ben's note", message_id="b1")], user_id="ben")
        mem.forget_user("ana")
        writer.flush()
        assert contents(mem) == ["ben's note"]


def test_a_script_that_ends_without_close_keeps_its_queue(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from ucma_core import Memory
        from ucma_core.conversation import ChatTurn, WriteBehind
        from ucma_core.embedders import HashingEmbedder
        mem = Memory({str(tmp_path)!r}, embedder=HashingEmbedder())
        writer = WriteBehind(mem, linger=30.0)
        for n in range(20):
            writer.submit([ChatTurn("user", f"turn {{n}}", message_id=f"m{{n}}")], user_id="ana")
        # no flush, no close: the interpreter simply exits
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    with Memory(tmp_path, embedder=HashingEmbedder()) as mem:
        assert contents(mem) == sorted(f"turn {n}" for n in range(20))
