"""The checkpointer as an attachment of the memory (:meth:`ucma_core.Memory.attach`): its
name and files, its health check, and closing it (which stores what is queued and detaches
it). ``Memory.close`` closes it first; the disk-space guard covers its files; its
``forget_user`` / ``forget_session`` are in :mod:`checkpoint_forget`, the class below
builds on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from ucma_langchain.langgraph import checkpoint_sql
from ucma_langchain.langgraph.checkpoint_forget import Forgetting

__all__ = ["Attached"]


class Attached(Forgetting):
    """The attachment side of the checkpointer, and its lifecycle (the ``forget_user`` /
    ``forget_session`` the :class:`~ucma_core.attachments.Attachment` protocol also asks
    for come from :class:`~ucma_langchain.langgraph.checkpoint_forget.Forgetting`)."""

    @property
    def name(self) -> str:
        """The attachment name (``"langgraph-checkpoints"`` on the default file)."""
        return self._name

    def files(self) -> Sequence[Path]:
        """The checkpoint database (SQLite also keeps ``-wal`` and ``-shm`` beside it); none
        when the memory is in PostgreSQL (the checkpoints are tables in its schema)."""
        return () if self.memory.postgres is not None else (self.path,)

    def verify(self) -> Sequence[str]:
        """SQLite's quick check of the database (empty when healthy)."""
        if self._closed.is_set():
            return []
        if self._q is not checkpoint_sql:
            try:
                with self._saver.cursor(transaction=False) as cur:
                    self._q.pending_count(cur)
            except self._errors as e:
                return [f"the checkpoint tables in {self.path}: {str(e).strip()}"]
            return []
        with self._saver.cursor(transaction=False) as cur:
            cur.execute("PRAGMA quick_check")
            found = [str(r[0]) for r in cur.fetchall()]
        return [] if found == ["ok"] else [f"{self.path.name}: {problem}" for problem in found]

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every message of the checkpoints written so far is observed.

        Returns ``False`` if ``timeout`` (seconds) passed first. Raises the error the
        background observer met, if any.
        """
        return self._mirror.flush(timeout)

    async def aflush(self, timeout: float | None = None) -> bool:
        """Async :meth:`flush`."""
        return await asyncio.to_thread(self._mirror.flush, timeout)

    def close(self) -> None:
        """Observe what is queued, then close the checkpoint database and detach from the
        memory. The memory stays open (it is the caller's; ``Memory.close`` closes this
        first). Idempotent."""
        if self._closed.is_set():
            return
        try:
            self._mirror.close()
        finally:
            self._closed.set()
            with self._saver.lock:
                self._saver.conn.close()
            self.memory.detach(self)

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await asyncio.to_thread(self.close)
