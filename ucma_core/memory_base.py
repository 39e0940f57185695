"""What every part of :class:`~ucma_core.Memory` shares: the open folder, the lock, the
clock, the providers, the current session and the lifecycle.

:class:`MemoryBase` is the base of the parts the façade is made of
(:mod:`~ucma_core.knowledge`, :mod:`~ucma_core.maintenance`, :mod:`~ucma_core.reads`,
:mod:`~ucma_core.transfer`) and of :class:`~ucma_core.Memory` itself, so none of them
imports another.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ucma_core.background import BackgroundCycles
from ucma_core.config import MemoryConfig
from ucma_core.embedders.cache import CachedEmbedder, as_embedder
from ucma_core.embedders.default import default_embedder
from ucma_core.errors import (
    ClosedMemoryError,
    ConfigurationError,
    EmbedderMismatchError,
    InvalidInputError,
)
from ucma_core.progress import ProgressCallback
from ucma_core.protocols import Clock, Embedder, ImportanceScorer
from ucma_core.providers.offline import OfflineProvider
from ucma_core.providers.protocols import Provider
from ucma_core.retrieval.search import Retriever
from ucma_core.scope import Scope
from ucma_core.shutdown import closed, opened
from ucma_core.storage.backend import Backend
from ucma_core.storage.postgres.url import PostgresTarget, is_postgres_url
from ucma_core.stores.folder import FolderStores
from ucma_core.stores.sensory import SensoryBuffer
from ucma_core.tokens import TiktokenCounter, TokenCounter
from ucma_core.validation import check_scope_id
from ucma_core.working_memory import WorkingMemory

if TYPE_CHECKING:
    from ucma_core.attachments import Attachment

__all__ = ["MemoryBase", "in_thread"]


class OpenLock:
    """A reusable context manager: the memory's lock, or :class:`ClosedMemoryError` once closed."""

    def __init__(self, memory: MemoryBase) -> None:
        self._memory = memory

    def __enter__(self) -> None:
        self._memory._lock.acquire()
        if self._memory._closed:
            self._memory._lock.release()
            raise ClosedMemoryError(f"memory at {self._memory.path} is closed")
        try:
            self._memory._stores.settle()
        except BaseException:
            self._memory._lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._memory._lock.release()


def _folder(path: object) -> Path | PostgresTarget:
    """The memory folder ``path`` names, or the shared memory a ``postgresql://`` URL names;
    an empty path is refused (it would be the current directory)."""
    if is_postgres_url(path):
        return PostgresTarget.parse(str(path))
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInputError(f"path must be a str or a path, not {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(
            "the memory folder path is empty; pass a folder (Memory('') would write into the current "
            "directory)"
        )
    if "\x00" in text:
        raise InvalidInputError("the memory folder path contains a NUL character")
    return Path(text)


S = TypeVar("S")
P = ParamSpec("P")


def _recorded_embedder(target: Path | PostgresTarget) -> tuple[str, int] | None:
    if isinstance(target, PostgresTarget):
        from ucma_core.storage.postgres.backend import recorded_embedder

        return recorded_embedder(target)
    return Backend.recorded_embedder(target) if (target / "ucma.json").exists() else None


R = TypeVar("R")


