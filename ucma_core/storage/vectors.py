"""Records and vectors in Chroma: embedded ``PersistentClient`` or a server's ``HttpClient``.

Both clients go through the same :class:`VectorStore`; only :func:`open_chroma`
differs. UCMA always computes vectors itself, so the collection is created with no
embedding function and Chroma never tries to download a model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ucma_core.config import ChromaConfig
from ucma_core.errors import StorageError

__all__ = ["VectorHit", "VectorStore", "open_chroma"]

Metadata = dict[str, str | int | float | bool]
Where = dict[str, Any]


@dataclass(frozen=True)
class VectorHit:
    """A stored record as a search or lookup returns it (``distance`` is cosine distance;
    ``nan`` for a lookup by id; ``vector`` is a float32 array when asked for)."""

    id: str
    distance: float
    document: str
    metadata: Metadata
    vector: np.ndarray | None = None


def open_chroma(config: ChromaConfig, folder: Path) -> Any:
    """Return a Chroma client: a server's ``HttpClient`` if ``config.host`` is set, else an
    embedded ``PersistentClient`` in ``folder/chroma``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    try:
        if config.host:
            return chromadb.HttpClient(host=config.host, port=config.port, ssl=config.ssl, settings=settings)
        return chromadb.PersistentClient(path=str(folder / "chroma"), settings=settings)
    except Exception as e:  # chromadb raises assorted types (ValueError, ConnectionError, its own)
        where = f"{config.host}:{config.port}" if config.host else str(folder / "chroma")
        raise StorageError(f"cannot open Chroma at {where}: {e}") from e


