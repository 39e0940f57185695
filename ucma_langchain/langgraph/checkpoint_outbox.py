"""The checkpointer's outbox: the checkpoints whose messages are not yet durable in the memory.

A checkpoint with new messages is entered in ``ucma_outbox`` in the transaction that stores
it (:meth:`UCMACheckpointer.put <ucma_langchain.langgraph.checkpointer.UCMACheckpointer.put>`),
and taken out once the mirror has stored its messages; opening the checkpointer replays what
is left, so a message acknowledged into a checkpoint reaches the memory exactly once whatever
happens to the process (message ids are the idempotency keys).
"""

from __future__ import annotations

from collections.abc import Hashable

from ucma_langchain.langgraph.checkpoint_base import CheckpointerBase
from ucma_langchain.langgraph.scope import RunScope

__all__ = ["Outbox"]


class Outbox(CheckpointerBase):
    """Replaying the outbox on open, and emptying it as the mirror stores messages."""

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
