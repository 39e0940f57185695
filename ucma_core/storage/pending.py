"""Group commit for vectors: small writes wait in memory for a batched Chroma write.

Chroma's ``add`` costs tens of milliseconds whatever its size, and its Rust code
holds the GIL all that time, so a memory that waited for one ``add`` per
``observe`` was slower than Chroma itself and stalled every other thread of the
process once per write. With group commit a write of at most ``batch_size`` new
records goes like this:

1. its records, with their text, fields and vector, are written into the journal
   with the transaction's commit mark (a ``"p"`` line, see
   :mod:`~ucma_core.storage.journal`), the keyword index and the graph as before;
   the call returns once that is durable;
2. meanwhile the records wait in :class:`PendingVectors`, where every read of the
   vector store finds them (:class:`BufferedVectorStore` merges them into the
   nearest neighbours, lookups by id and listings);
3. a writer thread adds them to Chroma, up to ``batch_size`` records per call, as
   soon as that many wait or ``interval_seconds`` after the oldest arrived, and
   only then drops them from the buffer.

A crash at any point loses nothing acknowledged: on the next open the journal's
``"p"`` records that Chroma does not hold are added again
(:meth:`~ucma_core.storage.backend.Backend`), and the journal is never folded into a
snapshot while records wait. A deletion or replacement of a waiting record takes it
out of the buffer (waiting for a Chroma write already under way to finish first), so
no later write brings it back. ``Memory.flush()`` and ``Memory.close()`` drain the
buffer; when Chroma refuses a write the records stay in the buffer (and the journal)
and are tried again, with a growing pause.

Examples:
    >>> matches({"$and": [{"user_id": "ana"}, {"turn": {"$gte": 2}}]}, {"user_id": "ana", "turn": 3})
    True
    >>> matches({"tag": {"$ne": "x"}}, {})  # Chroma: a missing key is "not equal"
    True
    >>> decode_vector(encode_vector([0.5, -1.0]))
    [0.5, -1.0]
"""

from __future__ import annotations

import base64
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ucma_core.config import ChromaConfig, GroupCommitConfig
from ucma_core.errors import StorageError
from ucma_core.storage.diskspace import check_free_space
from ucma_core.storage.vectorcache import DEFAULT_MAX_BYTES
from ucma_core.storage.vectors import Metadata, VectorHit, VectorStore, Where
from ucma_core.storage.wheresets import nearest_among

__all__ = ["BufferedVectorStore", "PendingVectors", "decode_vector", "encode_vector", "matches"]

T = TypeVar("T")

#: Longest pause between two tries of a Chroma write that failed.
_MAX_BACKOFF = 5.0


def encode_vector(vector: Sequence[float] | np.ndarray) -> str:
    """A vector as base64 of little-endian float32 (how the journal keeps waiting vectors)."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str) -> list[float]:
    """The vector :func:`encode_vector` wrote."""
    return [float(x) for x in np.frombuffer(base64.b64decode(text), dtype="<f4")]


# ------------------------------------------------------------------ Chroma's where clause
def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _equal(actual: object, operand: object) -> bool:
    if _number(actual) and _number(operand):
        return bool(actual == operand)
    return type(actual) is type(operand) and bool(actual == operand)


def _holds(actual: object, op: str, operand: Any) -> bool:
    if op == "$eq":
        return _equal(actual, operand)
    if op == "$ne":
        return not _equal(actual, operand)
    if op == "$in":
        return any(_equal(actual, v) for v in operand)
    if op == "$nin":
        return not any(_equal(actual, v) for v in operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if not (_number(actual) and _number(operand)):
            return False
        a, b = actual, operand
        return bool({"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op])
    if op in ("$contains", "$not_contains"):
        found = isinstance(actual, list) and any(_equal(v, operand) for v in actual)
        return found if op == "$contains" else not found
    raise StorageError(f"the where clause operator {op!r} cannot be applied to records waiting for Chroma")


def matches(where: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` passes Chroma's ``where`` clause, with Chroma's rules: ``$and``,
    ``$or``, a bare value for ``$eq``, numbers compare across int and float (never with
    bool), and a missing key passes ``$ne`` and ``$nin`` only."""
    if not where:
        return True
    for key, condition in where.items():
        if key == "$and":
            if not all(matches(c, metadata) for c in condition):
                return False
        elif key == "$or":
            if not any(matches(c, metadata) for c in condition):
                return False
        elif isinstance(condition, Mapping):
            if not all(_holds(metadata.get(key), op, operand) for op, operand in condition.items()):
                return False
        elif not _equal(metadata.get(key), condition):
            return False
    return True


