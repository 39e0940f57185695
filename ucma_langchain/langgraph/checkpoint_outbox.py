"""The checkpointer's outbox: the checkpoints whose messages are not yet durable in the memory.

A checkpoint with new messages is entered in ``ucma_outbox`` in the transaction that stores
it (:meth:`UCMACheckpointer.put <ucma_langchain.langgraph.checkpointer.UCMACheckpointer.put>`),
and taken out once the mirror has stored its messages; opening the checkpointer replays what
is left, so a message acknowledged into a checkpoint reaches the memory exactly once whatever
happens to the process (message ids are the idempotency keys).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from langgraph.checkpoint.base import Checkpoint

from ucma_langchain.langgraph.checkpoint_base import CheckpointerBase
from ucma_langchain.langgraph.scope import RunScope

__all__ = ["Outbox"]


class Outbox(CheckpointerBase):
    """Entering checkpoints in the outbox, replaying it on open, and emptying it as the
    mirror stores messages."""

    def _entry(
        self,
        thread_id: str,
        ns: str,
        checkpoint: Checkpoint,
        scope: RunScope,
        *,
        mirrored: bool,
        tokens: list[int],
    ) -> Callable[[Any], None] | None:
        """UCMA's rows for a checkpoint, to write in the transaction that stores it: the
        thread's scope (once per checkpointer) and, when the checkpoint has new messages
        (``mirrored``), its outbox entry, whose sequence number is appended to ``tokens``.
        ``None`` when there is nothing to write."""
        if not mirrored and (thread_id, scope) in self._recorded:
            return None

        def along(cur: Any) -> None:
            self._q.record_thread(cur, thread_id, scope)
            if mirrored:
                tokens.append(self._q.enqueue(cur, thread_id, ns, str(checkpoint["id"]), scope))

        return along

    def _catch_up(self) -> None:
        """Offer every checkpoint still in the outbox (stored, messages not yet durable)."""
        if self.messages_key is None:
            return
        with self._saver.cursor(transaction=False) as cur:
            rows = self._q.outbox(cur)
        gone = []
        for seq, thread_id, ns, checkpoint_id, scope in rows:
            found = self._saver.get_tuple(
                {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": ns,
                        "checkpoint_id": checkpoint_id,
                    }
                }
            )
            if found is None:  # deleted since (delete_for_runs, prune)
                gone.append(seq)
                continue
            messages = found.checkpoint["channel_values"].get(self.messages_key)
            self._mirror.offer(RunScope(*scope), messages, token=seq)
        if gone:
            with self._saver.cursor() as cur:
                self._q.done(cur, gone)

    def _written(self, tokens: list[Hashable]) -> None:
        """The mirror stored these checkpoints' messages: take them out of the outbox."""
        seqs = [t for t in tokens if isinstance(t, int)]
        if seqs:
            with self._sql("marking checkpoints mirrored") as cur:
                self._q.done(cur, seqs)

    @property
    def backlog(self) -> int:
        """Checkpoints whose messages are not yet durable in the memory (0 after :meth:`flush`)."""
        with self._saver.cursor(transaction=False) as cur:
            return int(self._q.pending_count(cur))
