"""A LangGraph checkpointer that keeps threads in the memory folder and feeds UCMA.

Checkpoints, pending writes and channel values are stored by LangGraph's own
``SqliteSaver`` (``langgraph-checkpoint-sqlite``) in ``<memory folder>/checkpoints.sqlite3``:
the format, the queries and their fixes stay LangGraph's. This class adds on top:

* the messages that reach the checkpointed state are observed into UCMA once
  each (see :class:`~ucma_langchain.langgraph.mirror.MessageMirror`), scoped by
  the run's ``configurable`` (``thread_id`` → session, ``user_id``, ``agent_id``);
  the user must be stated (``UserNotStatedError`` otherwise, before anything is
  written) unless the checkpointer was built with ``user_id=None``;
* the checkpoint database is the mirror's outbox: a checkpoint with new messages is
  entered in ``ucma_outbox`` in the transaction that stores it, and taken out once its
  messages are durable in the memory; opening the checkpointer replays what is left, so a
  message acknowledged into a checkpoint reaches the memory exactly once whatever
  happens to the process (message ids are the idempotency keys);
* it is attached to the memory (:meth:`ucma_core.Memory.attach`): ``Memory.close``
  stores what is queued, ``forget_user`` / ``forget_session`` delete the threads
  and scrub the database file, ``verify`` checks it, the disk-space guard covers it;
* the extended capabilities ``SqliteSaver`` lacks (``delete_for_runs``,
  ``copy_thread``, ``prune``), as SQL on the saver's tables;
* clear UCMA errors for bad input (a thread id that is not a str, a value the
  serializer refuses) and for a full disk (``DiskFullError``).

With a memory in PostgreSQL (``memory.postgres`` is not ``None``) the checkpoints are
kept by LangGraph's ``PostgresSaver`` (``langgraph-checkpoint-postgres``) in the memory's
own database and schema, and the outbox and thread records are tables beside them
(:mod:`~ucma_langchain.langgraph.checkpoint_pg`): the outbox entry is written in the
transaction that stores the checkpoint, as on SQLite, so every guarantee above holds for
any number of worker processes sharing the memory. A worker that opens the checkpointer
replays the whole outbox, including entries another live worker is storing; message ids
make the second store a no-op.

The async methods run the same sync code in a worker thread (as
:class:`~ucma_core.Memory` does), so both paths share one connection, one lock
and one behaviour.

The class is put together from one part per concept (:mod:`checkpoint_base` lists them);
this module holds the facade: opening, reads and writes.
"""

from __future__ import annotations

import copy
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ucma_core import Memory
from ucma_core.conversation import UNSET, Unset
from ucma_core.errors import InvalidInputError
from ucma_langchain.langgraph import checkpoint_sql, sqlite_saver
from ucma_langchain.langgraph.checkpoint_async import AsyncPartners
from ucma_langchain.langgraph.checkpoint_attachment import Attached
from ucma_langchain.langgraph.checkpoint_base import configurable, thread_of
from ucma_langchain.langgraph.checkpoint_outbox import Outbox
from ucma_langchain.langgraph.mirror import MessageMirror
from ucma_langchain.langgraph.scope import ScopeKeys, check_thread_id

__all__ = ["ATTACHMENT", "CHECKPOINT_FILE", "UCMACheckpointer", "open_attachment"]

#: The checkpoint database's file name inside the memory folder.
CHECKPOINT_FILE = "checkpoints.sqlite3"
#: The attachment name of the checkpointer on the default file (its ``ucma.attachments``
#: entry point opens it, so ``ucma forget-user`` reaches it while no app has it open).
ATTACHMENT = "langgraph-checkpoints"