class VectorStore:
    """One Chroma collection holding every memory's text, vector and filter metadata."""

    def __init__(self, client: Any, collection: str, *, embedded_path: Path | None) -> None:
        self._client = client
        self._embedded_path = embedded_path
        try:
            self._col = client.get_or_create_collection(
                collection, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        except Exception as e:
            raise StorageError(f"cannot open Chroma collection {collection!r}: {e}") from e

    def add(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[Metadata],
    ) -> None:
        if not ids:
            return
        try:
            self._col.add(
                ids=list(ids),
                embeddings=[list(v) for v in vectors],
                documents=list(documents),
                metadatas=list(metadatas),
            )
        except Exception as e:
            raise StorageError(f"Chroma rejected the write of {len(ids)} record(s): {e}") from e

    def upsert(
        self,
        ids: Sequence[str],
        vectors: Sequence[Sequence[float]],
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Write records whether or not their ids exist (existing ones are replaced whole)."""
        if not ids:
            return
        try:
            self._col.upsert(
                ids=list(ids),
                embeddings=[list(v) for v in vectors],
                documents=list(documents),
                metadatas=list(metadatas),
            )
        except Exception as e:
            raise StorageError(f"Chroma rejected the write of {len(ids)} record(s): {e}") from e

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Metadata]) -> None:
        """Add or change metadata keys of existing records (other keys stay)."""
        if not ids:
            return
        try:
            self._col.update(ids=list(ids), metadatas=list(metadatas))
        except Exception as e:
            raise StorageError(f"Chroma could not update {len(ids)} record(s): {e}") from e

    def ids_where(self, where: Where | None) -> list[str]:
        """Ids of every record matching ``where`` (no text, vectors or metadata read)."""
        try:
            kwargs: dict[str, Any] = {"include": []}
            if where:
                kwargs["where"] = where
            return list(self._col.get(**kwargs)["ids"])
        except Exception as e:
            raise StorageError(f"Chroma could not list records: {e}") from e

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        try:
            self._col.delete(ids=list(ids))
        except Exception as e:
            raise StorageError(f"Chroma could not delete {len(ids)} record(s): {e}") from e

    def get(self, ids: Sequence[str]) -> dict[str, tuple[str, Metadata]]:
        """``{id: (document, metadata)}`` for those of ``ids`` that exist."""
        if not ids:
            return {}
        try:
            res = self._col.get(ids=list(ids), include=["documents", "metadatas"])
        except Exception as e:
            raise StorageError(f"Chroma could not read {len(ids)} record(s): {e}") from e
        return {
            i: (d or "", dict(m or {}))
            for i, d, m in zip(res["ids"], res["documents"], res["metadatas"], strict=True)
        }

    def all_ids(self) -> set[str]:
        try:
            return set(self._col.get(include=[])["ids"])
        except Exception as e:
            raise StorageError(f"Chroma could not list record ids: {e}") from e

    def count(self) -> int:
        try:
            return int(self._col.count())
        except Exception as e:
            raise StorageError(f"Chroma could not count records: {e}") from e

    def nearest(
        self, vector: Sequence[float], n: int, where: Where | None = None
    ) -> list[tuple[str, float, np.ndarray]]:
        """``(id, cosine distance, float32 vector)`` of the nearest ``n`` records matching
        ``where``, nearest first. Reads no text or metadata, which makes it cheaper than
        :meth:`query`."""
        if n <= 0:
            return []
        kwargs: dict[str, Any] = {
            "query_embeddings": [list(vector)],
            "n_results": n,
            "include": ["distances", "embeddings"],
        }
        if where:
            kwargs["where"] = where
        try:
            res = self._col.query(**kwargs)
        except Exception as e:
            raise StorageError(f"Chroma query failed: {e}") from e
        return [
            (i, float(d), np.asarray(v, dtype=np.float32))
            for i, d, v in zip(res["ids"][0], res["distances"][0], res["embeddings"][0], strict=True)
        ]

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """``{id: float32 vector}`` for those of ``ids`` that exist (no text or metadata read)."""
        if not ids:
            return {}
        try:
            res = self._col.get(ids=list(ids), include=["embeddings"])
        except Exception as e:
            raise StorageError(f"Chroma could not read {len(ids)} vector(s): {e}") from e
        return {
            i: np.asarray(v, dtype=np.float32)
            for i, v in zip(res["ids"], res["embeddings"], strict=True)
            if v is not None
        }

    def lookup(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[VectorHit]:
        """The records of those of ``ids`` that exist, as hits with ``distance`` = nan."""
        if not ids:
            return []
        include = ["documents", "metadatas"] + (["embeddings"] if with_vectors else [])
        try:
            res = self._col.get(ids=list(ids), include=include)
        except Exception as e:
            raise StorageError(f"Chroma could not read {len(ids)} record(s): {e}") from e
        vectors = res["embeddings"] if with_vectors else [None] * len(res["ids"])
        return [
            VectorHit(i, float("nan"), doc or "", dict(meta or {}), _array(vec))
            for i, doc, meta, vec in zip(res["ids"], res["documents"], res["metadatas"], vectors, strict=True)
        ]

    def close(self) -> None:
        """Release the client (an embedded client otherwise keeps a process-wide cache of
        the folder that goes stale when another process writes to it)."""
        close = getattr(self._client, "close", None)
        if callable(close):
            try:
                close()
            except Exception as e:
                raise StorageError(f"could not close the Chroma client: {e}") from e

    def scrub(self, ids: Sequence[str]) -> None:
        """Remove deleted records' text from the embedded Chroma files.

        Chroma keeps submitted records in its write-ahead log table and deleted rows
        in free SQLite pages. For records already deleted through :meth:`delete`, this
        blanks their log payloads, merges the full-text index and vacuums the file.
        A no-op for a Chroma server (its disk is not ours to scrub).
        """
        if self._embedded_path is None or not ids:
            return
        db = self._embedded_path / "chroma.sqlite3"
        try:
            con = sqlite3.connect(db, isolation_level=None, timeout=30)
            try:
                for start in range(0, len(ids), 500):
                    chunk = list(ids[start : start + 500])
                    marks = ",".join("?" * len(chunk))
                    con.execute(f"UPDATE embeddings_queue SET metadata = NULL WHERE id IN ({marks})", chunk)
                con.execute(
                    "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
                )
                con.execute("VACUUM")
            finally:
                con.close()
        except sqlite3.Error as e:
            raise StorageError(f"could not scrub deleted text from {db}: {e}") from e


def _array(vector: Any) -> np.ndarray | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32)
