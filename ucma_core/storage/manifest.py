"""The folder manifest: format version, embedder identity and Chroma collection."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ucma_core.errors import CorruptStoreError, EmbedderMismatchError, SchemaVersionError
from ucma_core.storage.atomic import read_json, write_json_atomic

__all__ = ["FEATURES", "SCHEMA_VERSION", "Manifest", "new_key_secret"]

#: Bumped whenever the on-disk layout changes incompatibly.
SCHEMA_VERSION = 1
_FILE = "ucma.json"
_FORMAT = "ucma-memory-folder"
#: Additive layout changes a folder has (older folders are upgraded on open, then marked):
#: ``metadata-keys`` — callers' top-level scalar metadata values are filterable Chroma keys;
#: ``intents`` — every write is journaled with its intent and a commit mark, so any record
#: Chroma and the graph disagree about without an open intent means data was lost;
#: ``keyed-hashes`` — tag, participant and metadata keys in Chroma are keyed hashes under the
#: folder's ``key_secret`` (see :class:`~ucma_core.storage.codec.ChromaKeys`).
FEATURES = ("metadata-keys", "intents", "keyed-hashes")


@dataclass(frozen=True)
class Manifest:
    """What a memory folder says about itself."""

    folder_id: str
    created_at: float
    embedder_name: str
    dimension: int
    collection: str
    schema_version: int = SCHEMA_VERSION
    features: tuple[str, ...] = FEATURES
    #: The folder's random secret for Chroma's key names (hex; ``None`` in folders from before).
    key_secret: str | None = None
    #: What adapters keep in the folder (see :mod:`ucma_core.attachments`): name →
    #: ``{"files": [paths relative to the folder], "pending": [forgets to apply on attach]}``.
    attachments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, hash=False, compare=False)

    @staticmethod
    def path(folder: Path) -> Path:
        return folder / _FILE

    @classmethod
    def load(cls, folder: Path) -> Manifest | None:
        """Return the folder's manifest, or ``None`` for a folder never used by UCMA."""
        path = cls.path(folder)
        if not path.exists():
            return None
        return cls.from_dict(read_json(path), folder)

    @classmethod
    def from_dict(cls, data: object, folder: Path) -> Manifest:
        """The manifest ``data`` (as :meth:`to_dict` wrote it) describes."""
        path = cls.path(folder)
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise CorruptStoreError(f"{path} is not a UCMA manifest")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{folder} uses on-disk schema version {version}; this UCMA reads version "
                f"{SCHEMA_VERSION}. Open it with a matching UCMA release."
            )
        try:
            return cls(
                folder_id=str(data["folder_id"]),
                created_at=float(data["created_at"]),
                embedder_name=str(data["embedder"]["name"]),
                dimension=int(data["embedder"]["dimension"]),
                collection=str(data["collection"]),
                features=tuple(str(f) for f in data.get("features", ())),
                key_secret=_secret(data.get("key_secret")),
                attachments=_attachments(data.get("attachments")),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptStoreError(f"{path} is missing a field: {e}") from e

    @classmethod
    def create(
        cls, folder: Path, *, embedder_name: str, dimension: int, now: float, collection: str | None
    ) -> Manifest:
        folder_id = uuid.uuid4().hex
        manifest = cls(
            folder_id=folder_id,
            created_at=now,
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection or f"ucma-{folder_id}",
            key_secret=new_key_secret(),
        )
        manifest.save(folder)
        return manifest

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "format": _FORMAT,
            "schema_version": self.schema_version,
            "folder_id": self.folder_id,
            "created_at": self.created_at,
            "embedder": {"name": self.embedder_name, "dimension": self.dimension},
            "collection": self.collection,
            "features": list(self.features),
        }
        if self.key_secret is not None:
            data["key_secret"] = self.key_secret
        if self.attachments:
            data["attachments"] = {name: dict(entry) for name, entry in self.attachments.items()}
        return data

    def save(self, folder: Path) -> None:
        """Write this manifest into ``folder`` (atomically)."""
        write_json_atomic(self.path(folder), self.to_dict())

    def next_collection(self) -> str:
        """The name of the collection a rebuild copies this folder's records into."""
        base, _, generation = self.collection.rpartition(".g")
        if base and generation.isdigit():
            return f"{base}.g{int(generation) + 1}"
        return f"{self.collection}.g2"

    def check_embedder(self, name: str, dimension: int, folder: Path) -> None:
        """Raise :class:`EmbedderMismatchError` unless ``name``/``dimension`` match the folder's."""
        if dimension != self.dimension:
            raise EmbedderMismatchError(
                f"embedding dimension {dimension} does not match this memory folder's "
                f"{self.dimension} (created with {self.embedder_name!r}); open {folder} with the "
                "same embedder or re-embed into a new folder"
            )
        if name != self.embedder_name:
            raise EmbedderMismatchError(
                f"embedder {name!r} is not the one that created {folder} ({self.embedder_name!r}); "
                "vectors from different models cannot be compared. Open it with the same embedder "
                "or re-embed into a new folder"
            )


def new_key_secret() -> str:
    """A fresh random secret for a folder's Chroma key names (256 bits, hex)."""
    return secrets.token_hex(32)


def _secret(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    try:
        if len(bytes.fromhex(text)) >= 16:
            return text
    except ValueError:
        pass
    raise ValueError(f"key_secret is not a hex secret of at least 16 bytes: {text[:8]!r}...")


def _attachments(value: object) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, dict) for k, v in value.items()
    ):
        raise ValueError("attachments is not a mapping of names to entries")
    return {name: dict(entry) for name, entry in value.items()}
