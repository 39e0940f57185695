"""The public face of UCMA: one object per memory folder.

:class:`Memory` validates arguments, serialises access with a lock and delegates
to the stores; it holds no policy of its own. It is made of parts that share
:class:`~ucma_core.memory_base.MemoryBase`: writes and retrieval (here), reads
(:mod:`~ucma_core.reads`), explicit knowledge (:mod:`~ucma_core.knowledge`),
maintenance (:mod:`~ucma_core.maintenance`) and snapshots and restores
(:mod:`~ucma_core.transfer`). Every public method has an async
partner (``aobserve``, ``aremember``…) generated from it by
:func:`~ucma_core.memory_base.in_thread`, so the logic exists once.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ucma_core.corrections import link_corrections
from ucma_core.errors import InvalidInputError
from ucma_core.knowledge import Knowledge
from ucma_core.maintenance import Maintenance
from ucma_core.memory_base import in_thread
from ucma_core.owners import Owners
from ucma_core.progress import ProgressCallback, notify
from ucma_core.reads import Reads, check_key
from ucma_core.records import Intention, MemoryType, ObserveDefaults, RetrievalResult, Source
from ucma_core.retrieval.filters import Filters, check_metadata_filter
from ucma_core.retrieval.router import RouteKind
from ucma_core.scope import ANY, ScopeId
from ucma_core.scoped import ScopedMemory
from ucma_core.stores.episodic import EpisodeDraft
from ucma_core.stores.sensory import SensoryEntry
from ucma_core.transfer import Transfer
from ucma_core.validation import (
    check_content,
    check_metadata,
    check_names,
    check_scope_id,
    check_strings,
    check_time_range,
    check_unit,
    to_epoch,
)

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

__all__ = ["Memory"]

#: Items embedded at a time by :meth:`Memory.observe_many` when it reports progress.
_PROGRESS_BATCH = 256

_OBSERVE_FIELDS = frozenset(
    {
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
        "key",
        "keep",
    }
)


class Memory(Reads, Knowledge, Maintenance, Transfer, Owners):
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

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
        ...     mem.observe("I'm Ana and I prefer concise answers.", user_id="ana") is not None
        ...     mem.remember("how does Ana like answers?", user_id="ana")[0].memory_type.value
        True
        'episodic'
    """

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def scope(
        self, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> ScopedMemory:
        """A view of this memory bound to one user, agent and session.

        Every call on the view reads and writes in that scope (see
        :mod:`ucma_core.scope` for what ``None`` means), so a server with many
        conversations never relies on the memory's current session. Writes go to
        ``session_id`` when it is given, else to the memory's current session.

        Examples:
            >>> import tempfile
            >>> from ucma_core import Memory
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     ana = mem.scope(user_id="ana", session_id="s1")
            ...     _ = ana.observe("I moved to Lisbon in May.", keep=True)
            ...     [e.content for e in ana.history()]
            ['I moved to Lisbon in May.']
        """
        return ScopedMemory(self, user_id=user_id, agent_id=agent_id, session_id=session_id)

    # ------------------------------------------------------------------ observe
    def _draft(self, fields: Mapping[str, Any], now: float) -> tuple[EpisodeDraft, bool]:
        text = check_content(fields.get("content"), max_chars=self.config.max_content_chars)
        src = Source.parse(fields.get("source") or "user").value
        user = check_scope_id(fields.get("user_id"), "user_id")
        agent = check_scope_id(fields.get("agent_id"), "agent_id")
        session = self._write_session(fields.get("session_id"))
        limits = self.config.limits
        meta = check_metadata(fields.get("metadata"), limits=limits)
        timestamp = fields.get("timestamp")
        ts = now if timestamp is None else to_epoch(timestamp)
        importance = fields.get("importance")
        score = (
            check_unit(importance, "importance")
            if importance is not None
            else check_unit(self._scorer.score_importance(text, source=src), "provider importance")
        )
        key = fields.get("key")
        keep = fields.get("keep", False)
        if not isinstance(keep, bool):
            raise InvalidInputError(f"keep must be a bool, not {type(keep).__name__}")
        draft = EpisodeDraft(
            content=text,
            source=src,
            timestamp=ts,
            importance=score,
            user_id=user,
            agent_id=agent,
            session_id=session,
            metadata=meta,
            tags=check_strings(fields.get("tags"), "tags", max_items=limits.max_tags),
            participants=check_strings(
                fields.get("participants"), "participants", max_items=limits.max_participants
            ),
            key=None if key is None else check_key(key),
        )
        return draft, keep or score >= self.config.importance_threshold

    def _items(
        self, items: Iterable[str | Mapping[str, Any]], defaults: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        unknown = set(defaults) - _OBSERVE_FIELDS
        if unknown:
            raise InvalidInputError(f"unknown observe argument(s): {', '.join(sorted(unknown))}")
        if isinstance(items, (str, bytes, Mapping)):
            raise InvalidInputError(
                "observe_many takes a list of items (str or dict); for one item use observe()"
            )
        merged: list[dict[str, Any]] = []
        cap = self.config.limits.max_batch_items
        for n, item in enumerate(items):
            if n >= cap:
                raise InvalidInputError(
                    f"observe_many takes at most {cap:,} items per call "
                    "(MemoryConfig.limits.max_batch_items); split them into several calls"
                )
            if not isinstance(item, (str, Mapping)):
                raise InvalidInputError(f"item {n} must be a str or a dict, not {type(item).__name__}")
            fields = {"content": item} if isinstance(item, str) else dict(item)
            bad = set(fields) - _OBSERVE_FIELDS
            if bad:
                raise InvalidInputError(f"item {n} has unknown key(s): {', '.join(sorted(bad))}")
            merged.append(
                {**defaults, **{k: v for k, v in fields.items() if v is not None or k == "content"}}
            )
        return merged

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
        key: str | None = None,
        keep: bool = False,
    ) -> str | None:
        """Take in something that happened; return its memory id, or ``None`` if it was not kept.

        The content passes through the sensory buffer; if its importance (scored by
        the provider, or given) reaches ``config.importance_threshold``, or ``keep``
        is true, it becomes an episode. The id is returned only once the episode is
        durable: it survives a crash of this process. Pending intentions whose
        triggers occur in the content fire (see :meth:`intentions`) and, when
        :attr:`working` is in use, appear there as ``reminder`` items.

        ``key`` is the caller's own idempotency key (a chat message id, a Store
        key): if a memory with that key exists in this user and agent's scope,
        its id is returned and nothing is stored, also after a restart.
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
                    "key": key,
                    "keep": keep,
                }
            ]
        )[0]

    def observe_many(
        self,
        /,
        items: Iterable[str | Mapping[str, Any]],
        *,
        progress: ProgressCallback | None = None,
        **defaults: Unpack[ObserveDefaults],
    ) -> list[str | None]:
        """Observe many items with one embedding batch, one Chroma write and one journal append.

        Each item is a str or a dict of :meth:`observe`'s arguments; ``defaults``
        (e.g. ``user_id=...``) apply to items that do not set them. Every item is
        validated before anything is stored, so one bad item stores nothing. Items
        whose ``key`` is already stored (or repeated earlier in ``items``) return the
        existing id.

        ``progress`` (see :mod:`ucma_core.progress`; default: none) is called with
        ``(done, total, "observe")``, ``total`` being the number of items: the items
        are then embedded 256 at a time and ``done`` grows after
        each batch, reaching ``total`` once the items are durable.
        """
        merged = self._items(items, defaults)
        early = self._draft_early(merged, progress) if self.postgres is not None else None
        with self._lock:
            self._check_open()
            if early is None:
                now = self.now()
                drafts = [self._draft(fields, now) for fields in merged]
            else:
                now, drafts, early_vectors = early
            known: dict[tuple[str | None, str | None, str], str | None] = {}
            fresh: list[EpisodeDraft] = []
            for draft, keep in drafts:
                ref = None if draft.key is None else (draft.user_id, draft.agent_id, draft.key)
                if ref is not None and ref not in known:
                    known[ref] = self._stores.keyed(*ref)
                if keep and (ref is None or known[ref] is None):
                    fresh.append(draft)
                    if ref is not None:
                        known[ref] = ""  # taken by this batch: later repeats get its id
            if early is None:
                vectors = self._embed_drafts(fresh, len(drafts), progress)
            else:
                vectors = [early_vectors[id(d)] for d in fresh]
            fired: list[str] = []
            ids: list[str | None] = []
            with self._stores.graph.batch():
                stored = iter(self._stores.add_episodes(fresh, vectors))
                for draft, keep in drafts:
                    ref = None if draft.key is None else (draft.user_id, draft.agent_id, draft.key)
                    memory_id: str | None
                    if ref is not None and known[ref]:
                        memory_id = known[ref]
                    elif keep:
                        memory_id = next(stored).id
                        if ref is not None:
                            known[ref] = memory_id
                        fired += self._stores.prospective.fire(
                            memory_id, draft.content, draft.user_id, draft.agent_id
                        )
                    else:
                        memory_id = None
                    ids.append(memory_id)
            link_corrections(self._stores, ids)  # knowledge updates as they happen
            # only once the write is committed: a call that raised leaves no trace
            for (draft, _), memory_id in zip(drafts, ids, strict=True):
                self.sensory.ingest(
                    SensoryEntry(
                        content=draft.content,
                        source=draft.source,
                        timestamp=draft.timestamp,
                        received_at=now,
                        importance=draft.importance,
                        user_id=draft.user_id,
                        agent_id=draft.agent_id,
                        session_id=draft.session_id,
                        memory_id=memory_id,
                    )
                )
            self._remind(fired)
            notify(progress, len(drafts), len(drafts), "observe")
            return ids

    def _draft_early(
        self, merged: list[dict[str, Any]], progress: ProgressCallback | None
    ) -> tuple[float, list[tuple[EpisodeDraft, bool]], dict[int, list[float]]]:
        """A shared memory's drafts and vectors, made before taking the lock every worker
        waits on (scoring and embedding then run in parallel across workers): the drafts,
        and the vectors of those to keep by ``id(draft)``. An item whose key turns out to be
        stored already (found under the lock) was embedded for nothing."""
        self._check_open()
        now = self.now()
        drafts = [self._draft(fields, now) for fields in merged]
        kept = [draft for draft, keep in drafts if keep]
        vectors = self._embed_drafts(kept, len(drafts), progress)
        return now, drafts, {id(d): v for d, v in zip(kept, vectors, strict=True)}

    def _embed_drafts(
        self, fresh: list[EpisodeDraft], total: int, progress: ProgressCallback | None
    ) -> list[list[float]]:
        """The vectors of ``fresh``: in one call, or with ``progress`` in batches, reporting the
        items settled so far (those not embedded count as settled at once) short of ``total``."""
        if progress is None:
            return self._embedder.embed([d.content for d in fresh]) if fresh else []
        settled = total - len(fresh)
        notify(progress, 0, total, "observe")
        vectors: list[list[float]] = []
        for start in range(0, len(fresh), _PROGRESS_BATCH):
            vectors += self._embedder.embed([d.content for d in fresh[start : start + _PROGRESS_BATCH]])
            notify(progress, min(settled + len(vectors), total - 1), total, "observe")
        return vectors

    def upsert(
        self,
        key: str,
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
    ) -> str:
        """Store ``content`` under the caller's ``key``, replacing what was stored under it.

        A new key creates an episode (always kept) exactly as ``observe(..., key=key,
        keep=True)`` would; an existing one gets the new content, metadata, tags and
        time and is embedded again, keeping its id, links and retention. Returns the id.
        """
        fields = {
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
            "key": check_key(key),
            "keep": True,
        }
        early = None
        if self.postgres is not None:  # a shared memory embeds before taking the workers' lock
            self._check_open()
            ready, _ = self._draft(fields, self.now())
            early = (ready, self._embedder.embed([ready.content])[0])
        with self._lock:
            self._check_open()
            if early is None:
                draft, _ = self._draft(fields, self.now())
                vector = self._embedder.embed([draft.content])[0]
            else:
                draft, vector = early
            assert draft.key is not None
            existing = self._stores.keyed(draft.user_id, draft.agent_id, draft.key)
            if existing is None:
                with self._stores.graph.batch():
                    return self._stores.add_episodes([draft], [vector])[0].id
            return self._stores.replace_episode(existing, draft, vector).id

    def upsert_many(
        self, /, items: Iterable[Mapping[str, Any]], *, progress: ProgressCallback | None = None
    ) -> list[str]:
        """:meth:`upsert` for many items: one embedding batch for all of them, one Chroma write
        and one journal append for the new ones. Returns the id of each item, in order.

        Each item is a dict of :meth:`upsert`'s arguments (``key`` and ``content`` are
        required). Every item is validated before anything is stored, so one bad item
        stores nothing. When a key appears twice (in one user and agent's scope), the
        later item wins and both get the same id. Like :meth:`upsert`, and unlike
        :meth:`observe_many`, the items are stored data rather than input: they skip the
        sensory buffer and fire no intention (a bulk load of records must not push a
        conversation's turns out of the buffer, nor set off reminders).

        ``progress`` works as in :meth:`observe_many`.

        Examples:
            >>> import tempfile
            >>> from ucma_core.embedders import HashingEmbedder
            >>> with Memory(tempfile.mkdtemp(), embedder=HashingEmbedder()) as mem:
            ...     first = mem.upsert_many([{"key": "a", "content": "tea"}, {"key": "b", "content": "cake"}])
            ...     again = mem.upsert_many([{"key": "a", "content": "green tea"}])
            ...     again[0] == first[0], mem.get_by_key("a").content
            (True, 'green tea')
        """
        if isinstance(items, (str, bytes, Mapping)):
            raise InvalidInputError("upsert_many takes a list of dicts; for one item use upsert()")
        listed = list(items)
        for n, item in enumerate(listed):
            if not isinstance(item, Mapping) or "key" not in item or "content" not in item:
                raise InvalidInputError(f"item {n} must be a dict with at least 'key' and 'content'")
            if "keep" in item:
                raise InvalidInputError(f"item {n} sets 'keep'; upsert always keeps what it stores")
            check_key(item["key"])
        merged = self._items([{**item, "keep": True} for item in listed], {})
        early = self._draft_early(merged, progress) if self.postgres is not None else None
        with self._lock:
            self._check_open()
            if early is None:
                now = self.now()
                drafts = [draft for draft, _ in (self._draft(fields, now) for fields in merged)]
            else:
                drafts = [draft for draft, _ in early[1]]
            # the later item of a key wins; each key is embedded and written once
            last: dict[tuple[str | None, str | None, str], EpisodeDraft] = {}
            for draft in drafts:
                assert draft.key is not None
                last[(draft.user_id, draft.agent_id, draft.key)] = draft
            unique = list(last.values())
            if early is None:
                vectors = self._embed_drafts(unique, len(drafts), progress)
            else:
                vectors = [early[2][id(d)] for d in unique]
            ids: dict[tuple[str | None, str | None, str], str] = {}
            fresh: list[tuple[EpisodeDraft, list[float]]] = []
            for (ref, draft), vector in zip(last.items(), vectors, strict=True):
                existing = self._stores.keyed(*ref)
                if existing is None:
                    fresh.append((draft, vector))
                else:
                    ids[ref] = self._stores.replace_episode(existing, draft, vector).id
            if fresh:
                with self._stores.graph.batch():
                    stored = self._stores.add_episodes([d for d, _ in fresh], [v for _, v in fresh])
                for (draft, _), episode in zip(fresh, stored, strict=True):
                    assert draft.key is not None
                    ids[(draft.user_id, draft.agent_id, draft.key)] = episode.id
            notify(progress, len(drafts), len(drafts), "observe")
            return [ids[(d.user_id, d.agent_id, d.key)] for d in drafts if d.key is not None]

    def _remind(self, intention_ids: list[str]) -> None:
        """Put intentions that just fired into working memory (if this memory has one in use)."""
        if not intention_ids or self._working is None:
            return
        for intention in self._stores.fetch(intention_ids).values():
            if isinstance(intention, Intention):
                self._working.add(
                    intention.content,
                    zone="active",
                    importance=intention.priority,
                    slot="reminder",
                    item_id=f"intention:{intention.id}",
                    memory_id=intention.id,
                    user_id=intention.user_id,
                    agent_id=intention.agent_id,
                    session_id=intention.session_id,
                )

    # ------------------------------------------------------------------ remember
    def remember(
        self,
        query: str,
        *,
        k: int | None = None,
        user_id: ScopeId = None,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
        memory_types: Sequence[MemoryType | str] | None = None,
        time_range: tuple[datetime | float, datetime | float] | None = None,
        tags: Sequence[str] | None = None,
        metadata_filter: Mapping[str, Any] | None = None,
        now: datetime | float | None = None,
        route: RouteKind | str | None = None,
        stage: bool = False,
        include_generated: bool = True,
        diversify: bool = True,
        reinforce: bool = True,
    ) -> list[RetrievalResult]:
        """The ``k`` memories most worth recalling for ``query``, best first.

        ``k`` left unset returns 10, or 20 for a set question ("which places …", "all …",
        "how many …", "list …", "what has Ana said about …": see
        :mod:`ucma_core.retrieval.sets`); a ``k`` given is always kept.

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
        out. Every returned memory is recorded as retrieved: its access count grows
        and the forgetting engine counts the retrieval as a review, but its
        ``stability`` and ``last_access`` (what the rank reads) stay as they were,
        so no answer depends on the questions asked before it; pass what the app
        used to :meth:`reinforce`. ``reinforce=False`` makes the call a look that
        leaves retention as it was (for inspection tools: ``ucma search``, plots).
        Results are in score order; exact ties go to the newer memory, then the id.

        Scope: ``user_id=None`` reads only memories stored without a user; pass
        :data:`~ucma_core.ANY` to read across users (see :mod:`ucma_core.scope`).
        ``tags`` keeps memories carrying any of them. ``metadata_filter`` filters
        the caller's own top-level metadata values: ``{"topic": "travel"}``
        (equality) or operator dicts ``{"turn": {"$gte": 3}}`` with ``$eq``,
        ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$in``, ``$nin``; several
        keys must all hold.

        ``diversify=False`` returns the ``k`` best in rank order without dropping
        near-duplicates (MMR is skipped): for callers, like a key-value store's
        search, that must see every matching item.
        """
        if not isinstance(diversify, bool):
            raise InvalidInputError(f"diversify must be a bool, not {type(diversify).__name__}")
        if not isinstance(reinforce, bool):
            raise InvalidInputError(f"reinforce must be a bool, not {type(reinforce).__name__}")
        text = check_content(query, max_chars=self.config.max_content_chars, what="query")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000):
            raise InvalidInputError(f"k must be an int in 1..1000, got {k!r}")
        filters = Filters(
            scope=self._scope(user_id, agent_id, session_id),
            memory_types=tuple(MemoryType.parse(t) for t in check_names(memory_types, "memory_types")),
            time_range=check_time_range(time_range),
            tags=check_strings(tags, "tags"),
            observed_only=not include_generated,
            metadata=check_metadata_filter(metadata_filter),
        )
        try:
            kind = None if route is None else RouteKind(route)
        except ValueError as e:
            known = ", ".join(r.value for r in RouteKind)
            raise InvalidInputError(f"unknown route {route!r}; expected one of: {known}") from e
        with self._read_lock:
            self._check_open(settle=False)  # its access marks wait (ranking never reads them)
            at = self.now() if now is None else to_epoch(now, "now")
            results = self._retriever.search(
                text, k=k, filters=filters, now=at, kind=kind, diversify=diversify, reinforce=False
            )
            if reinforce and results:
                self._stores.retrieved([r.id for r in results], at)
        if stage:
            self.working.stage(results)
        return results

    # ------------------------------------------------------------------ forgetting
    def forget(
        self, memory_id: str, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> bool:
        """Delete one memory everywhere (Chroma, graph, indexes); ``False`` if there is no
        such memory in the scope given (by default: any user's)."""
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a str, not {type(memory_id).__name__}")
        scope = self._scope(user_id, agent_id, session_id)
        with self._lock:
            self._check_open()
            if self._stores.memory_node(memory_id, scope) is None:
                return False
            self._stores.delete([memory_id], scrub=False)
            return True

    def forget_session(
        self, session_id: str, *, user_id: str | None = None, agent_id: ScopeId = None, scrub: bool = False
    ) -> int:
        """Delete every memory of one session of ``user_id`` (``None``: stored without a
        user); returns how many.

        What is attached (see :meth:`attach`) forgets the session first: the LangGraph
        checkpointer deletes the threads that ran in it. ``scrub=True`` also erases the
        session's text from the folder's files, as :meth:`forget_user` does (Chroma's log
        and free pages, the keyword index, the graph journal).
        """
        session = check_scope_id(session_id, "session_id")
        if session is None:
            raise InvalidInputError("forget_session needs a session_id")
        if not isinstance(scrub, bool):
            raise InvalidInputError(f"scrub must be a bool, not {type(scrub).__name__}")
        scope = self._scope(user_id, agent_id, session)
        agent = agent_id if isinstance(agent_id, str) else None
        self._forget_attached({"session_id": session, "user_id": scope.user_id, "agent_id": agent})
        with self._lock:
            self._check_open()
            return self._stores.forget_scope(scope, scrub=scrub)

    def forget_user(self, user_id: str) -> int:
        """Delete every memory of ``user_id`` and erase their text from the folder; returns how many.

        Chroma's log and free pages are scrubbed and the graph journal is compacted,
        so none of the user's text is left in the folder's files (embedded mode). What is
        attached (see :meth:`attach`) forgets the user first: the LangGraph checkpointer
        deletes the user's threads and scrubs its database.
        """
        if user_id is None:
            raise InvalidInputError(
                "forget_user needs a user id; memories stored without a user are removed with "
                "forget_session() or expire(user_id=None)"
            )
        user = check_scope_id(user_id, "user_id")
        self._forget_attached({"user_id": user})
        with self._lock:
            self._check_open()
            self.sensory.forget_user(user)  # type: ignore[arg-type]
            if self._working is not None:
                self._working.forget_user(user)  # type: ignore[arg-type]
            return self._stores.forget_scope(self._scope(user, None), scrub=True)

    # ------------------------------------------------------------------ async partners
    aclose = in_thread(Reads.close)
    aflush = in_thread(Reads.flush)
    anew_session = in_thread(Reads.new_session)
    aobserve = in_thread(observe)
    aobserve_many = in_thread(observe_many)
    aupsert = in_thread(upsert)
    aupsert_many = in_thread(upsert_many)
    aremember = in_thread(remember)
    aget = in_thread(Reads.get)
    aget_by_key = in_thread(Reads.get_by_key)
    ahistory = in_thread(Reads.history)
    alist_memories = in_thread(Reads.list_memories)
    alist_scopes = in_thread(Reads.list_scopes)
    astats = in_thread(Reads.stats)
    aforget = in_thread(forget)
    aforget_session = in_thread(forget_session)
    aforget_user = in_thread(forget_user)
    aassert_fact = in_thread(Knowledge.assert_fact)
    aadd_procedure = in_thread(Knowledge.add_procedure)
    arecord_outcome = in_thread(Knowledge.record_outcome)
    afind_procedures = in_thread(Knowledge.find_procedures)
    alearn = in_thread(Knowledge.learn)
    avalidate_learning = in_thread(Knowledge.validate_learning)
    aintend = in_thread(Knowledge.intend)
    aintentions = in_thread(Knowledge.intentions)
    aresolve_intention = in_thread(Knowledge.resolve_intention)
    apin = in_thread(Knowledge.pin)
    aunpin = in_thread(Knowledge.unpin)
    areinforce = in_thread(Knowledge.reinforce)
    alink = in_thread(Knowledge.link)
    afacts_about = in_thread(Knowledge.facts_about)
    arelated_entities = in_thread(Knowledge.related_entities)
    aneighbours = in_thread(Knowledge.neighbours)
    aedges = in_thread(Knowledge.edges)
    averify = in_thread(Maintenance.verify)
    askipped = in_thread(Maintenance.skipped)
    arecord_skipped = in_thread(Maintenance.record_skipped)
    aprune = in_thread(Maintenance.prune)
    aexpire = in_thread(Maintenance.expire)
    arekey = in_thread(Maintenance.rekey)
    aconsolidate = in_thread(Maintenance.consolidate)
    astart_consolidation = in_thread(Maintenance.start_consolidation)
    astop_consolidation = in_thread(Maintenance.stop_consolidation)
    arestore = in_thread(Transfer.restore)
    aattach = in_thread(Owners.attach)
    adetach = in_thread(Owners.detach)
    acheck_space = in_thread(Owners.check_space)