def in_thread(
    method: Callable[Concatenate[S, P], R], owner: str = "Memory"
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """The async partner of a sync method: the same code, run in a worker thread.

    The partner keeps the method's signature for type checkers (``ParamSpec``), so a
    misspelt keyword through ``aremember`` is caught as it is through ``remember``.
    """

    @functools.wraps(method)
    async def partner(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    partner.__name__ = "a" + method.__name__
    partner.__qualname__ = f"{owner}.a{method.__name__}"
    partner.__doc__ = f"Async :meth:`{owner}.{method.__name__}` (same behaviour, run in a worker thread)."
    return partner


class MemoryBase:
    """The state and lifecycle of an open memory folder (see :class:`~ucma_core.Memory`)."""

    def __init__(
        self,
        path: str | Path,
        *,
        config: MemoryConfig | None = None,
        embedder: Embedder | None = None,
        provider: ImportanceScorer | None = None,
        clock: Clock | None = None,
        token_counter: TokenCounter | None = None,
    ) -> None:
        self._setup(
            path,
            config=config,
            embedder=embedder,
            provider=provider,
            clock=clock,
            token_counter=token_counter,
        )

    def _setup(
        self,
        path: str | Path,
        *,
        config: MemoryConfig | None = None,
        embedder: Embedder | None = None,
        provider: ImportanceScorer | None = None,
        clock: Clock | None = None,
        token_counter: TokenCounter | None = None,
        repair: bool = False,
        progress: ProgressCallback | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MemoryConfig):
            raise InvalidInputError(f"config must be a MemoryConfig, not {type(config).__name__}")
        self.config = config or MemoryConfig()
        self._clock: Clock = clock or time.time
        folder = _folder(path)
        if embedder is not None:
            chosen = as_embedder(embedder)
        else:
            try:
                chosen = default_embedder(_recorded_embedder(folder))
            except EmbedderMismatchError:
                raise
            except ConfigurationError as e:
                raise EmbedderMismatchError(str(e)) from e
        self._embedder = CachedEmbedder(
            chosen, self.config.embedding_cache_size, max_bytes=int(self.config.embedding_cache_mib * 2**20)
        )
        if provider is not None and not callable(getattr(provider, "score_importance", None)):
            raise InvalidInputError("provider must have a score_importance(content, *, source) method")
        offline = OfflineProvider()
        self._scorer: ImportanceScorer = provider or offline
        self._provider: Provider = provider if isinstance(provider, Provider) else offline
        self._closed = False
        self._stores = FolderStores(
            folder, self.config, self._embedder, self._clock, repair=repair, progress=progress
        )
        self._lock = self._stores.new_lock()
        #: What a call that only reads holds (shared across workers for a shared memory).
        self._read_lock = self._stores.read_lock(self._lock)
        self.sensory = SensoryBuffer(
            self.config.sensory_capacity, self.config.sensory_ttl_seconds, self._clock
        )
        self._retriever = Retriever(self._stores)
        self._session_id = uuid.uuid4().hex
        self._working: WorkingMemory | None = None
        self._token_counter = token_counter
        #: Consolidation threads (``start_consolidation``, a background ``Cadence``).
        self._background = BackgroundCycles()
        #: The report of the last background consolidation cycle (``None`` before the first).
        self.last_consolidation: Any = None
        #: What adapters attached (see :mod:`ucma_core.attachments`), in the order attached.
        self._attached: dict[str, Attachment] = {}
        opened(self)  # closed at interpreter exit unless closed before (ucma_core.shutdown)

    # ------------------------------------------------------------------ properties
    @property
    def path(self) -> Path:
        """The memory folder (for a memory in PostgreSQL, its URL without the password as a
        path, for messages only: see :attr:`postgres`)."""
        return self._stores.backend.folder

    @property
    def postgres(self) -> PostgresTarget | None:
        """Where a memory opened by ``postgresql://`` URL lives (connection string, memory
        name, schema); ``None`` for a memory folder. Adapters that keep data beside the
        memory (checkpoints) put it in that database and schema."""
        target = getattr(self._stores.backend, "target", None)
        return target if isinstance(target, PostgresTarget) else None

    @property
    def session_id(self) -> str:
        """The current session, used by writes that name none."""
        return self._session_id

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @property
    def working(self) -> WorkingMemory:
        """The working memory (zones with token budgets) of this memory object, created on
        first use; it lives in this process only."""
        with self._lock:
            if self._working is None:
                self._working = WorkingMemory(self.config.working, self.token_counter, self._clock)
            return self._working

    @property
    def token_counter(self) -> TokenCounter:
        """What this memory counts tokens with (the one given, else tiktoken with
        ``config.working.encoding``); adapters render recalled memories with it."""
        if self._token_counter is None:
            self._token_counter = TiktokenCounter(self.config.working.encoding)
        return self._token_counter

    def now(self) -> float:
        """The memory's clock."""
        return float(self._clock())

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close what is attached (storing what attached writers hold), stop background
        consolidation, write a fresh graph snapshot and release the folder. Idempotent.
        A memory still open when the interpreter exits is closed then
        (:mod:`~ucma_core.shutdown`).

        Raises:
            Exception: the first error an attachment met while storing what it held (the
                folder is closed all the same; what it could not store stays in its
                outbox, if it has one, for the next open).
        """
        self._background.close()  # running cycles wind down while attachments store what they hold
        errors = self._close_attachments()
        self.stop_consolidation()
        with self._lock:
            self._close_folder()
        if errors:
            raise errors[0]

    def _close_folder(self) -> None:
        """Write what waits, compact and release the folder (the lock held); idempotent."""
        if self._closed:
            return
        self._closed = True
        closed(self)
        self._stores.close(compact=True)

    def flush(self) -> None:
        """Return once Chroma holds every vector that waits for its write.

        With group commit (``MemoryConfig.group_commit``, on by default for a memory
        folder) ``observe`` returns once the memory is durable in the folder's journal
        and visible to :meth:`remember`; a background writer adds the vectors to
        Chroma in batches. ``flush`` writes what waits now (``close`` does too). A
        memory in PostgreSQL keeps each new vector in its ``pending`` table until a
        background thread adds it to Chroma; ``flush`` adds every worker's now.
        ``flush`` (like every call but ``remember``) also writes the access marks that
        ``remember`` queued (:mod:`~ucma_core.stores.accessmarks`).

        Raises:
            StorageError: Chroma refused the write (e.g. a full disk). Nothing is lost:
                the memories stay durable in the journal, readable, and are written when
                Chroma accepts them (tried again in the background and on the next open).
        """
        with self._open_lock:
            self._stores.backend.flush()

    def _close_attachments(self) -> list[Exception]:
        """Close every attachment, newest first (outside the lock: a writer's worker takes it)."""
        errors: list[Exception] = []
        while self._attached:
            name, attachment = next(reversed(self._attached.items()))
            try:
                attachment.close()
            except Exception as e:
                errors.append(e)
            finally:
                if self._attached.get(name) is attachment:
                    del self._attached[name]
        return errors

    def _attachment_problems(self) -> list[str]:
        """What the open attachments' checks find, and forgets still pending for closed ones."""
        problems = [
            f"{name}: {problem}" for name, att in list(self._attached.items()) for problem in att.verify()
        ]
        for name, entry in self._stores.backend.manifest.attachments.items():
            pending = entry.get("pending") or []
            if pending and name not in self._attached:
                problems.append(
                    f"{name}: {len(pending)} forget(s) wait until it is next opened (its files still "
                    "hold that text); open it (e.g. the LangGraph checkpointer) to apply them"
                )
        return problems

    def stop_consolidation(self, timeout: float | None = 30.0) -> bool:
        """Stop background consolidation (the ``start_consolidation`` thread, and a cycle a
        :class:`~ucma_core.conversation.Cadence` runs in the background): a running cycle stops
        between phases or batches. ``True`` if all had stopped when this returned."""
        return self._background.stop(timeout)

    def _check_open(self, *, settle: bool = True) -> None:
        """Refuse a closed memory; with ``settle`` (every call but ``remember``) first write the
        access marks retrievals queued, so the call reads and writes them (the lock is held)."""
        if self._closed:
            raise ClosedMemoryError(f"memory at {self.path} is closed")
        if settle:
            self._stores.settle()

    @property
    def _open_lock(self) -> OpenLock:
        """The memory's lock, refusing with :class:`ClosedMemoryError` once the memory is closed
        (background work such as consolidation takes it for every step)."""
        return OpenLock(self)

    def new_session(self) -> str:
        """Start a new session and return its id; later writes without ``session_id`` use it."""
        with self._lock:
            self._check_open()
            self._session_id = uuid.uuid4().hex
            return self._session_id

    # ------------------------------------------------------------------ shared argument handling
    def _write_session(self, session_id: object) -> str:
        """The session a write goes to: the given one, else the current session."""
        return check_scope_id(session_id, "session_id") or self._session_id

    @staticmethod
    def _scope(user_id: object, agent_id: object, session_id: object = None) -> Scope:
        return Scope.of(user_id, agent_id, session_id)
