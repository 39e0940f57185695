"""What the memory was handed and did not store: a durable record, without the text.

The conversation helpers never let one message block the others
(:func:`ucma_core.conversation.observe_turns`): a turn the core still refuses
(metadata too deep, a timestamp in milliseconds…) is left out and recorded here,
so that it shows in :meth:`ucma_core.Memory.verify`, :meth:`~ucma_core.Memory.stats`
and ``ucma info`` rather than only in a log.

A record holds ids, a reason and a count, never the message's text: it may name
the user, the session and the message id, and :meth:`SkippedLog.forget` (called by
``forget_user`` and ``forget_session``) removes a scope's records. The file is
``skipped.jsonl`` in the memory folder, one JSON object a line, appended and
fsynced; a torn last line (a crash while appending) is ignored.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ucma_core.scope import Scope
from ucma_core.storage.atomic import write_lines_atomic
from ucma_core.storage.diskspace import storage_error

__all__ = ["FILE_NAME", "Skipped", "SkippedLog", "reason_of", "same_message"]

#: The file in the memory folder.
FILE_NAME = "skipped.jsonl"

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_REASON_CHARS = 300


@dataclass(frozen=True)
class Skipped:
    """One message the memory did not store.

    Attributes:
        at: when it was skipped (epoch seconds, the memory's clock).
        user_id: the user it belonged to.
        agent_id: the agent it belonged to.
        session_id: the session it was observed in.
        message_id: the framework's message id, if it had one.
        role: its chat role (``user``, ``assistant``, ``system``, ``tool``).
        chars: how many characters its text had.
        reason: why it was refused (the error, with quoted values left out).
    """

    at: float
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    message_id: str | None
    role: str | None
    chars: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-able dict (what the file holds)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Skipped:
        """The record a :meth:`to_dict` line holds."""
        return cls(
            at=float(data["at"]),
            user_id=data.get("user_id"),
            agent_id=data.get("agent_id"),
            session_id=data.get("session_id"),
            message_id=data.get("message_id"),
            role=data.get("role"),
            chars=int(data.get("chars", 0)),
            reason=str(data.get("reason", "")),
        )


def reason_of(error: BaseException) -> str:
    """A reason for the record: the error's message with quoted values left out (they may
    hold the user's text), at most 300 characters.

    Examples:
        >>> reason_of(ValueError("unknown chat role 'robot'; expected user"))
        "unknown chat role '…'; expected user"
    """
    return _QUOTED.sub("'…'", str(error))[:_REASON_CHARS] or type(error).__name__


def same_message(entry: Skipped) -> tuple[str | None, ...]:
    """What makes two records the same skipped message (one is kept)."""
    return (entry.user_id, entry.agent_id, entry.session_id, entry.message_id, entry.role, entry.reason)


class SkippedLog:
    """The ``skipped.jsonl`` file of one folder (callers serialise access)."""

    def __init__(self, folder: Path | None) -> None:
        #: ``None`` for a memory kept in a database: the records live in this process only.
        self.path = None if folder is None else folder / FILE_NAME
        self._torn = False
        self._entries: list[Skipped] = self._read()

    def _read(self) -> list[Skipped]:
        if self.path is None:
            return []
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise storage_error(e, f"reading {self.path}") from e
        self._torn = bool(raw) and not raw.endswith(b"\n")  # the next line starts on a fresh one
        entries: list[Skipped] = []
        for line in raw.split(b"\n"):
            try:
                entries.append(Skipped.from_dict(json.loads(line)))
            except (ValueError, KeyError, TypeError):  # a torn last line, or a line from the future
                continue
        return entries

    def entries(self, scope: Scope | None = None) -> list[Skipped]:
        """The records (of ``scope``, when given), oldest first."""
        return [e for e in self._entries if scope is None or scope.admits(asdict(e))]

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entries: Iterable[Skipped]) -> None:
        """Append ``entries`` durably (written and fsynced before this returns). A message
        with an id that is already recorded for the same reason is not recorded again (a
        mirror that observes a thread again after a restart meets it again)."""
        seen = {same_message(e) for e in self._entries if e.message_id is not None}
        new: list[Skipped] = []
        for entry in entries:
            if entry.message_id is None or same_message(entry) not in seen:
                new.append(entry)
                if entry.message_id is not None:
                    seen.add(same_message(entry))
        if not new:
            return
        if self.path is None:
            self._entries += new
            return
        lines = "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in new)
        data = (("\n" if self._torn else "") + lines).encode("utf-8")
        try:
            with open(self.path, "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as e:
            raise storage_error(e, f"appending to {self.path}", folder=self.path.parent) from e
        self._torn = False
        self._entries += new

    def forget(self, scope: Scope) -> int:
        """Remove the records of ``scope``; returns how many (the file is rewritten atomically)."""
        kept = [e for e in self._entries if not scope.admits(asdict(e))]
        removed = len(self._entries) - len(kept)
        if removed and self.path is not None:
            write_lines_atomic(self.path, (json.dumps(e.to_dict(), ensure_ascii=False) for e in kept))
            self._torn = False
        self._entries = kept
        return removed