class UCMACheckpointer(Outbox, Attached, AsyncPartners):
    """Durable LangGraph threads in the memory folder, whose messages become memories.

    Args:
        memory: the UCMA memory; its folder holds the checkpoint database.
        user_id: whose messages these are when a run's config names no user: a str
            (always this user), ``None`` (the app has no users: runs without a user are
            stored without one) or, by default, unset: a run whose config names no
            user is refused with :class:`~ucma_core.errors.UserNotStatedError` before
            anything is written.
        path: the SQLite file (default: ``<memory folder>/checkpoints.sqlite3``).
        messages_key: the state channel whose messages are observed into UCMA
            (default ``"messages"``); ``None`` stores checkpoints only.
        scope_keys: which ``configurable`` / context keys name the UCMA user, agent
            and session (default: ``user_id``, ``agent_id``, ``thread_id``).
        roles: which message roles are observed (default user and assistant).
        background: observe in a worker thread (default) so a checkpoint write never
            waits for embeddings; :meth:`flush` waits. ``False`` observes inside ``put``.
        linger: seconds the worker waits to gather more messages into one memory
            write (default 0.1).
        serde: the serializer (default: LangGraph's ``JsonPlusSerializer``; pickle
            is never used).

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> from ucma_langchain.langgraph import UCMACheckpointer
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> saver = UCMACheckpointer(mem, user_id="ana")
        >>> saver.get_tuple({"configurable": {"thread_id": "t1"}}) is None
        True
        >>> mem.close()  # closes the checkpointer first, storing what it queued
    """

    def __init__(
        self,
        memory: Memory,
        *,
        user_id: str | Unset | None = UNSET,
        path: str | Path | None = None,
        messages_key: str | None = "messages",
        scope_keys: ScopeKeys | None = None,
        roles: Iterable[str] = ("user", "assistant"),
        background: bool = True,
        linger: float = 0.1,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a ucma_core.Memory, not {type(memory).__name__}")
        if messages_key is not None and (not isinstance(messages_key, str) or not messages_key):
            raise InvalidInputError(f"messages_key must be a non-empty str or None, got {messages_key!r}")
        if not (
            user_id is None or isinstance(user_id, Unset) or (isinstance(user_id, str) and user_id.strip())
        ):
            raise InvalidInputError(f"user_id must be a non-empty str, None or left unset, got {user_id!r}")
        self.memory = memory
        self.user_id = user_id
        self.messages_key = messages_key
        self.scope_keys = scope_keys or ScopeKeys()
        target = memory.postgres
        self._q = checkpoint_sql
        self._errors = (sqlite3.Error,)
        if target is not None:  # the memory is in PostgreSQL: so are its threads, in its schema
            if path is not None:
                raise InvalidInputError(
                    "path= names a SQLite file, but this memory is in PostgreSQL: its checkpoints are kept "
                    "in the memory's own database schema; leave path out"
                )
            import psycopg

            from ucma_langchain.langgraph import checkpoint_pg

            self._q = checkpoint_pg
            self._errors = (sqlite3.Error, psycopg.Error)
            self.path = memory.path
            self._name = ATTACHMENT
            # LangGraph's PostgresSaver with the same cursor() / along / lock / conn as OutboxSqliteSaver
            self._saver = checkpoint_pg.open_saver(target, serde=self.serde)
        else:
            self.path = Path(path) if path is not None else memory.path / CHECKPOINT_FILE
            stem = "".join(c if c.isalnum() else "-" for c in self.path.stem.lower()).strip("-")[:40] or "db"
            self._name = ATTACHMENT if stem == "checkpoints" else f"langgraph-{stem}"
            self._saver = sqlite_saver.open_saver(self.path, serde=self.serde)
        self._recorded = set()
        self._closed = threading.Event()  # shared with the clones with_allowlist makes
        self._mirror = MessageMirror(
            memory, roles=roles, background=background, linger=linger, on_written=self._written
        )
        try:
            memory.attach(self)  # applies forgets recorded while no checkpointer was open
            self._catch_up()
        except BaseException:
            self._mirror.close()
            with self._saver.lock:
                self._saver.conn.close()
            memory.detach(self)
            raise

    # ------------------------------------------------------------------ reads
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config`` (the thread's latest without ``checkpoint_id``)."""
        thread_of(config)
        self._check_open()
        return self._saver.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first (read in full before the first is yielded,
        so the caller may use the checkpointer while iterating)."""
        if config is not None:
            thread_of(config)
        if before is not None:
            configurable(before, what="before")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInputError(f"limit must be a non-negative int or None, got {limit!r}")
        self._check_open()
        yield from list(self._saver.list(config, filter=filter, before=before, limit=limit))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's SQLite fast path for ``DeltaChannel`` reconstruction (beta)."""
        thread_of(config)
        self._check_open()
        return self._saver.get_delta_channel_history(config=config, channels=channels)

    # ------------------------------------------------------------------ writes
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint (entered in the outbox first), then hand its new messages to
        the UCMA mirror.

        Raises:
            InvalidInputError: a thread id that is not a str, or a channel value the
                serializer cannot encode (nothing is written then).
            UserNotStatedError: the config names no user and none was given to the
                checkpointer (nothing is written then).
            DiskFullError: the disk is (nearly) full (nothing is written then).
        """
        thread_id = thread_of(config)
        scope = self.scope(config) if self.messages_key is not None else None
        self._check_open()
        self.memory.check_space()
        tokens: list[int] = []
        along = None
        if scope is not None:
            ns = str(config["configurable"].get("checkpoint_ns", ""))
            mirrored = self.messages_key in new_versions
            along = self._entry(thread_id, ns, checkpoint, scope, mirrored=mirrored, tokens=tokens)
        self._saver.along.fn = along  # committed in the checkpoint's own transaction
        try:
            stored = self._saver.put(config, checkpoint, metadata, new_versions)
        except TypeError as e:
            raise InvalidInputError(
                f"checkpoint {checkpoint.get('id')!r} of thread {thread_id!r} cannot be serialised: {e}; "
                "keep state values to JSON-like data, LangChain messages, dataclasses or pydantic models"
            ) from e
        except self._errors as e:
            raise self._error(e, f"storing a checkpoint of thread {thread_id!r}") from e
        finally:
            pending, self._saver.along.fn = self._saver.along.fn, None
        if pending is not None:  # a SqliteSaver that stored without its cursor(): record it now
            with self._sql("recording a checkpoint for the memory") as cur:
                pending(cur)
        if scope is not None:
            self._recorded.add((thread_id, scope))
        token = tokens[0] if tokens else None
        if scope is not None and token is not None and self.messages_key is not None:
            self._mirror.offer(scope, checkpoint["channel_values"].get(self.messages_key), token=token)
        return stored

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes for the checkpoint named by ``config``."""
        thread_id = thread_of(config)
        self._check_open()
        self.memory.check_space()
        try:
            self._saver.put_writes(config, writes, task_id, task_path)
        except TypeError as e:
            raise InvalidInputError(
                f"a pending write of task {task_id!r} in thread {thread_id!r} cannot be serialised: {e}"
            ) from e
        except self._errors as e:
            raise self._error(e, f"storing pending writes of thread {thread_id!r}") from e

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) created by these runs."""
        self._check_open()
        with self._saver.cursor() as cur:
            self._q.delete_for_runs(cur, list(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another. The copied messages
        keep their ids, so UCMA keeps one memory per message (in the source's session)."""
        source, target = check_thread_id(source_thread_id), check_thread_id(target_thread_id)
        self._check_open()
        with self._saver.cursor() as cur:
            self._q.copy_thread(cur, source, target)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``"keep_latest"``: keep each namespace's newest checkpoint; ``"delete"``: delete
        the threads. Threads whose graph uses the beta ``DeltaChannel`` should not be
        pruned with ``keep_latest`` (see LangGraph's ``BaseCheckpointSaver.prune``)."""
        ids = [check_thread_id(t) for t in thread_ids]
        if strategy not in ("keep_latest", "delete"):
            raise InvalidInputError(f"unknown prune strategy {strategy!r}; use 'keep_latest' or 'delete'")
        self._check_open()
        if strategy == "delete":
            for thread_id in ids:
                self._saver.delete_thread(thread_id)
            return
        if self._q is not checkpoint_sql:
            self._saver.prune(ids, strategy="keep_latest")
            return
        with self._saver.cursor() as cur:
            checkpoint_sql.prune_keep_latest(cur, ids)

    def get_next_version(self, current: str | None, channel: None) -> str:
        return self._saver.get_next_version(current, channel)

    # ------------------------------------------------------------------ lifecycle
    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> UCMACheckpointer:
        """A shallow clone with LangGraph's msgpack allowlist (called by ``compile``); it shares
        this checkpointer's connection, lock and mirror."""
        clone = super().with_allowlist(extra_allowlist)
        if clone is self:
            return self
        saver = copy.copy(self._saver)
        saver.serde = clone.serde
        clone._saver = saver  # type: ignore[attr-defined]
        return clone  # type: ignore[return-value]

    def __enter__(self) -> UCMACheckpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> UCMACheckpointer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def open_attachment(memory: Memory) -> UCMACheckpointer:
    """The checkpointer on ``memory``'s default checkpoint file, opened for the core (the
    ``ucma.attachments`` entry point ``langgraph-checkpoints``): ``ucma forget-user`` and
    ``Memory.forget_user`` reach the checkpoints while no app has them open."""
    return UCMACheckpointer(memory, user_id=None)
