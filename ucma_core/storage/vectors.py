"""Records and vectors in Chroma: embedded ``PersistentClient`` or a server's ``HttpClient``.

Both clients go through the same :class:`VectorStore`; only :func:`open_chroma`
differs. UCMA always computes vectors itself, so the collection is created with no
embedding function and Chroma never tries to download a model.

Three safeguards sit between UCMA and Chroma:

* **Pinned settings.** Chroma's ``Settings`` read environment variables and a
  ``.env`` file in the working directory, and one of them (``CHROMA_API_IMPL``) can
  switch an embedded client to a Python code path that loads ``index_metadata.pickle``
  with ``pickle.load``. :func:`chroma_settings` passes every field explicitly (its
  declared default, telemetry off) and no ``.env``, so nothing outside the program
  changes which code Chroma runs.
* **Bounded calls.** Every call runs on a worker thread and is abandoned after
  ``LimitsConfig.chroma_timeout_seconds`` with a :class:`StorageError`: a full disk can
  make Chroma wait forever, and the memory's lock must not wait with it.
* **A fresh client after a failure.** An embedded client that failed (typically on a
  full disk) can hang on its next write even once space is back, so after any error
  the client is closed and reopened before the next call.

Writes larger than Chroma's maximum batch size are split into batches. Vectors read
are kept in a bounded :class:`~ucma_core.storage.vectorcache.VectorCache` (``cache_size``
entries) that every write of their ids invalidates, so :meth:`VectorStore.vectors_of`
asks Chroma only for the vectors it has not seen, and a filtered search repeated with no
write in between can skip Chroma (:mod:`~ucma_core.storage.wheresets`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ucma_core.config import ChromaConfig
from ucma_core.errors import StorageError
from ucma_core.storage.chromafiles import is_segment_dir, remove_unused_segments, scrub_deleted
from ucma_core.storage.chromathread import CallAbandoned, CallTimeout, ChromaThread
from ucma_core.storage.diskspace import storage_error
from ucma_core.storage.vectorcache import DEFAULT_MAX_BYTES, VectorCache
from ucma_core.storage.wheresets import WhereSets, nearest_among, owner_of

__all__ = ["CollectionProblem", "VectorHit", "VectorStore", "chroma_settings", "open_chroma"]

Metadata = dict[str, str | int | float | bool]
Where = dict[str, Any]
T = TypeVar("T")

#: Collection metadata key holding the id of the folder the collection belongs to.
FOLDER_KEY = "ucma:folder"


@dataclass(frozen=True)
class VectorHit:
    """A stored record as a search or lookup returns it (``distance`` is cosine distance;
    ``nan`` for a lookup by id; ``vector`` is a float32 array when asked for)."""

    id: str
    distance: float
    document: str
    metadata: Metadata
    vector: np.ndarray | None = None


def chroma_settings() -> Any:
    """Chroma ``Settings`` with every field given explicitly (so no environment variable or
    ``.env`` file can change them), telemetry off and resets forbidden."""
    from chromadb.config import Settings

    fields = {
        name: info.get_default(call_default_factory=True) for name, info in Settings.model_fields.items()
    }
    fields.update(anonymized_telemetry=False, allow_reset=False)
    build: Any = Settings  # pydantic-settings' ``_env_file`` is not in the stubs
    return build(_env_file=None, **fields)


def open_chroma(config: ChromaConfig, folder: Path) -> Any:
    """Return a Chroma client: a server's ``HttpClient`` if ``config.host`` is set, else an
    embedded ``PersistentClient`` in ``folder/chroma``."""
    import chromadb

    settings = chroma_settings()
    try:
        if config.host:
            return chromadb.HttpClient(host=config.host, port=config.port, ssl=config.ssl, settings=settings)
        return chromadb.PersistentClient(path=str(folder / "chroma"), settings=settings)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # chromadb raises assorted types, a damaged file a Rust panic
        where = f"{config.host}:{config.port}" if config.host else str(folder / "chroma")
        raise storage_error(e, f"opening Chroma at {where}") from e


class CollectionProblem(StorageError):
    """The collection a folder names does not exist or belongs to another folder."""


class VectorStore:
    """One Chroma collection holding every memory's text, vector and filter metadata."""

    def __init__(
        self,
        config: ChromaConfig,
        folder: Path,
        *,
        timeout: float = 120.0,
        max_batch: int = 5000,
        cache_size: int = 0,
        cache_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._config = config
        #: Vectors read recently, by id (see :mod:`~ucma_core.storage.vectorcache`).
        self.cache = VectorCache(cache_size, max_bytes=cache_bytes)
        #: Ids of the ``where`` clauses searched again with no write in between.
        self.where_sets = WhereSets(self.cache)
        #: The ids of one user's records (``""``: those stored without a user), Chroma's and
        #: those waiting for their Chroma write, from the memory's own index; set by a folder's
        #: backend (:meth:`KeywordIndex.owned <ucma_core.storage.keywords.KeywordIndex.owned>`).
        #: A search inside one user's memories then keeps its set from the first ask on,
        #: listed with no Chroma read (see :meth:`nearest_later`).
        self.owned_by: Callable[[str], Sequence[str]] | None = None
        self._folder = folder
        self.embedded_path: Path | None = None if config.host else folder / "chroma"
        self._worker = ChromaThread(timeout)
        self._client: Any = None
        self._col: Any = None
        self.name: str | None = None
        self._broken = False
        self._batch_cap = max(1, max_batch)
        self.max_batch = self._batch_cap
        try:
            self._connect()
        except BaseException:
            self._worker.stop()
            if self.embedded_path is not None:  # Chroma caches a system whose start failed
                from ucma_core.storage.opening import forget_client

                forget_client(self.embedded_path)
            raise

    # ------------------------------------------------------------------ plumbing
    def _connect(self) -> None:
        self._client = self._call("opening the client", lambda: open_chroma(self._config, self._folder))
        with contextlib.suppress(StorageError):
            size = self._call("reading the batch limit", self._client.get_max_batch_size)
            self.max_batch = max(1, min(int(size), self._batch_cap))
        if self.name is not None:
            name = self.name
            self._col = self._call("opening the collection", lambda: self._client.get_collection(name))
        self._broken = False

    def _reconnect(self) -> None:
        old = self._client
        self._client = self._col = None
        if old is not None and callable(getattr(old, "close", None)):
            with contextlib.suppress(StorageError):
                self._call("closing the failed client", old.close)
        if self.embedded_path is not None:
            from ucma_core.storage.opening import forget_client

            forget_client(self.embedded_path)  # a new client, not the failed one's cached state
        self._connect()

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        return self._begin(what, fn)()

    def _begin(self, what: str, fn: Callable[[], T]) -> Callable[[], T]:
        """Start ``fn`` on the worker thread; the function returned waits for its answer
        (with the errors of :meth:`_call`). The caller must call it: a Chroma query that
        releases the GIL leaves the caller's thread free for other work meanwhile."""
        future = self._worker.submit(fn)
        return lambda: self._finish(what, future)

    def _finish(self, what: str, future: Future[T]) -> T:
        try:
            return self._worker.wait(future)
        except CallTimeout:
            self._broken = True
            self._worker.stop()  # the stuck thread is abandoned; calls go to a new one
            self._worker = ChromaThread(self._worker.timeout)
            raise StorageError(
                f"Chroma did not finish {what} within {self._worker.timeout:g} s and was abandoned "
                "(a full disk can make it wait forever); nothing more was stored by this call. "
                "Check the disk and retry (MemoryConfig.limits.chroma_timeout_seconds sets the wait)"
            ) from None
        except CallAbandoned as e:
            self._broken = True
            self._worker.stop()  # the thread still in Chroma is left behind, as after a timeout
            self._worker = ChromaThread(self._worker.timeout)
            raise StorageError(f"Chroma {what} was stopped: {e}") from None
        except (KeyboardInterrupt, SystemExit):
            raise
        except StorageError:
            raise
        except BaseException as e:  # chromadb raises assorted types, a damaged file a Rust panic
            self._broken = True
            raise storage_error(e, f"Chroma {what}", folder=self.embedded_path) from e

    def _run(self, what: str, fn: Callable[[Any], T]) -> T:
        return self._run_later(what, fn)()

    def _run_later(self, what: str, fn: Callable[[Any], T]) -> Callable[[], T]:
        """:meth:`_run` started: the function returned waits for the answer (see :meth:`_begin`)."""
        if self._broken:
            self._reconnect()
        if self._col is None:
            raise StorageError("no Chroma collection is open")
        col = self._col
        return self._begin(what, lambda: fn(col))

    def _chunks(self, items: Sequence[Any]) -> Iterator[slice]:
        for start in range(0, len(items), self.max_batch):
            yield slice(start, start + self.max_batch)

    # ------------------------------------------------------------------ collections
    def collections(self) -> dict[str, dict[str, Any]]:
        """``{name: metadata}`` of every collection the client sees."""
        if self._broken:
            self._reconnect()
        client = self._client
        found = self._call("listing collections", lambda: list(client.list_collections()))
        return {str(c.name): dict(c.metadata or {}) for c in found}

    def use(self, name: str, *, create: bool, folder_id: str) -> bool:
        """Open the collection ``name`` (created, stamped with ``folder_id``, if ``create`` and
        it does not exist); returns whether it already existed. Raises ``StorageError`` if it
        does not exist and ``create`` is false, or if it belongs to another folder."""
        if self._broken:
            self._reconnect()
        self.cache.clear()
        client = self._client
        existing = self.collections()
        if name in existing:
            owner = existing[name].get(FOLDER_KEY)
            if owner is not None and owner != folder_id:
                raise CollectionProblem(
                    f"Chroma collection {name!r} belongs to another memory folder ({owner}), not this one "
                    f"({folder_id})"
                )
            self._col = self._call("opening the collection", lambda: client.get_collection(name))
            self.name = name
            return True
        if not create:
            raise CollectionProblem(f"Chroma collection {name!r} does not exist")
        metadata: dict[str, str | int] = {"hnsw:space": "cosine", FOLDER_KEY: folder_id}
        if self._config.search_ef is not None:
            metadata["hnsw:search_ef"] = self._config.search_ef
        self._col = self._call(
            "creating the collection",
            lambda: client.create_collection(name, embedding_function=None, metadata=metadata),
        )
        self.name = name
        return False

    def drop(self, name: str) -> None:
        """Delete the collection ``name`` (not the open one)."""
        if name == self.name:
            raise StorageError("cannot drop the collection in use")
        client = self._client
        with contextlib.suppress(StorageError):  # already gone
            self._call("deleting a collection", lambda: client.delete_collection(name))

    def copy_to(
        self,
        name: str,
        folder_id: str,
        *,
        reembed: Callable[[list[str]], list[list[float]]] | None = None,
        rewrite: Callable[[str, str, dict[str, Any]], Metadata] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> None:
        """Copy every record into a new collection ``name`` and switch to it (the old one stays
        until :meth:`drop`). With ``reembed`` vectors are computed again from the text (for
        a damaged vector index) instead of read; ``rewrite(id, text, metadata)`` gives each
        record's metadata in the copy; ``progress(done, total, label)`` hears of each batch."""
        source = self._col
        source_name = self.name
        ids = sorted(self.all_ids())
        self.use(name, create=True, folder_id=folder_id)
        target = self._col
        include = ["documents", "metadatas"] + ([] if reembed else ["embeddings"])
        label = "re-embedding the vector index" if reembed else "copying the collection"
        done = 0
        if progress is not None:
            progress(0, len(ids), label)
        try:
            for part in self._chunks(ids):
                chunk = ids[part]

                def read(chunk: list[str] = chunk) -> Any:
                    return source.get(ids=chunk, include=include)

                res = self._call("reading records to copy", read)
                docs = [d or "" for d in res["documents"]]
                vectors = reembed(docs) if reembed else [[float(x) for x in v] for v in res["embeddings"]]

                rows: dict[str, Any] = {
                    "ids": list(res["ids"]),
                    "embeddings": vectors,
                    "documents": docs,
                    "metadatas": [dict(m or {}) for m in res["metadatas"]],
                }
                if rewrite is not None:
                    rows["metadatas"] = [
                        rewrite(i, d, m) for i, d, m in zip(rows["ids"], docs, rows["metadatas"], strict=True)
                    ]

                def write(rows: dict[str, Any] = rows) -> None:
                    target.add(**rows)

                self._call("copying records", write)
                done += len(chunk)
                if progress is not None:
                    progress(done, len(ids), label)
        except BaseException:
            self._col, self.name = source, source_name
            self.drop(name)
            raise

    # ------------------------------------------------------------------ writes
    def _write(self, what: str, method: str, ids: Sequence[str], **columns: Sequence[Any]) -> None:
        """Call the collection's ``method`` on ``ids`` and the ``columns`` in batches."""
        failed = True
        try:
            self._write_batches(what, method, ids, **columns)
            failed = False
        finally:
            self._forget(method, ids, columns, failed=failed)  # before and after: see VectorCache
        if "embeddings" in columns:
            self._read_back(ids)

    def _read_back(self, ids: Sequence[str]) -> None:
        """Put the vectors of records just written into :attr:`cache`, read on the worker
        after the write and not waited for: a memory just written is often the next one a
        search needs (the user who just spoke). Read back rather than kept as sent, because
        Chroma's copy differs from what it was given in the last bit here and there. A write
        larger than a quarter of the cache is not read back (an import), and a read that
        fails or overlaps another write only leaves its vectors out."""
        if not ids or len(ids) > self.cache.capacity // 4 or self._broken or self._col is None:
            return
        col, cache, token = self._col, self.cache, self.cache.token()
        own = {i: i for i in ids}  # the caller's id strings, not Chroma's copies

        def read() -> None:
            res = col.get(ids=list(own), include=["embeddings"])
            found = zip(res["ids"], res["embeddings"], strict=True)
            cache.put(
                {own.get(i, i): np.asarray(v, dtype=np.float32) for i, v in found if v is not None}, token
            )

        with contextlib.suppress(StorageError):  # a worker stopped meanwhile (closing): nothing to keep
            self._worker.submit(read)  # its errors are dropped with its future

    def _forget(
        self, method: str, ids: Sequence[str], columns: Mapping[str, Any], *, failed: bool = False
    ) -> None:
        # the written records' cached vectors, and the kept sets the write changes (WhereSets)
        metadatas = None if method == "delete" else columns.get("metadatas", [{}])  # {}: not known
        partial = method == "update" or "metadatas" not in columns
        vectors = "embeddings" in columns or method == "delete"
        self.where_sets.changed(ids, metadatas, partial=partial, vectors=vectors, failed=failed)

    def _write_batches(self, what: str, method: str, ids: Sequence[str], **columns: Sequence[Any]) -> None:
        self._forget(method, ids, columns)
        for part in self._chunks(ids):
            batch: dict[str, Any] = {"ids": list(ids[part])}
            batch.update(
                {
                    name: [list(v) if name == "embeddings" else v for v in values[part]]
                    for name, values in columns.items()
                }
            )

            def call(col: Any, batch: dict[str, Any] = batch) -> Any:
                return getattr(col, method)(**batch)

            self._run(f"{what} {len(batch['ids'])} record(s)", call)

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[Metadata],
    ) -> None:
        self._write("writing", "add", ids, embeddings=vectors, documents=documents, metadatas=metadatas)

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Write records whether or not their ids exist (existing ones are replaced whole)."""
        self._write("writing", "upsert", ids, embeddings=vectors, documents=documents, metadatas=metadatas)

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Metadata]) -> None:
        """Add or change metadata keys of existing records (other keys stay)."""
        self._write("updating", "update", ids, metadatas=metadatas)

    def delete(self, ids: Sequence[str]) -> None:
        self._write("deleting", "delete", ids)

    # ------------------------------------------------------------------ reads
    def ids_where(self, where: Where | None) -> list[str]:
        """Ids of every record matching ``where`` (no text, vectors or metadata read)."""
        if not where:
            return list(self._run("listing records", lambda col: col.get(include=[]))["ids"])
        token = self.cache.token()
        kept = self.where_sets.get(where, token)
        if kept is not None:
            return list(kept)
        ids = list(self._run("listing records", lambda col: col.get(where=where, include=[]))["ids"])
        self.where_sets.put(where, ids, token)
        return ids

    def _get(self, ids: Sequence[str], include: list[str]) -> Iterator[Any]:
        """Chroma's ``get`` answers for ``ids`` in batches."""
        for part in self._chunks(ids):
            batch = list(ids[part])

            def read(col: Any, batch: list[str] = batch) -> Any:
                return col.get(ids=batch, include=include)

            yield self._run(f"reading {len(batch)} record(s)", read)

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, Metadata]]:
        """``{id: (document, metadata)}`` for those of ``ids`` that exist."""
        out: dict[str, tuple[str, Metadata]] = {}
        for res in self._get(ids, ["documents", "metadatas"]):
            out.update(
                (i, (d or "", dict(m or {})))
                for i, d, m in zip(res["ids"], res["documents"], res["metadatas"], strict=True)
            )
        return out

    def all_ids(self) -> set[str]:
        return set(self._run("listing record ids", lambda col: col.get(include=[]))["ids"])

    def count(self) -> int:
        return int(self._run("counting records", lambda col: col.count()))

    def nearest(
        self, vector: Sequence[float], n: int, where: Where | None = None
    ) -> list[tuple[str, float, np.ndarray]]:
        """``(id, cosine distance, float32 vector)`` of the nearest ``n`` records matching
        ``where``, nearest first. Reads no text or metadata, which makes it cheaper than
        :meth:`query`."""
        return self.nearest_later(vector, n, where)()

    def nearest_later(
        self, vector: Sequence[float], n: int, where: Where | None = None
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]]:
        """:meth:`nearest` started on the worker thread: the function returned waits for
        its answer (it must be called). Chroma's query releases the GIL, so the caller
        can do other work (a keyword search) while it runs."""
        if n <= 0:
            return list
        if where and (narrow := self._narrow(vector, n, where)) is not None:
            return narrow
        return self._query_later(vector, n, where, None)

    def _query_later(
        self, vector: Sequence[float], n: int, where: Where | None, ids: Sequence[str] | None
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]]:
        """A Chroma query started on the worker thread, inside ``where`` or, when ``ids`` is
        given, inside those ids (the set a kept ``where`` admits): the same answer, found
        without evaluating the clause over the whole collection. An id deleted since it was
        listed makes Chroma refuse the query, which is then asked with ``where``."""
        kwargs: dict[str, Any] = {
            "query_embeddings": [list(vector)],
            "n_results": n,
            "include": ["distances", "embeddings"],
        }
        if where and ids is None:
            kwargs["where"] = where

        def query(col: Any) -> Any:
            if ids is None:
                return col.query(**kwargs)
            from chromadb.errors import InternalError

            try:
                return col.query(ids=list(ids), **kwargs)
            except InternalError:  # Chroma's answer to an id it does not hold
                return col.query(where=where, **kwargs)

        token = self.cache.token()
        answer = self._run_later("querying", query)

        def found() -> list[tuple[str, float, np.ndarray]]:
            res = answer()
            hits = [
                (i, float(d), np.asarray(v, dtype=np.float32))
                for i, d, v in zip(res["ids"][0], res["distances"][0], res["embeddings"][0], strict=True)
            ]
            self.cache.put({i: v for i, _, v in hits}, token)
            return hits

        return found

    def answered_here(self, where: Where | None, n: int) -> bool:
        """Whether a search of ``n`` inside ``where`` is answered in the process from a kept
        set no larger than the search breadth (:meth:`nearest_later` is then done when it
        returns; a larger set held in :attr:`cache` may be too, which this does not tell)."""
        size = self.where_sets.size(where) if where else None
        return size is not None and size <= self._breadth(n)

    def _breadth(self, n: int) -> int:
        """The largest set a search of ``n`` sees whole: Chroma's HNSW visits every admitted
        record of a set no larger than its search breadth (``ef_search``)."""
        hnsw = (getattr(self._col, "configuration", None) or {}).get("hnsw") or {}
        breadth = hnsw.get("ef_search")
        return max(n, breadth if isinstance(breadth, int) else 100)

    def _narrow(
        self, vector: Sequence[float], n: int, where: Where
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]] | None:
        """:meth:`nearest_later` inside a kept set of ids ``where`` admits (see
        :mod:`~ucma_core.storage.wheresets`): in the process for a set no larger than the
        search breadth, or one that fits in a quarter of :attr:`cache` and lacks no more
        vectors there than that breadth; by Chroma inside the listed ids for another; ``None``:
        ask Chroma with ``where``."""
        token = self.cache.token()
        sets = self.where_sets
        ids = sets.get(where, token)
        if ids is None:
            owner = owner_of(where) if self.owned_by is not None else None
            if owner is not None and self.owned_by is not None and sets.listable(where, token):
                listed = self.owned_by(owner)
            elif sets.narrows(where, token) or sets.wanted(where, token):
                # ids only, at most one more than a set worth keeping (a larger one is only marked too large)
                limit = sets.max_ids + 1
                got = self._run("listing records", lambda col: col.get(where=where, limit=limit, include=[]))
                listed = got["ids"]
            else:
                return None
            sets.put(where, listed, token)
            ids = sets.get(where, token)
            if ids is None:
                return None
        ids = self._stored(ids)
        breadth = self._breadth(n)
        if len(ids) > breadth and (len(ids) > self.cache.room // 4 or self.cache.lacks(ids) > breadth):
            # Chroma's index is approximate beyond its search breadth: it answers, inside the
            # ids, unless the cache holds the set (less a read no larger than a small set's)
            return self._query_later(vector, n, where, ids)
        # the members' stored vectors (not a write buffer's): a read of those not cached runs on
        # the worker meanwhile, as a query would; the set is then ranked here, exactly
        read = VectorStore.vectors_of_later(self, ids)

        def near() -> list[tuple[str, float, np.ndarray]]:
            found = read()
            if len(found) < len(ids) or self.cache.token() != token:
                return self._query_later(vector, n, where, None)()  # written meanwhile: Chroma answers
            return nearest_among(vector, {i: found[i] for i in ids}, n)

        return near

    def _stored(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        """Those of a kept set's ``ids`` Chroma holds (all here; a write buffer leaves out those
        waiting for their Chroma write, which it searches itself)."""
        return ids

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{id: float32 vector}`` for those of ``ids`` that exist (no text or metadata read);
        Chroma is asked only for those not in :attr:`cache`."""
        return self.vectors_of_later(ids)()

    def vectors_of_later(self, ids: Sequence[str]) -> Callable[[], dict[str, np.ndarray]]:
        """:meth:`vectors_of` started on the worker thread: the function returned waits for
        its answer (it must be called; see :meth:`nearest_later`)."""
        out = self.cache.get(ids)
        missing = [i for i in ids if i not in out]
        if not missing:
            return lambda: out
        token = self.cache.token()
        answers = []
        for part in self._chunks(missing):
            batch = list(missing[part])

            def read(col: Any, batch: list[str] = batch) -> Any:
                return col.get(ids=batch, include=["embeddings"])

            answers.append(self._run_later(f"reading {len(batch)} record(s)", read))

        def found() -> dict[str, np.ndarray]:
            read: dict[str, np.ndarray] = {}
            for answer in answers:
                res = answer()
                read.update(
                    (i, np.asarray(v, dtype=np.float32))
                    for i, v in zip(res["ids"], res["embeddings"], strict=True)
                    if v is not None
                )
            self.cache.put(read, token)
            out.update(read)
            return out

        return found

    def rows_with_vectors(self, ids: Sequence[str]) -> dict[str, tuple[str, Metadata, list[float]]]:
        """``{id: (document, metadata, vector)}`` for those of ``ids`` that exist."""
        out: dict[str, tuple[str, Metadata, list[float]]] = {}
        for res in self._get(ids, ["documents", "metadatas", "embeddings"]):
            columns = (res["ids"], res["documents"], res["metadatas"], res["embeddings"])
            for i, d, m, v in zip(*columns, strict=True):
                out[i] = (d or "", dict(m or {}), [float(x) for x in v])
        return out

    def lookup(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[VectorHit]:
        """The records of those of ``ids`` that exist, as hits with ``distance`` = nan."""
        include = ["documents", "metadatas"] + (["embeddings"] if with_vectors else [])
        hits: list[VectorHit] = []
        for res in self._get(ids, include):
            vectors = res["embeddings"] if with_vectors else [None] * len(res["ids"])
            columns = (res["ids"], res["documents"], res["metadatas"], vectors)
            hits.extend(
                VectorHit(i, float("nan"), doc or "", dict(meta or {}), _array(vec))
                for i, doc, meta, vec in zip(*columns, strict=True)
            )
        return hits

    def vectors_readable(self, ids: Sequence[str]) -> bool:
        """Whether the vectors of ``ids`` can be read (a damaged or deleted vector index
        cannot serve them)."""
        try:
            self.vectors_of(list(ids))
        except StorageError:
            return False
        return True

    # ------------------------------------------------------------------ lifecycle
    def abandon(self, reason: str) -> None:
        """Give up the Chroma call under way (from another thread, e.g. a size guard): its
        caller gets a :class:`StorageError` saying ``reason`` and later calls start afresh."""
        self._worker.abandon(reason)

    def close(self) -> None:
        """Release the client (an embedded client otherwise keeps a process-wide cache of
        the folder that goes stale when another process writes to it). A client that
        failed is dropped from that cache whatever state it is in, so the next open of
        the folder in this process starts from the files, as a new process would. An
        embedded collection's vector index is saved first (see :meth:`save_index`) when the
        disk has room for it."""
        if not self._broken and self.embedded_path is not None:
            from ucma_core.storage.hnsw import room_to_save

            # a later client would otherwise build the unsaved index again, writing it whole
            # from unzeroed buffers; a failure here (or no room) leaves that to the clearing at close
            with contextlib.suppress(StorageError):
                if room_to_save(self.embedded_path):
                    self.save_index()
        client, self._client, self._col = self._client, None, None
        self.cache.clear()
        try:
            close = getattr(client, "close", None)
            if callable(close) and not self._broken:
                self._call("closing the client", close)
        finally:
            self._worker.stop(wait=not self._broken)
            if self._broken and self.embedded_path is not None:
                from ucma_core.storage.opening import forget_client

                forget_client(self.embedded_path)

    def scrub(self, ids: Sequence[str]) -> None:
        """Remove deleted records' text and vectors from the embedded Chroma files (see
        :func:`~ucma_core.storage.chromafiles.scrub_deleted`). A no-op for a Chroma server
        (its disk is not ours to scrub)."""
        if self.embedded_path is not None:
            scrub_deleted(self.embedded_path, ids)

    def sanitize_index(self) -> list[str]:
        """Close the client, zero the bytes of the vector-index files that Chroma wrote from
        uninitialised memory (see :mod:`ucma_core.storage.hnsw`), and reopen. Returns the
        segment directories whose layout was not understood (left as they were)."""
        if self.embedded_path is None:
            return []
        from ucma_core.storage.hnsw import sanitize

        self.save_index()
        client, self._client, self._col = self._client, None, None
        if client is not None and callable(getattr(client, "close", None)):
            with contextlib.suppress(StorageError):
                self._call("closing the client", client.close)
        try:
            unknown = [
                entry.name
                for entry in self.embedded_path.iterdir()
                if is_segment_dir(entry) and not sanitize(entry)
            ]
        except OSError as e:
            raise storage_error(
                e, f"clearing unused bytes of the vector index in {self.embedded_path}"
            ) from e
        finally:
            self._connect()
        return unknown

    def save_index(self) -> None:
        """Make Chroma save the open collection's vector index to its folder now.

        Chroma saves an index only after ``sync_threshold`` (1000) changes. Until then each
        client that reads the collection builds the index anew, and building it writes the
        index files whole from buffers never zeroed, so they take fragments of whatever
        this process handled before (see :mod:`ucma_core.storage.hnsw`). Once saved, a
        client loads the index and writes back only the elements it changes. The threshold
        is set to 1 for one read by a new client (which applies Chroma's log and saves), then
        restored. A no-op for a Chroma server, for an empty collection (no index) and for an
        index saved with every change already."""
        if self.embedded_path is None or self._col is None:
            return
        col = self._col
        from ucma_core.storage.hnsw import index_saved

        if index_saved(self.embedded_path, str(col.id)):
            return
        hnsw = (getattr(col, "configuration", None) or {}).get("hnsw") or {}
        threshold = hnsw.get("sync_threshold")
        if not isinstance(threshold, int) or self.count() == 0:
            return
        once = {"hnsw": {"sync_threshold": 1}}
        self._call("saving the vector index", lambda: col.modify(configuration=once))
        try:
            self._reconnect()
            self.count()  # a read applies the log to the index, which the threshold of 1 saves
        finally:
            self._run(
                "saving the vector index",
                lambda c: c.modify(configuration={"hnsw": {"sync_threshold": threshold}}),
            )

    def remove_unused_segments(self) -> None:
        """Delete vector-index directories no collection uses (Chroma leaves those of a
        deleted collection behind, vectors and all)."""
        if self.embedded_path is not None:
            remove_unused_segments(self.embedded_path)


def _array(vector: Any) -> np.ndarray | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32)
