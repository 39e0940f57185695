"""The part of :class:`~ucma_core.Memory` that owns what adapters keep beside it.

See :mod:`ucma_core.attachments` for the model: :meth:`Owners.attach` registers an
:class:`~ucma_core.attachments.Attachment` (and records its files in the folder's
manifest), and forgetting, verification, closing and the disk-space guard reach it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ucma_core.attachments import Attachment, check_name, opener
from ucma_core.errors import InvalidInputError
from ucma_core.memory_base import MemoryBase
from ucma_core.storage.diskspace import check_free_space

__all__ = ["Owners"]


class Owners(MemoryBase):
    """Attachments of a :class:`~ucma_core.Memory` (one of its parts)."""

    def attach(self, attachment: Attachment) -> None:
        """Make ``attachment`` part of this memory (see :mod:`ucma_core.attachments`).

        Its files inside the memory folder are recorded in the manifest (``ucma.json``),
        so a later process knows the folder holds them. Forgets recorded while it was not
        open are applied to it before this returns. Attaching the same object again does
        nothing.

        Raises:
            InvalidInputError: not an attachment, or another open object has its name.
        """
        if not isinstance(attachment, Attachment):
            raise InvalidInputError(
                f"attach() takes an Attachment (name, files, flush, close, forget_user, "
                f"forget_session, verify), not {type(attachment).__name__}"
            )
        name = check_name(attachment.name)
        with self._lock:
            self._check_open()
            current = self._attached.get(name)
            if current is attachment:
                return
            if current is not None:
                raise InvalidInputError(
                    f"an attachment named {name!r} is already open on {self.path}; close it first "
                    "(one LangGraph checkpointer per memory folder)"
                )
            entries = self._entries()
            entry = dict(entries.get(name, {}))
            inside = self._inside(attachment)
            pending = list(entry.get("pending") or [])
            if inside or (self.postgres is not None and name not in entries):
                # a memory in PostgreSQL records every attachment (it keeps tables, not files),
                # so a worker that has none open still reaches it when a user is forgotten
                entry["files"] = inside
                entries[name] = entry
                self._stores.backend.set_attachments(entries)
            self._attached[name] = attachment
        if pending:
            for forget in pending:
                _apply(attachment, forget)
            with self._lock:
                entries = self._entries()
                if name in entries:
                    entries[name] = {k: v for k, v in entries[name].items() if k != "pending"}
                    self._stores.backend.set_attachments(entries)

    def detach(self, attachment: Attachment | str) -> bool:
        """Stop calling an attachment (it stays recorded in the manifest: its files are still
        in the folder); ``False`` if it was not attached. Attachments detach themselves when
        they close."""
        name = attachment if isinstance(attachment, str) else getattr(attachment, "name", None)
        if not isinstance(name, str):
            return False
        with self._lock:
            current = self._attached.get(name)
            if current is None or (not isinstance(attachment, str) and current is not attachment):
                return False
            del self._attached[name]
            return True

    @property
    def attachments(self) -> dict[str, tuple[Path, ...]]:
        """What adapters keep in this folder, open or not: name → files (absolute paths).

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     mem.attachments
            {}
        """
        with self._lock:
            found = {
                name: tuple(self.path / f for f in entry.get("files") or [])
                for name, entry in self._stores.backend.manifest.attachments.items()
            }
            for name, attachment in self._attached.items():
                found.setdefault(name, tuple(Path(f) for f in attachment.files()))
            return found

    @property
    def pending_forgets(self) -> dict[str, list[dict[str, Any]]]:
        """Forgets recorded for attachments that were not open and had no installed opener:
        name → forgets (``{"user_id": ...}`` or ``{"session_id": ..., "user_id": ...,
        "agent_id": ...}``), applied when the attachment is next attached."""
        with self._lock:
            return {
                name: [dict(f) for f in entry.get("pending") or []]
                for name, entry in self._stores.backend.manifest.attachments.items()
                if entry.get("pending")
            }

    def check_space(self, need: int = 0) -> None:
        """The disk-space guard for an attachment's write: raises
        :class:`~ucma_core.errors.DiskFullError` unless the folder's volume keeps
        ``MemoryConfig.limits.min_free_bytes`` (plus ``need`` bytes) free."""
        check_free_space(self.path, self.config.limits.min_free_bytes, need=need)

    # ------------------------------------------------------------------ hooks for the other parts
    def _entries(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in self._stores.backend.manifest.attachments.items()}

    def _inside(self, attachment: Attachment) -> list[str]:
        """The attachment's files inside the folder, relative to it."""
        root = self.path.resolve()
        inside = []
        for f in attachment.files():
            try:
                inside.append(Path(f).resolve().relative_to(root).as_posix())
            except ValueError:
                continue
        return inside

    def _forget_attached(self, forget: Mapping[str, Any]) -> None:
        """Apply a forget to every attachment: the open ones, the closed ones that an installed
        entry point can open, and record it as pending for the others. Runs outside the lock."""
        with self._lock:
            self._check_open()
            live = list(self._attached.values())
            closed = [n for n in self._stores.backend.manifest.attachments if n not in self._attached]
        for attachment in live:
            _apply(attachment, forget)
        for name in closed:
            open_it = opener(name)
            if open_it is not None:
                opened = open_it(self)  # type: ignore[arg-type]
                try:
                    if name not in self._attached:
                        self.attach(opened)
                    _apply(opened, forget)
                finally:
                    opened.close()
                    self.detach(opened)
                continue
            with self._lock:
                entries = self._entries()
                if name in entries:
                    pending = list(entries[name].get("pending") or [])
                    if dict(forget) not in pending:
                        pending.append(dict(forget))
                    entries[name]["pending"] = pending
                    self._stores.backend.set_attachments(entries)


def _apply(attachment: Attachment, forget: Mapping[str, Any]) -> None:
    if "user_id" in forget and "session_id" not in forget:
        attachment.forget_user(str(forget["user_id"]))
    else:
        attachment.forget_session(
            str(forget["session_id"]), user_id=forget.get("user_id"), agent_id=forget.get("agent_id")
        )
