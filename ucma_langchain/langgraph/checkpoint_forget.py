"""Forgetting threads: deleting a thread, a user's or a session's threads, and scrubbing
their text from the checkpoint database (the ``forget_user`` / ``forget_session`` of the
memory attachment, called by :meth:`ucma_core.Memory.forget_user` and
:meth:`~ucma_core.Memory.forget_session`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ucma_langchain.langgraph import checkpoint_sql
from ucma_langchain.langgraph.checkpoint_base import CheckpointerBase
from ucma_langchain.langgraph.scope import RunScope, check_thread_id, scope_from_config

__all__ = ["Forgetting"]


class Forgetting(CheckpointerBase):
    """Deleting threads (and, when asked, what they taught the memory) without a trace."""

    def delete_thread(self, thread_id: str, *, forget_memories: bool = False) -> None:
        """Delete the thread's checkpoints and writes (every namespace).

        Args:
            thread_id: the thread.
            forget_memories: also delete the memories observed from the thread (its
                UCMA session in the scopes the thread ran in) and scrub their text from
                the folder's files: Chroma's database and index, the keyword index, the
                graph journal, and this database (``Memory.forget_session(...,
                scrub=True)``). Default ``False``: what the thread taught the memory
                stays (its queued messages are stored first).
        """
        thread_id = check_thread_id(thread_id)
        self._check_open()
        if not forget_memories:
            self._mirror.drain()
            with self._sql("deleting a thread") as cur:
                self._q.delete_threads(cur, [thread_id])
            return
        for scope in self._thread_scopes(thread_id):
            self._mirror.forget(scope)
            if scope.session_id is not None:
                self.memory.forget_session(
                    scope.session_id, user_id=scope.user_id, agent_id=scope.agent_id, scrub=True
                )
        with self._sql("deleting a thread") as cur:
            self._q.delete_threads(cur, [thread_id])
        self._scrub()

    async def adelete_thread(self, thread_id: str, *, forget_memories: bool = False) -> None:
        """Async :meth:`delete_thread`."""
        await self._run(self.delete_thread, thread_id, forget_memories=forget_memories)

    def _thread_scopes(self, thread_id: str) -> Sequence[RunScope]:
        """The scopes a thread ran in: recorded at each put, and read from its checkpoints'
        metadata (LangGraph copies the run's string ``configurable`` values there) for
        checkpoints stored before."""
        with self._saver.cursor(transaction=False) as cur:
            recorded = self._q.thread_scopes(cur, thread_id)
            blobs = self._q.thread_metadata(cur, thread_id)
        scopes: set[RunScope] = {RunScope(*s) for s in recorded}
        for blob in blobs:
            try:
                meta = json.loads(blob)
            except ValueError:
                continue
            if isinstance(meta, dict):
                run = scope_from_config({"configurable": {**meta, "thread_id": thread_id}}, self.scope_keys)
                scopes.add(
                    run._replace(user_id=run.user_id if run.user_id is not None else self._fixed_user())
                )
        if not scopes and self.scope_keys.session_id == "thread_id":
            scopes.add(RunScope(self._fixed_user(), None, thread_id))
        return sorted(scopes, key=lambda s: tuple(v or "" for v in s))

    def forget_user(self, user_id: str) -> None:
        """Delete every thread that ran for ``user_id`` and scrub the database file (called by
        :meth:`ucma_core.Memory.forget_user`, which then deletes the memories)."""
        self._mirror.forget_user(user_id)
        if self._closed.is_set():
            return
        with self._sql("forgetting a user's threads") as cur:
            threads = self._q.user_threads(cur, user_id, self.scope_keys.user_id)
            self._q.delete_threads(cur, threads)
        self._scrub()

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        """Delete the threads that ran in one session and scrub the database file (called by
        :meth:`ucma_core.Memory.forget_session`)."""
        self._mirror.forget_session(session_id, user_id=user_id, agent_id=agent_id)
        if self._closed.is_set():
            return
        with self._sql("forgetting a session's threads") as cur:
            threads = self._q.session_threads(cur, session_id, user_id, agent_id)
            self._q.delete_threads(cur, threads)
        if threads:
            self._scrub()

    def _scrub(self) -> None:
        try:
            if self._q is checkpoint_sql:
                with self._saver.lock:
                    checkpoint_sql.scrub(self._saver.conn)
            else:
                with self._saver.cursor(transaction=False) as cur:
                    self._q.scrub(cur)
        except self._errors as e:
            raise self._error(e, "scrubbing the checkpoint tables") from e