# ------------------------------------------------------------------ the buffer
class Row(NamedTuple):
    """A record waiting for its Chroma write."""

    vector: np.ndarray
    document: str
    metadata: Metadata
    #: ``time.monotonic()`` when it was staged.
    at: float


#: Writes rows to Chroma: ``write(ids, rows)``.
Write = Callable[[list[str], list[Row]], None]


class PendingVectors:
    """Records waiting for their Chroma write, and the writer thread that writes them.

    Thread-safe; the writer starts with the first record and stops at :meth:`close`.
    """

    def __init__(self, write: Write, *, batch_size: int, interval: float, limit: int) -> None:
        self._write = write
        self.batch_size = batch_size
        self.interval = interval
        self.limit = limit
        self._rows: dict[str, Row] = {}
        #: Ids of the batch being written now.
        self._flying: set[str] = set()
        self._cond = threading.Condition()
        self._error: Exception | None = None
        self._failures = 0  # in a row
        self._failed = 0  # ever
        self._retry_at = 0.0
        self._hurry = 0
        #: A settle() asked for a write since the last one started (it tries again at once).
        self._asked = False
        self._stopped = False
        self._thread: threading.Thread | None = None

    def __len__(self) -> int:
        with self._cond:
            return len(self._rows)

    @property
    def error(self) -> Exception | None:
        """Why the last Chroma write failed (``None`` after one succeeded)."""
        return self._error

    def put(
        self, ids: Sequence[str], vectors: np.ndarray, documents: Sequence[str], metadatas: Sequence[Metadata]
    ) -> None:
        """Stage new records (an id already waiting keeps its first row, as Chroma's ``add``
        would). Waits while :attr:`limit` records wait; raises the last Chroma error
        instead when Chroma keeps failing."""
        with self._cond:
            if self._stopped:
                raise StorageError("the vector store is closed")
            while len(self._rows) >= self.limit and self._error is None:
                self._cond.wait()
            if len(self._rows) >= self.limit:
                raise StorageError(
                    f"{len(self._rows):,} records wait for Chroma, which refuses them ({self._error}); "
                    "nothing new was stored. Fix what Chroma reports (e.g. free disk space) and retry"
                ) from self._error
            now = time.monotonic()
            for n, memory_id in enumerate(ids):
                if memory_id not in self._rows:
                    vector = vectors[n]
                    vector.flags.writeable = False
                    self._rows[memory_id] = Row(vector, documents[n], dict(metadatas[n]), now)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ucma-group-commit", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def discard(self, ids: Iterable[str]) -> None:
        """Drop waiting records (deleted or replaced); returns once no Chroma write of any of
        them is under way, so a write the caller makes next comes after it."""
        wanted = set(ids)
        with self._cond:
            for memory_id in wanted:
                self._rows.pop(memory_id, None)
            while self._flying & wanted:
                self._cond.wait()

    def settle(self, ids: Iterable[str] | None = None) -> None:
        """Return once Chroma holds the waiting records among ``ids`` (all with ``None``),
        writing them now. Raises :class:`StorageError` if a Chroma write fails meanwhile
        (they stay waiting, and durable in the journal)."""
        wanted = None if ids is None else set(ids)

        def waiting() -> bool:
            if wanted is None:
                return bool(self._rows)
            return not wanted.isdisjoint(self._rows)

        with self._cond:
            if not waiting():
                return
            failed = self._failed
            self._hurry += 1
            self._asked = True
            self._cond.notify_all()
            try:
                while waiting():
                    if self._failed > failed:
                        raise StorageError(
                            f"Chroma refused the write of {len(self._rows):,} waiting record(s) "
                            f"({self._error}); they stay durable in the journal and are written when "
                            "Chroma accepts them (tried again in the background and on the next open)"
                        ) from self._error
                    if self._thread is None or not self._thread.is_alive():
                        raise StorageError("the group-commit writer is not running")
                    self._cond.wait()
            finally:
                self._hurry -= 1

    def waiting(self) -> frozenset[str]:
        """The ids waiting now."""
        with self._cond:
            return frozenset(self._rows)

    def rows(self, ids: Iterable[str]) -> dict[str, Row]:
        """The waiting rows among ``ids``."""
        with self._cond:
            return {i: row for i in ids if (row := self._rows.get(i)) is not None}

    def items(self) -> list[tuple[str, Row]]:
        """Every waiting ``(id, row)``, oldest first."""
        with self._cond:
            return list(self._rows.items())

    def search(
        self, vector: Sequence[float], n: int, where: Where | None
    ) -> list[tuple[str, float, np.ndarray]]:
        """``(id, cosine distance, vector)`` of the nearest ``n`` waiting records that pass
        ``where`` (exact: the buffer is small), measured as Chroma measures them
        (:func:`~ucma_core.storage.wheresets.nearest_among`): a record's distance is the
        same, to the last bit, before and after its Chroma write."""
        found = {i: row.vector for i, row in self.items() if matches(where, row.metadata)}
        return nearest_among(vector, found, n)

    # ------------------------------------------------------------------ the writer
    def _next_batch(self) -> tuple[list[str], list[Row]] | None:
        """Wait until a batch is due; ``None`` when the writer is to stop."""
        with self._cond:
            while True:
                count = len(self._rows)
                if self._stopped and (not count or self._error is not None):
                    return None
                now = time.monotonic()
                if count:
                    due = next(iter(self._rows.values())).at + self.interval
                    if count >= self.batch_size or self._stopped:
                        due = now
                    if self._error is not None and not self._asked:
                        due = max(due, self._retry_at)
                    elif self._hurry:
                        due = now
                    if due <= now:
                        self._asked = False
                        ids = list(itertools.islice(self._rows, self.batch_size))
                        self._flying = set(ids)
                        return ids, [self._rows[i] for i in ids]
                    self._cond.wait(due - now)
                else:
                    self._cond.wait()

    def _run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            ids, rows = batch
            try:
                self._write(ids, rows)
            except Exception as e:  # kept, reported by settle() and put(); tried again later
                with self._cond:
                    self._flying = set()
                    self._error = e
                    self._failures += 1
                    self._failed += 1
                    self._retry_at = time.monotonic() + min(_MAX_BACKOFF, self.interval * 2**self._failures)
                    self._cond.notify_all()
                continue
            with self._cond:
                for memory_id, row in zip(ids, rows, strict=True):
                    if self._rows.get(memory_id) is row:
                        del self._rows[memory_id]
                self._flying = set()
                self._error = None
                self._failures = 0
                self._cond.notify_all()

    def close(self, timeout: float | None = None) -> None:
        """Stop the writer once the buffer is written (or at once, if Chroma is failing:
        what waits stays in the journal for the next open)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)


# ------------------------------------------------------------------ the vector store
class BufferedVectorStore(VectorStore):
    """A :class:`VectorStore` whose small writes wait in a :class:`PendingVectors` buffer:
    :meth:`stage` puts records there, and every read merges them in. Calls from the
    writer thread and the caller's thread are serialised (Chroma runs one at a time
    anyway)."""

    def __init__(
        self,
        config: ChromaConfig,
        folder: Path,
        *,
        timeout: float = 120.0,
        max_batch: int = 5000,
        group: GroupCommitConfig | None = None,
        min_free: int = 0,
        cache_size: int = 0,
        cache_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        group = group or GroupCommitConfig()
        #: Free bytes a Chroma write of waiting records needs first (``LimitsConfig.min_free_bytes``):
        #: on a full disk every try would leave a failed batch in Chroma's log.
        self._min_free = min_free
        self._io = threading.RLock()
        self.pending = PendingVectors(
            self._flush,
            batch_size=min(group.batch_size, max_batch),
            interval=group.interval_seconds,
            limit=group.max_pending,
        )
        super().__init__(
            config,
            folder,
            timeout=timeout,
            max_batch=max_batch,
            cache_size=cache_size,
            cache_bytes=cache_bytes,
        )
        self._wait = timeout

    @property
    def batch_size(self) -> int:
        """The largest write that waits in the buffer (larger ones go to Chroma at once)."""
        return self.pending.batch_size

    def stage(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[Metadata],
    ) -> dict[str, list[Any]]:
        """Put new records in the buffer; returns what the journal's ``"p"`` line keeps of them
        (id -> ``[text, fields, vector]``)."""
        array = np.array(vectors, dtype=np.float32)
        if array.ndim != 2 or len(array) != len(ids):
            raise StorageError(f"{len(ids)} record(s) came with vectors of shape {array.shape}")
        rows = {
            memory_id: [documents[n], dict(metadatas[n]), encode_vector(array[n])]
            for n, memory_id in enumerate(ids)
        }
        self.pending.put(ids, array, documents, metadatas)
        return rows

    def drain(self) -> None:
        """Return once Chroma holds every waiting record (see :meth:`PendingVectors.settle`)."""
        self.pending.settle()

    def _flush(self, ids: list[str], rows: list[Row]) -> None:
        if self._min_free > 0:
            check_free_space(self._folder, self._min_free)
        VectorStore.add(
            self,
            ids,
            [r.vector.tolist() for r in rows],
            [r.document for r in rows],
            [r.metadata for r in rows],
        )

    # ------------------------------------------------------------------ plumbing
    def _call(self, what: str, fn: Callable[[], T]) -> T:
        with self._io:
            return super()._call(what, fn)

    def _run(self, what: str, fn: Callable[[Any], T]) -> T:
        with self._io:
            return super()._run(what, fn)

    def _run_later(self, what: str, fn: Callable[[Any], T]) -> Callable[[], T]:
        # the lock is not held in between: the worker runs the calls in the order queued
        with self._io:
            answer = super()._run_later(what, fn)

        def finish() -> T:
            with self._io:
                return answer()

        return finish

    # ------------------------------------------------------------------ writes
    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        self.pending.discard(ids)
        super().upsert(ids, vectors, documents, metadatas)

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Metadata]) -> None:
        self.pending.settle(ids)  # Chroma ignores an update of a record it does not hold yet
        super().update_metadata(ids, metadatas)

    def delete(self, ids: Sequence[str]) -> None:
        self.pending.discard(ids)
        super().delete(ids)

    def copy_to(
        self,
        name: str,
        folder_id: str,
        *,
        reembed: Callable[[list[str]], list[list[float]]] | None = None,
        rewrite: Callable[[str, str, dict[str, Any]], Metadata] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> None:
        self.drain()
        super().copy_to(name, folder_id, reembed=reembed, rewrite=rewrite, progress=progress)

    def sanitize_index(self) -> list[str]:
        self.drain()
        return super().sanitize_index()

    # ------------------------------------------------------------------ reads
    def nearest_later(
        self, vector: Sequence[float], n: int, where: Where | None = None
    ) -> Callable[[], list[tuple[str, float, np.ndarray]]]:
        # the buffer first: a record that lands in Chroma meanwhile is then found there
        waiting = self.pending.search(vector, n, where)
        answer = super().nearest_later(vector, n, where)
        if not waiting:
            return answer

        def merged() -> list[tuple[str, float, np.ndarray]]:
            seen = {hit[0] for hit in waiting}
            hits = waiting + [hit for hit in answer() if hit[0] not in seen]
            hits.sort(key=lambda hit: hit[1])
            return hits[:n]

        return merged

    def _stored(self, ids: tuple[str, ...]) -> tuple[str, ...]:
        # what waits is searched in the buffer (:meth:`nearest_later`), and Chroma would refuse
        # a query naming an id it does not hold yet
        waiting = self.pending.waiting()
        return ids if waiting.isdisjoint(ids) else tuple(i for i in ids if i not in waiting)

    def vectors_of_later(self, ids: Sequence[str]) -> Callable[[], dict[str, np.ndarray]]:
        # the buffer first: a record leaves it only once Chroma holds it
        waiting = self.pending.rows(ids)
        out = {i: row.vector for i, row in waiting.items()}
        rest = [i for i in ids if i not in waiting]
        if not rest:
            return lambda: out
        answer = super().vectors_of_later(rest)

        def found() -> dict[str, np.ndarray]:
            out.update(answer())
            return out

        return found

    def rows_with_vectors(self, ids: Sequence[str]) -> dict[str, tuple[str, Metadata, list[float]]]:
        waiting = self.pending.rows(ids)
        out = {i: (row.document, dict(row.metadata), row.vector.tolist()) for i, row in waiting.items()}
        rest = [i for i in ids if i not in waiting]
        if rest:
            out.update(super().rows_with_vectors(rest))
        return out

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, Metadata]]:
        waiting = self.pending.rows(ids)
        out = {i: (row.document, dict(row.metadata)) for i, row in waiting.items()}
        rest = [i for i in ids if i not in waiting]
        if rest:
            out.update(super().get(rest))
        return out

    def lookup(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[VectorHit]:
        waiting = self.pending.rows(ids)
        hits = [
            VectorHit(i, float("nan"), row.document, dict(row.metadata), row.vector if with_vectors else None)
            for i, row in waiting.items()
        ]
        rest = [i for i in ids if i not in waiting]
        if rest:
            hits += super().lookup(rest, with_vectors=with_vectors)
        return hits

    def ids_where(self, where: Where | None) -> list[str]:
        waiting = [i for i, row in self.pending.items() if matches(where, row.metadata)]
        stored = super().ids_where(where)
        return list(dict.fromkeys([*stored, *waiting]))

    def all_ids(self) -> set[str]:
        waiting = {i for i, _ in self.pending.items()}
        return super().all_ids() | waiting

    def count(self) -> int:
        if not len(self.pending):
            return super().count()
        return len(self.all_ids())

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Write what waits (unless Chroma is failing: then it stays in the journal for the
        next open), stop the writer and release the client."""
        try:
            self.pending.close(timeout=self._wait)
        finally:
            super().close()
