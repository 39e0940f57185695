"""What every part of :class:`~ucma_langchain.langgraph.checkpointer.UCMACheckpointer`
shares: its state, the checks of a run's config, its transactions and their errors, and the
UCMA scope a run writes to.

The checkpointer is put together from one class per concept, each a subclass of
:class:`CheckpointerBase`: the outbox (:mod:`checkpoint_outbox`), forgetting threads
(:mod:`checkpoint_forget`), being a memory attachment (:mod:`checkpoint_attachment`) and
the async partners (:mod:`checkpoint_async`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from ucma_core import Memory
from ucma_core.attachments import file_error
from ucma_core.conversation import Unset, bind, stated_user
from ucma_core.errors import ClosedMemoryError, InvalidInputError, StorageError
from ucma_langchain.langgraph.mirror import MessageMirror
from ucma_langchain.langgraph.scope import RunScope, ScopeKeys, check_thread_id, scope_from_config
from ucma_langchain.langgraph.sqlite_saver import OutboxSqliteSaver

__all__ = ["CheckpointerBase", "configurable", "thread_of"]

_WHERE_USER = 'config={"configurable": {"user_id": ...}}'

T = TypeVar("T")


def configurable(config: RunnableConfig | None, *, what: str = "config") -> Mapping[str, Any]:
    """``config["configurable"]``, checked (a dict, and a str ``checkpoint_ns`` if any).

    Raises:
        InvalidInputError: ``config`` is not a dict with a ``configurable`` dict, or its
            ``checkpoint_ns`` is not a str.
    """
    if not isinstance(config, Mapping):
        raise InvalidInputError(
            f"{what} must be a dict with a 'configurable' dict, not {type(config).__name__}"
        )
    found = config.get("configurable")
    if not isinstance(found, Mapping):
        raise InvalidInputError(f'{what} needs {{"configurable": {{"thread_id": ...}}}}')
    ns = found.get("checkpoint_ns", "")
    if not isinstance(ns, str):
        raise InvalidInputError(f"checkpoint_ns must be a str, not {type(ns).__name__}")
    return found


def thread_of(config: RunnableConfig | None, *, what: str = "config") -> str:
    """The thread id ``config`` names, checked (see :func:`configurable`).

    Raises:
        InvalidInputError: no ``thread_id``, or one that is not a str.
    """
    found = configurable(config, what=what)
    if "thread_id" not in found:
        raise InvalidInputError(f'{what} has no thread_id: pass {{"configurable": {{"thread_id": "..."}}}}')
    return check_thread_id(found["thread_id"])


class CheckpointerBase(BaseCheckpointSaver[str]):
    """The state and helpers the checkpointer's parts share (set by its ``__init__``)."""

    memory: Memory
    user_id: str | Unset | None
    messages_key: str | None
    scope_keys: ScopeKeys
    #: The SQLite file, or the memory's folder when the memory is in PostgreSQL.
    path: Path
    #: The SQL module for this database (:mod:`checkpoint_sql` or :mod:`checkpoint_pg`).
    _q: Any
    _errors: tuple[type[BaseException], ...]
    _name: str
    _saver: OutboxSqliteSaver
    _recorded: set[tuple[str, RunScope]]
    _closed: threading.Event
    _mirror: MessageMirror

    @contextmanager
    def _sql(self, what: str) -> Iterator[Any]:
        """A transaction on the database; SQLite failures become UCMA storage errors."""
        try:
            with self._saver.cursor() as cur:
                yield cur
        except self._errors as e:
            raise self._error(e, what) from e

    def _error(self, e: BaseException, what: str) -> StorageError:
        """A UCMA storage error for a failure of the checkpoint database."""
        if isinstance(e, sqlite3.Error):
            return file_error(e, f"{what} in {self.path}", folder=self.path.parent)
        return StorageError(f"PostgreSQL failed while {what} ({self.path}): {str(e).strip()}")

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker thread: the async methods share the sync code."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    def _check_open(self) -> None:
        if self._closed.is_set():
            raise ClosedMemoryError(f"the checkpointer on {self.path} is closed")

    def _fixed_user(self) -> str | None:
        return self.user_id if isinstance(self.user_id, str) else None

    def scope(self, config: RunnableConfig) -> RunScope:
        """The UCMA scope a run with this config writes its messages to.

        Raises:
            UserNotStatedError: the config names no user and the checkpointer was not
                built with a ``user_id`` (or ``user_id=None``).
            InvalidInputError: a scope value the memory refuses (a user id over 256
                characters, for example).
        """
        run = scope_from_config(config, self.scope_keys)
        user = stated_user(self.user_id, run.user_id, adapter="UCMACheckpointer", where=_WHERE_USER)
        scope = run._replace(user_id=user)
        bind(self.memory, user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id)
        return scope  # the memory accepts it: a put is refused now, not its mirroring later
