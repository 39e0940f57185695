"""The public face of UCMA: one object per memory folder.

:class:`Memory` validates arguments, serialises access with a lock and delegates
to the stores; it holds no policy of its own. Every public method has an async
partner (``aobserve``, ``aremember``…) generated from it by :func:`_in_thread`, so
the logic exists once.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ucma_core.config import MemoryConfig
from ucma_core.embedders.cache import CachedEmbedder, as_embedder
from ucma_core.embedders.default import default_embedder
from ucma_core.errors import ClosedMemoryError, InvalidInputError
from ucma_core.knowledge import Knowledge
from ucma_core.maintenance import Maintenance
from ucma_core.protocols import Clock, Embedder, ImportanceScorer
from ucma_core.providers.offline import OfflineProvider
from ucma_core.providers.protocols import Provider
from ucma_core.records import (
    Intention,
    MemoryRecord,
    MemoryType,
    RetrievalResult,
    Source,
)
from ucma_core.retrieval.filters import Filters
from ucma_core.retrieval.router import RouteKind
from ucma_core.retrieval.search import Retriever
from ucma_core.scope import AnyScope, Scope
from ucma_core.storage.backend import Backend
from ucma_core.stores.context import StoreContext
from ucma_core.stores.episodic import EpisodeDraft, EpisodicStore
from ucma_core.stores.learning import LearningStore
from ucma_core.stores.procedural import ProceduralStore
from ucma_core.stores.prospective import ProspectiveStore
from ucma_core.stores.semantic import SemanticStore
from ucma_core.stores.sensory import SensoryBuffer, SensoryEntry
from ucma_core.tokens import TiktokenCounter, TokenCounter
from ucma_core.validation import (
    check_content,
    check_metadata,
    check_scope_id,
    check_strings,
    check_time_range,
    check_unit,
    to_epoch,
)
from ucma_core.working_memory import WorkingMemory

__all__ = ["Memory"]

P = ParamSpec("P")
R = TypeVar("R")


def _in_thread(method: Callable[..., R]) -> Callable[..., Any]:
    """The async partner of a sync method: the same code, run in a worker thread."""

    @functools.wraps(method)
    async def partner(self: Memory, *args: Any, **kwargs: Any) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    partner.__name__ = "a" + method.__name__
    partner.__qualname__ = f"Memory.a{method.__name__}"
    partner.__doc__ = f"Async :meth:`Memory.{method.__name__}` (same behaviour, run in a worker thread)."
    return partner


class Memory(Knowledge, Maintenance):
    """A persistent cognitive memory in one folder.

    Args:
        path: the memory folder (created if missing).
        config: tuning; defaults to :class:`MemoryConfig()`.
        embedder: any object with ``name``, ``dimension`` and ``embed(texts)``. By
            default a folder reopens with the built-in embedder that created it, and
            a new folder uses the offline MiniLM model from ``ucma[local]``.
        provider: the model behind importance scores and consolidation: any
            :class:`~ucma_core.providers.Provider` (such as
            :class:`~ucma_core.providers.OpenAIProvider`), or an object with only
            ``score_importance(content, *, source)``, in which case consolidation uses
            the offline heuristics. Default: :class:`~ucma_core.providers.OfflineProvider`.
        clock: returns the current time in epoch seconds; every time-dependent
            decision uses it (default ``time.time``).
        token_counter: counts tokens for :attr:`working` (default: tiktoken with
            ``config.working.encoding``, loaded offline).

    Example:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
        ...     mem.observe("I'm Ana and I prefer concise answers.", user_id="ana") is not None
        ...     mem.remember("how does Ana like answers?", user_id="ana")[0].memory_type.value
        True
        'episodic'
    """

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
        self.config = config or MemoryConfig()
        self._clock: Clock = clock or time.time
        folder = Path(path)
        chosen = (
            as_embedder(embedder)
            if embedder is not None
            else default_embedder(
                Backend.recorded_embedder(folder) if (folder / "ucma.json").exists() else None
            )
        )
        self._embedder = CachedEmbedder(chosen, self.config.embedding_cache_size)
        if provider is not None and not callable(getattr(provider, "score_importance", None)):
            raise InvalidInputError("provider must have a score_importance(content, *, source) method")
        offline = OfflineProvider()
        self._scorer: ImportanceScorer = provider or offline
        self._provider: Provider = provider if isinstance(provider, Provider) else offline
        self._lock = threading.RLock()
        self._closed = False
        self._backend = Backend(
            folder, self.config, embedder_name=chosen.name, dimension=chosen.dimension, now=self._clock()
        )
        ctx = StoreContext(self._backend, self._embedder, self.config, self._clock)
        self._ctx = ctx
        self.sensory = SensoryBuffer(
            self.config.sensory_capacity, self.config.sensory_ttl_seconds, self._clock
        )
        self._episodic = EpisodicStore(ctx)
        self._semantic = SemanticStore(ctx)
        self._procedural = ProceduralStore(ctx)
        self._learning = LearningStore(ctx)
        self._prospective = ProspectiveStore(ctx)
        self._retriever = Retriever(ctx)
        self._session_id = uuid.uuid4().hex
        self._working: WorkingMemory | None = None
        self._token_counter = token_counter
        try:
            self._open_indexes()
        except BaseException:
            self._backend.close()
            raise

    def _open_indexes(self) -> None:
        restored, orphans = self._backend.reconcile()
        graph = self._backend.graph
        restored_ids = {r.id for r in restored}
        for memory_id, attrs in graph.nodes():
            if memory_id in restored_ids:
                continue
            if attrs.get("memory_type") == MemoryType.EPISODIC.value:
                self._episodic.index(memory_id, attrs)
            elif attrs.get("memory_type") == MemoryType.PROSPECTIVE.value:
                self._prospective.index(memory_id, attrs)
        with graph.batch():
            for record in restored:
                self._linker(record.memory_type)(record.id)
        if orphans:
            self._delete(orphans, scrub=False)

    def _linker(self, memory_type: MemoryType) -> Callable[[str], None]:
        return {
            MemoryType.EPISODIC: self._episodic.link,
            MemoryType.SEMANTIC: self._semantic.link,
            MemoryType.PROCEDURAL: self._procedural.link,
            MemoryType.LEARNING: self._learning.link,
            MemoryType.PROSPECTIVE: self._prospective.link,
        }[memory_type]

    # ------------------------------------------------------------------ lifecycle
    @property
    def path(self) -> Path:
        return self._backend.folder

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
                self._working = WorkingMemory(
                    self.config.working,
                    self._token_counter or TiktokenCounter(self.config.working.encoding),
                    self._clock,
                )
            return self._working

    def now(self) -> float:
        """The memory's clock."""
        return float(self._clock())

    def close(self) -> None:
        """Stop background consolidation, write a fresh graph snapshot and release the
        folder. Idempotent."""
        self.stop_consolidation()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._retriever.close()
            finally:
                self._backend.close(compact=True)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedMemoryError(f"memory at {self._backend.folder} is closed")

    def new_session(self) -> str:
        """Start a new session and return its id; later writes without ``session_id`` use it."""
        with self._lock:
            self._check_open()
            self._session_id = uuid.uuid4().hex
            return self._session_id

    # ------------------------------------------------------------------ observe
    def _draft(
        self,
        content: object,
        *,
        source: Source | str,
        user_id: object,
        agent_id: object,
        session_id: object,
        timestamp: object,
        metadata: object,
        tags: object,
        participants: object,
        importance: object,
    ) -> tuple[EpisodeDraft, bool]:
        text = check_content(content, max_chars=self.config.max_content_chars)
        src = Source.parse(source).value
        user = check_scope_id(user_id, "user_id")
        agent = check_scope_id(agent_id, "agent_id")
        session = check_scope_id(session_id, "session_id") or self._session_id
        meta = check_metadata(metadata)
        now = self.now()
        ts = now if timestamp is None else to_epoch(timestamp)
        score = (
            check_unit(importance, "importance")
            if importance is not None
            else check_unit(self._scorer.score_importance(text, source=src), "provider importance")
        )
        draft = EpisodeDraft(
            content=text,
            source=src,
            timestamp=ts,
            importance=score,
            user_id=user,
            agent_id=agent,
            session_id=session,
            metadata=meta,
            tags=check_strings(tags, "tags"),
            participants=check_strings(participants, "participants"),
        )
        return draft, score >= self.config.importance_threshold

    def observe(
        self,
        content: str,
        *,
        source: Source | str = "user",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        timestamp: datetime | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        participants: Sequence[str] | None = None,
        importance: float | None = None,
    ) -> str | None:
        """Take in something that happened; return its memory id, or ``None`` if it was not kept.

        The content passes through the sensory buffer; if its importance (scored by
        the provider, or given) reaches ``config.importance_threshold`` it becomes an
        episode. The id is returned only once the episode is durable: it survives a
        crash of this process. Pending intentions whose triggers occur in the content
        fire (see :meth:`intentions`) and, when :attr:`working` is in use, appear there as
        ``reminder`` items.
        """
        return self.observe_many(
            [
                {
                    "content": content,
                    "source": source,
                    "user_id": user_id,
                    "agent_id": agent_id,
                    "session_id": session_id,
                    "timestamp": timestamp,
                    "metadata": metadata,
                    "tags": tags,
                    "participants": participants,
                    "importance": importance,
                }
            ]
        )[0]

    def observe_many(self, items: Iterable[str | Mapping[str, Any]], **defaults: Any) -> list[str | None]:
        """Observe many items with one embedding batch, one Chroma write and one journal append.

        Each item is a str or a dict of :meth:`observe`'s arguments; ``defaults``
        (e.g. ``user_id=...``) apply to items that do not set them. Every item is
        validated before anything is stored, so one bad item stores nothing.
        """
        allowed = {
            "content",
            "source",
            "user_id",
            "agent_id",
            "session_id",
            "timestamp",
            "metadata",
            "tags",
            "participants",
            "importance",
        }
        unknown = set(defaults) - allowed
        if unknown:
            raise InvalidInputError(f"unknown observe argument(s): {', '.join(sorted(unknown))}")
        with self._lock:
            self._check_open()
            drafts: list[tuple[EpisodeDraft, bool]] = []
            for n, item in enumerate(items):
                fields = {"content": item} if isinstance(item, str) else dict(item)
                if not isinstance(item, (str, Mapping)):
                    raise InvalidInputError(f"item {n} must be a str or a dict, not {type(item).__name__}")
                bad = set(fields) - allowed
                if bad:
                    raise InvalidInputError(f"item {n} has unknown key(s): {', '.join(sorted(bad))}")
                merged = {
                    "source": "user",
                    **{k: v for k, v in defaults.items()},
                    **{k: v for k, v in fields.items() if v is not None or k == "content"},
                }
                merged.setdefault("content", None)
                drafts.append(
                    self._draft(
                        merged["content"],
                        source=merged["source"],
                        user_id=merged.get("user_id"),
                        agent_id=merged.get("agent_id"),
                        session_id=merged.get("session_id"),
                        timestamp=merged.get("timestamp"),
                        metadata=merged.get("metadata"),
                        tags=merged.get("tags"),
                        participants=merged.get("participants"),
                        importance=merged.get("importance"),
                    )
                )
            kept = [d for d, keep in drafts if keep]
            vectors = self._embedder.embed([d.content for d in kept]) if kept else []
            with self._backend.graph.batch():
                episodes = iter(self._episodic.add(kept, vectors))
                ids: list[str | None] = []
                received = self.now()
                for draft, keep in drafts:
                    memory_id = next(episodes).id if keep else None
                    if memory_id is not None:
                        fired = self._prospective.fire(
                            memory_id, draft.content, draft.user_id, draft.agent_id
                        )
                        self._remind(fired)
                    self.sensory.ingest(
                        SensoryEntry(
                            content=draft.content,
                            source=draft.source,
                            timestamp=draft.timestamp,
                            received_at=received,
                            importance=draft.importance,
                            user_id=draft.user_id,
                            agent_id=draft.agent_id,
                            session_id=draft.session_id,
                            memory_id=memory_id,
                        )
                    )
                    ids.append(memory_id)
            return ids

    def _remind(self, intention_ids: list[str]) -> None:
        """Put intentions that just fired into working memory (if this memory has one in use)."""
        if not intention_ids or self._working is None:
            return
        for intention in self._backend.fetch(intention_ids).values():
            if isinstance(intention, Intention):
                self._working.add(
                    intention.content,
                    zone="active",
                    importance=intention.priority,
                    slot="reminder",
                    item_id=f"intention:{intention.id}",
                    memory_id=intention.id,
                )

    # ------------------------------------------------------------------ remember
    def remember(
        self,
        query: str,
        *,
        k: int = 10,
        user_id: Scope = None,
        agent_id: Scope = None,
        session_id: Scope = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        time_range: tuple[datetime | float, datetime | float] | None = None,
        tags: Sequence[str] | None = None,
        now: datetime | float | None = None,
        route: RouteKind | str | None = None,
        stage: bool = False,
        include_generated: bool = True,
    ) -> list[RetrievalResult]:
        """The ``k`` memories most worth recalling for ``query``, best first.

        The query router reads the question (no model call): a time expression
        ("last week", "in May", "before the move") becomes a time range resolved
        against the memory's clock, "how do I …" favours procedures, "who is X"
        the facts about X, "what did Carla say …" Carla's turns. ``route``
        overrides the router's kind (``"temporal"``, ``"procedural"``, ``"entity"``,
        ``"hybrid"``); each result's ``route`` shows the decision. Candidates come
        from dense search, BM25 keyword search, the time range, the speaker, the
        entity index and graph neighbours, all within the scope and filters; their
        signals are fused (weights in ``config.fusion``) into a relevance, then
        ranked with importance, recency and retention (weights in
        ``config.ranking``), measured at ``now`` (default: the memory's clock), and
        near-duplicates are dropped. ``stage=True`` also places the results in the
        staging zone of :attr:`working`. Generated memories (assistant and system
        text, consolidation output) rank at ``config.ranking.generated_weight`` of
        their score; ``include_generated=False`` leaves them out.
        Superseded facts, deprecated procedures and resolved intentions are left
        out. Every returned memory is reinforced (its retention stability grows).
        ``user_id=None`` reads only memories stored without a user; pass
        :data:`~ucma_core.ANY` to read across users.
        """
        text = check_content(query, max_chars=self.config.max_content_chars, what="query")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInputError(f"k must be an int in 1..1000, got {k!r}")
        filters = Filters(
            user_id=user_id if isinstance(user_id, AnyScope) else check_scope_id(user_id, "user_id"),
            agent_id=agent_id if isinstance(agent_id, AnyScope) else check_scope_id(agent_id, "agent_id"),
            session_id=session_id
            if isinstance(session_id, AnyScope)
            else check_scope_id(session_id, "session_id"),
            memory_types=tuple(MemoryType.parse(t) for t in (memory_types or ())),
            time_range=check_time_range(time_range),
            tags=check_strings(tags, "tags"),
            observed_only=not include_generated,
        )
        try:
            kind = None if route is None else RouteKind(route)
        except ValueError as e:
            known = ", ".join(r.value for r in RouteKind)
            raise InvalidInputError(f"unknown route {route!r}; expected one of: {known}") from e
        with self._lock:
            self._check_open()
            at = self.now() if now is None else to_epoch(now, "now")
            results = self._retriever.search(text, k=k, filters=filters, now=at, kind=kind)
        if stage:
            self.working.stage(results)
        return results

    # ------------------------------------------------------------------ reads
    def get(self, memory_id: str) -> MemoryRecord | None:
        """The stored record, or ``None`` if there is no such memory."""
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a str, not {type(memory_id).__name__}")
        with self._lock:
            self._check_open()
            if self._backend.graph.node(memory_id) is None or memory_id.startswith("entity:"):
                return None
            return self._backend.fetch([memory_id]).get(memory_id)

    def stats(self) -> dict[str, Any]:
        """Counts per memory type, graph size, sensory buffer and cache figures."""
        with self._lock:
            self._check_open()
            counts = {t.value: 0 for t in MemoryType}
            entities = 0
            for _, attrs in self._backend.graph.nodes():
                if attrs.get("kind") == "entity":
                    entities += 1
                elif attrs.get("memory_type") in counts:
                    counts[attrs["memory_type"]] += 1
            return {
                "memories": sum(counts.values()),
                "by_type": counts,
                "entities": entities,
                "graph_nodes": len(self._backend.graph),
                "graph_edges": self._backend.graph.edge_count(),
                "sensory_buffer": len(self.sensory),
                "sensory_total": self.sensory.total_ingested,
                "embedder": self._embedder.name,
                "dimension": self._embedder.dimension,
                "embedding_cache": {"hits": self._embedder.hits, "misses": self._embedder.misses},
                "session_id": self._session_id,
                "path": str(self._backend.folder),
            }

    # ------------------------------------------------------------------ forgetting
    def forget(self, memory_id: str) -> bool:
        """Delete one memory everywhere (Chroma, graph, indexes); ``False`` if it did not exist."""
        with self._lock:
            self._check_open()
            node = self._backend.graph.node(memory_id)
            if node is None or node.get("kind") != "memory":
                return False
            self._delete([memory_id], scrub=False)
            return True

    def forget_user(self, user_id: str) -> int:
        """Delete every memory of ``user_id`` and erase their text from the folder; returns how many.

        Chroma's log and free pages are scrubbed and the graph journal is compacted,
        so none of the user's text is left in the folder's files (embedded mode).
        """
        user = check_scope_id(user_id, "user_id")
        with self._lock:
            self._check_open()
            ids = [
                i
                for i, a in self._backend.graph.nodes()
                if a.get("kind") == "memory" and a.get("user_id") == user
            ]
            entity_ids = [
                i
                for i, a in self._backend.graph.nodes()
                if a.get("kind") == "entity" and a.get("user_id") == user
            ]
            self._delete(ids, scrub=True)
            with self._backend.graph.batch():
                for ent in entity_ids:
                    self._backend.graph.remove_node(ent)
            self._backend.graph.compact()
            self.sensory.forget_user(user)  # type: ignore[arg-type]
            return len(ids)

    def _delete(self, ids: list[str], *, scrub: bool) -> None:
        graph = self._backend.graph
        touched_entities: set[str] = set()
        with graph.batch():
            for memory_id in ids:
                attrs = graph.node(memory_id)
                if attrs is None:
                    continue
                if attrs.get("memory_type") == MemoryType.EPISODIC.value:
                    self._episodic.remove(memory_id)
                elif attrs.get("memory_type") == MemoryType.PROSPECTIVE.value:
                    self._prospective.unindex(memory_id)
                touched_entities.update(
                    v
                    for _, v, kind, _ in graph.edges_of(memory_id, direction="out")
                    if kind in ("subject", "object")
                )
            self._backend.delete(ids, scrub=scrub)
            for ent in touched_entities:
                if not graph.edges_of(ent):
                    graph.remove_node(ent)

    # ------------------------------------------------------------------ async partners
    aclose = _in_thread(close)
    anew_session = _in_thread(new_session)
    aobserve = _in_thread(observe)
    aobserve_many = _in_thread(observe_many)
    aremember = _in_thread(remember)
    aassert_fact = _in_thread(Knowledge.assert_fact)
    aadd_procedure = _in_thread(Knowledge.add_procedure)
    arecord_outcome = _in_thread(Knowledge.record_outcome)
    afind_procedures = _in_thread(Knowledge.find_procedures)
    alearn = _in_thread(Knowledge.learn)
    avalidate_learning = _in_thread(Knowledge.validate_learning)
    aintend = _in_thread(Knowledge.intend)
    aintentions = _in_thread(Knowledge.intentions)
    aresolve_intention = _in_thread(Knowledge.resolve_intention)
    alink = _in_thread(Knowledge.link)
    aget = _in_thread(get)
    afacts_about = _in_thread(Knowledge.facts_about)
    arelated_entities = _in_thread(Knowledge.related_entities)
    aneighbours = _in_thread(Knowledge.neighbours)
    astats = _in_thread(stats)
    aforget = _in_thread(forget)
    aforget_user = _in_thread(forget_user)
    aprune = _in_thread(Maintenance.prune)
    aexpire = _in_thread(Maintenance.expire)
    aconsolidate = _in_thread(Maintenance.consolidate)
    astart_consolidation = _in_thread(Maintenance.start_consolidation)
    astop_consolidation = _in_thread(Maintenance.stop_consolidation)
