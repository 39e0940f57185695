"""LangGraph's long-term memory API (``BaseStore``) on a UCMA memory.

Every Store item is one UCMA memory, written with ``Memory.upsert`` under a key
derived from its namespace and key, in the user (and agent) scope that
:class:`~ucma_langchain.langgraph.namespaces.NamespaceRule` reads from the
namespace, in the session ``"langgraph-store"``. So Store items are memories like
any other: ``remember`` finds them for their user, ``forget_user`` deletes them,
and a search with a query goes through UCMA's retrieval (router, dense, keyword,
entity and graph signals, ranking) inside the namespace prefix.

Behaviour, as LangGraph documents it for its stores:

* a value is a JSON dict and comes back exactly as it was put;
* ``search`` with a query ranks items by UCMA's fused retrieval (the order), and
  each item's ``score`` is the cosine similarity of the query and the item's
  indexed text under the memory's embedder, as ``InMemoryStore`` reports it: a
  score threshold means the same across queries and stores (the order of the
  results need not follow the score);
* ``search`` without a query lists items in insertion order (``InMemoryStore``'s
  order; items of several namespaces interleave by creation time);
  ``filter`` matches value fields (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``,
  ``$lte``; nested dicts and lists by equality), ``limit`` / ``offset`` page;
* ``index`` (per item, or ``index={"fields": [...]}`` for the store) chooses the
  text that is embedded; ``index=False`` keeps an item out of query results
  (as in ``InMemoryStore``, unindexed matches fill a page that scored items do not);
* ``ttl`` (minutes) and ``TTLConfig`` (``default_ttl``, ``refresh_on_read``,
  ``sweep_interval_minutes``): an expired item is never returned and is deleted
  when met or when the store sweeps; reads refresh the TTL unless told not to.
  Times come from the memory's clock.

``created_at`` is kept when an item is updated (as LangGraph's SQL stores do).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from ucma_core import ANY, Memory
from ucma_core.errors import ConfigurationError, InvalidInputError
from ucma_core.records import MemoryRecord
from ucma_langchain.langgraph import items as fields
from ucma_langchain.langgraph.bulk import write_items
from ucma_langchain.langgraph.namespaces import (
    NamespaceRule,
    NamespaceScope,
    ScopeRule,
    check_namespace,
    item_key,
    prefix_tag,
    prefix_tags,
)
from ucma_langchain.langgraph.ops import check_op, check_path, check_ttl

__all__ = ["STORE_SESSION", "UCMAStore"]

#: The UCMA session of every Store item.
STORE_SESSION = "langgraph-store"

_PAGE = 500
_MAX_K = 1000


def _matches_path(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInputError(
            f"unknown namespace match type {condition.match_type!r}; use prefix or suffix"
        )
    return all(p == "*" or n == p for n, p in pairs)


class UCMAStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are UCMA memories.

    Args:
        memory: the memory that holds the items; its embedder embeds them.
        index: ``{"fields": [...]}``: the value paths embedded for query search
            (LangGraph's path syntax; default ``["$"]``, the whole value). ``dims``
            must match the memory's embedder if given; ``embed`` is refused (give the
            memory the embedder instead).
        ttl: LangGraph's ``TTLConfig`` (``default_ttl``, ``refresh_on_read``,
            ``sweep_interval_minutes``).
        namespace_rule: namespace → UCMA user and agent (default
            :class:`~ucma_langchain.langgraph.namespaces.NamespaceRule`).
        source: the UCMA source of Store items (default ``"environment"``: written
            by the application, observed rather than generated).
        importance: the importance items are stored with. The default ``1.0`` is
            above ``config.forgetting.importance_protection``, so UCMA's forgetting
            engine never deletes a Store item; lower it to let unused items fade.

    Examples:
        >>> import tempfile
        >>> from ucma_core import Memory
        >>> from ucma_core.embedders import HashingEmbedder
        >>> mem = Memory(tempfile.mkdtemp(), embedder=HashingEmbedder())
        >>> store = UCMAStore(mem)
        >>> store.put(("memories", "ana"), "tea", {"text": "Ana drinks green tea"})
        >>> store.get(("memories", "ana"), "tea").value
        {'text': 'Ana drinks green tea'}
        >>> [i.key for i in store.search(("memories",), query="what does Ana drink?")]
        ['tea']
        >>> mem.close()
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        namespace_rule: ScopeRule | None = None,
        source: str = "environment",
        importance: float = 1.0,
    ) -> None:
        if not isinstance(memory, Memory):
            raise InvalidInputError(f"memory must be a ucma_core.Memory, not {type(memory).__name__}")
        self.memory = memory
        config: dict[str, Any] = dict(index or {})
        if "embed" in config:
            raise ConfigurationError(
                "UCMAStore embeds with the memory's embedder; pass the embedder to Memory(..., embedder=...) "
                "and give UCMAStore only index={'fields': [...]}"
            )
        dims = config.get("dims")
        if dims is not None and dims != memory.embedder.dimension:
            raise ConfigurationError(
                f"index dims {dims} do not match the memory's embedder ({memory.embedder.name}, "
                f"{memory.embedder.dimension} dimensions)"
            )
        raw_fields = config.get("fields") or ["$"]
        if isinstance(raw_fields, str) or not all(isinstance(f, str) and f for f in raw_fields):
            raise InvalidInputError(f"index fields must be a list of non-empty str paths, got {raw_fields!r}")
        self.index_fields: list[str] = list(raw_fields)
        self.index_config: IndexConfig = {"dims": memory.embedder.dimension, "fields": self.index_fields}
        self.ttl_config = dict(ttl) if ttl else None  # type: ignore[assignment]
        check_ttl((ttl or {}).get("default_ttl"))
        self.namespace_rule: ScopeRule = namespace_rule or NamespaceRule()
        self.source = source
        self.importance = importance
        self._lock = threading.RLock()
        self._last_stamp = 0.0
        self._last_sweep: float | None = None
        self._has_ttl: bool | None = None

    # ------------------------------------------------------------------ helpers
    def _scope(self, namespace: tuple[str, ...]) -> NamespaceScope:
        user, agent = self.namespace_rule(namespace)
        return NamespaceScope(user, agent)

    def _stamp(self) -> float:
        """Now, strictly after the previous stamp (so insertion order is a time order)."""
        now = self.memory.now()
        self._last_stamp = max(now, self._last_stamp + 1e-6)
        return self._last_stamp

    def _record(self, namespace: tuple[str, ...], key: str) -> MemoryRecord | None:
        scope = self._scope(namespace)
        record = self.memory.get_by_key(
            item_key(namespace, key), user_id=scope.user_id, agent_id=scope.agent_id
        )
        if record is None:
            return None
        meta = record.metadata
        if meta.get(fields.KEY) != key or tuple(meta.get(fields.NAMESPACE) or ()) != namespace:
            return None
        return record

    def _expired(self, record: MemoryRecord, now: float) -> bool:
        expires = record.metadata.get(fields.EXPIRES)
        return isinstance(expires, (int, float)) and expires <= now

    def _live(self, records: Iterable[MemoryRecord], now: float) -> list[MemoryRecord]:
        """The records that have not expired; expired ones are deleted on the way."""
        out = []
        for record in records:
            if self._expired(record, now):
                self.memory.forget(record.id)
            else:
                out.append(record)
        return out

    def _fields(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        *,
        created: float,
        updated: float,
        indexed_text: str,
        ttl: float | None,
        now: float,
    ) -> dict[str, Any]:
        """The arguments of ``Memory.upsert`` (an ``upsert_many`` item) for one item."""
        scope = self._scope(namespace)
        indexed = bool(indexed_text.strip())
        limit = self.memory.config.max_content_chars
        content = indexed_text if indexed else json.dumps(value, ensure_ascii=False)
        if len(content) > limit:
            content = content[: limit - 1] + "…"
        if not content.strip():
            content = f"{'/'.join(namespace)}/{key}"
        metadata: dict[str, Any] = {
            fields.NAMESPACE: list(namespace),
            fields.KEY: key,
            fields.VALUE: fields.encode_value(value),
            fields.CREATED: created,
            fields.UPDATED: updated,
            fields.INDEXED: indexed,
        }
        if ttl is not None:
            self._has_ttl = True
            metadata[fields.TTL] = ttl
            metadata[fields.EXPIRES] = now + ttl * 60.0
        return {
            "key": item_key(namespace, key),
            "content": content,
            "source": self.source,
            "user_id": scope.user_id,
            "agent_id": scope.agent_id,
            "session_id": STORE_SESSION,
            "timestamp": created,
            "metadata": metadata,
            "tags": prefix_tags(namespace),
            "importance": self.importance,
        }

    def _write(self, namespace: tuple[str, ...], key: str, value: dict[str, Any], **how: Any) -> None:
        self.memory.upsert(**self._fields(namespace, key, value, **how))

    def _refresh(self, records: Sequence[MemoryRecord], now: float) -> None:
        """Restart the TTL of these records (reads refresh unless told not to)."""
        for record in records:
            meta = record.metadata
            ttl = meta.get(fields.TTL)
            if not isinstance(ttl, (int, float)):
                continue
            namespace = tuple(meta[fields.NAMESPACE])
            self._write(
                namespace,
                meta[fields.KEY],
                fields.stored_value(meta),
                created=float(meta[fields.CREATED]),
                updated=float(meta[fields.UPDATED]),
                indexed_text=record.content if meta.get(fields.INDEXED) else "",
                ttl=float(ttl),
                now=now,
            )

    def _scan(
        self, prefix: tuple[str, ...], metadata_filter: Mapping[str, Any] | None = None
    ) -> Iterable[MemoryRecord]:
        """Every item under ``prefix`` in insertion order, a page at a time."""
        offset = 0
        while True:
            page = self.memory.list_memories(
                user_id=ANY,
                tags=[prefix_tag(prefix)],
                metadata_filter=metadata_filter,
                limit=_PAGE,
                offset=offset,
                newest_first=False,
            )
            yield from page
            if len(page) < _PAGE:
                return
            offset += _PAGE

    # ------------------------------------------------------------------ TTL
    def sweep_ttl(self) -> int:
        """Delete every expired item now; returns how many."""
        with self._lock:
            now = self.memory.now()
            expired = list(self._scan((), {fields.EXPIRES: {"$lte": now}}))
            for record in expired:
                self.memory.forget(record.id)
            self._last_sweep = now
            return len(expired)

    def _maybe_sweep(self) -> None:
        """Sweep before a batch when items with a TTL exist: every batch, or at most once per
        ``sweep_interval_minutes`` if that is set (reads still skip expired items)."""
        if self._has_ttl is None:
            self._has_ttl = bool((self.ttl_config or {}).get("default_ttl")) or bool(
                self.memory.list_memories(
                    user_id=ANY, tags=[prefix_tag(())], metadata_filter={fields.TTL: {"$gt": 0}}, limit=1
                )
            )
        if not self._has_ttl:
            return
        interval = (self.ttl_config or {}).get("sweep_interval_minutes")
        now = self.memory.now()
        if self._last_sweep is None or interval is None or now - self._last_sweep >= float(interval) * 60.0:
            self.sweep_ttl()

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run Store operations: reads first, in order, then the writes (the last write to
        one item wins), as LangGraph's stores do.

        Every op is checked before any runs: an op no store could run (see
        :mod:`~ucma_langchain.langgraph.ops`) refuses the whole batch and nothing is
        written. As in LangGraph, the reserved root label ``"langgraph"`` is refused by
        :meth:`put` only, not here."""
        op_list = list(ops)
        with self._lock:
            self._maybe_sweep()
            checked = [check_op(op, self._scope) for op in op_list]
            results: list[Result] = []
            writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in checked:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                else:
                    writes[(op.namespace, op.key)] = op  # the last write wins, at the first one's place
                    results.append(None)
            items = [item for op in writes.values() if (item := self._put(op)) is not None]
            # in bulk: one embedding batch and one write per chunk, the next chunk embedded
            # meanwhile (stored data, not input: no sensory buffer, no intentions fired)
            write_items(self.memory, items)
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` (the same code, in a worker thread)."""
        op_list = list(ops)
        return await asyncio.to_thread(self.batch, op_list)

    def _get(self, op: GetOp) -> Item | None:
        record = self._record(op.namespace, op.key)
        if record is None:
            return None
        now = self.memory.now()
        if not self._live([record], now):
            return None
        if op.refresh_ttl:
            self._refresh([record], now)
        return fields.to_item(record)

    def _put(self, op: PutOp) -> dict[str, Any] | None:
        """Delete the item now, or return what to write (the batch writes items together)."""
        existing = self._record(op.namespace, op.key)
        now = self.memory.now()
        if op.value is None:
            if existing is not None:
                self.memory.forget(existing.id)
            return None
        if existing is not None and self._expired(existing, now):
            self.memory.forget(existing.id)
            existing = None
        stamp = self._stamp()
        created = float(existing.metadata[fields.CREATED]) if existing is not None else stamp
        paths = self.index_fields if op.index is None else ([] if op.index is False else list(op.index))
        item = self._fields(
            op.namespace,
            op.key,
            dict(op.value),
            created=created,
            updated=stamp,
            indexed_text=fields.indexed_text(op.value, paths) if paths else "",
            ttl=op.ttl,
            now=now,
        )
        return item

    def _search(self, op: SearchOp) -> list[SearchItem]:
        now = self.memory.now()
        want = op.offset + op.limit
        if op.query is None:
            if op.filter is None:
                while True:
                    page = self.memory.list_memories(
                        user_id=ANY,
                        tags=[prefix_tag(op.namespace_prefix)],
                        limit=op.limit,
                        offset=op.offset,
                        newest_first=False,
                    )
                    found = self._live(page, now)
                    if len(found) == len(page):
                        break
            else:
                matching: list[MemoryRecord] = []
                for record in self._scan(op.namespace_prefix):
                    if len(matching) >= want:
                        break
                    if fields.value_matches(fields.stored_value(record.metadata), op.filter):
                        matching.append(record)
                found = self._live(matching[op.offset :], now)
            if op.refresh_ttl:
                self._refresh(found, now)
            return [fields.to_item(r, search=True) for r in found]  # type: ignore[misc]
        scored = self._ranked(op, want)
        stored = {r.id: v for r, _, v in scored}
        kept: list[tuple[MemoryRecord, float | None]] = [(r, s) for r, s, _ in scored[op.offset : want]]
        if len(kept) < op.limit:
            for record in self._scan(op.namespace_prefix, {fields.INDEXED: False}):
                if len(kept) >= op.limit:
                    break
                if op.filter is None or fields.value_matches(fields.stored_value(record.metadata), op.filter):
                    kept.append((record, None))
        live = {r.id for r in self._live([r for r, _ in kept], now)}
        kept = [(r, s) for r, s in kept if r.id in live]
        if op.refresh_ttl:
            self._refresh([r for r, _ in kept], now)
        similarity = self._similarities(op.query, [r for r, s in kept if s is not None], stored)
        return [
            fields.to_item(r, score=None if s is None else similarity[r.id], search=True)  # type: ignore[misc]
            for r, s in kept
        ]

    def _similarities(
        self, query: str, records: Sequence[MemoryRecord], stored: Mapping[str, np.ndarray | None]
    ) -> dict[str, float]:
        """The cosine similarity of ``query`` and each record's indexed text under the memory's
        embedder (the score ``InMemoryStore`` reports), by record id. The query's vector is the
        one retrieval just embedded (the embedder's cache answers), the records' vectors those
        retrieval read (``stored``); a record without one has its text embedded."""
        if not records:
            return {}
        unread = [r for r in records if stored.get(r.id) is None]
        embedded = self.memory.embedder.embed([query, *(r.content for r in unread)])
        own = dict(zip((r.id for r in unread), embedded[1:], strict=True))
        matrix = np.asarray([own[r.id] if r.id in own else stored[r.id] for r in records], dtype=float)
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(embedded[0]))
        norms[norms == 0] = 1.0
        scores = (matrix @ np.asarray(embedded[0], dtype=float)) / norms
        return {r.id: float(score) for r, score in zip(records, scores, strict=True)}

    def _ranked(self, op: SearchOp, want: int) -> list[tuple[MemoryRecord, float, np.ndarray | None]]:
        """Indexed items under the prefix ranked by UCMA retrieval, filtered, best first."""
        assert op.query is not None
        k = min(_MAX_K, max(want, 1))
        while True:
            results = self.memory.remember(
                op.query,
                k=k,
                user_id=ANY,
                tags=[prefix_tag(op.namespace_prefix)],
                metadata_filter={fields.INDEXED: True},
                session_id=STORE_SESSION,
                diversify=False,  # a Store search returns every matching item, duplicates too
            )
            ranked = [
                (r.record, float(r.score), r.vector)
                for r in results
                if op.filter is None
                or fields.value_matches(fields.stored_value(r.record.metadata), op.filter)
            ]
            if len(ranked) >= want or len(results) < k or k >= _MAX_K:
                return ranked
            k = min(_MAX_K, k * 4)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        exact_prefix: tuple[str, ...] = ()
        for condition in conditions:
            if condition.match_type == "prefix" and "*" not in condition.path:
                exact_prefix = tuple(condition.path)
                break
        now = self.memory.now()
        namespaces = {tuple(r.metadata[fields.NAMESPACE]) for r in self._live(self._scan(exact_prefix), now)}
        matching = [ns for ns in namespaces if all(_matches_path(ns, c) for c in conditions)]
        if op.max_depth is not None:
            matching = [ns[: op.max_depth] for ns in matching]
        return sorted(set(matching))[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ public API
    # The BaseStore methods, with UCMA's namespace errors (also LangGraph's
    # InvalidNamespaceError) raised before anything runs.
    def get(self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None) -> Item | None:
        """The item, or ``None``; an expired item is ``None``."""
        return super().get(check_namespace(namespace), key, refresh_ttl=refresh_ttl)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async :meth:`get`."""
        return await super().aget(check_namespace(namespace), key, refresh_ttl=refresh_ttl)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Store or replace an item (``index`` and ``ttl`` as in LangGraph)."""
        super().put(check_namespace(namespace, writing=True), key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async :meth:`put`."""
        await super().aput(check_namespace(namespace, writing=True), key, value, index, ttl=ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete an item (nothing happens if there is none)."""
        super().delete(check_namespace(namespace), key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async :meth:`delete`."""
        await super().adelete(check_namespace(namespace), key)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under ``namespace_prefix``: ranked by UCMA retrieval for ``query``, else in
        insertion order; ``filter`` on value fields; ``limit`` / ``offset`` page."""
        prefix = check_namespace(namespace_prefix, what="namespace prefix", allow_empty=True)
        return super().search(
            prefix, query=query, filter=filter, limit=limit, offset=offset, refresh_ttl=refresh_ttl
        )

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async :meth:`search`."""
        prefix = check_namespace(namespace_prefix, what="namespace prefix", allow_empty=True)
        return await super().asearch(
            prefix, query=query, filter=filter, limit=limit, offset=offset, refresh_ttl=refresh_ttl
        )

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces holding items, sorted; ``prefix`` / ``suffix`` may use ``"*"``."""
        check_path(prefix, "prefix")
        check_path(suffix, "suffix")
        return super().list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async :meth:`list_namespaces`."""
        check_path(prefix, "prefix")
        check_path(suffix, "suffix")
        return await super().alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )
