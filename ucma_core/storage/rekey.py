"""The upgrade of a folder's key names in Chroma (re-keying).

Chroma holds a metadata key for each tag, participant and top-level metadata value
of a record, named by a keyed hash under the folder's own secret (``key_secret`` in
``ucma.json``; see :class:`~ucma_core.storage.codec.ChromaKeys`), so Chroma's files
alone do not reveal the words. :class:`Rekey` is the part of
:class:`~ucma_core.storage.backend.Backend` (which inherits it) that names them:

* :attr:`Rekey.keys` is how the folder names them now;
* on open, :meth:`Rekey._upgrade` brings a folder written by an earlier version up
  to :data:`~ucma_core.storage.manifest.FEATURES` (a folder from before per-folder
  secrets is re-keyed, one from before filterable metadata gets those keys);
* :meth:`Rekey._rekey` (``Memory.rekey``) gives the folder a new secret: the records
  are copied into a new collection under the new names, and the atomic switch of
  ``ucma.json`` to it is the commit; :meth:`Rekey._finish_rekey` finishes, on the
  next open, one a crash interrupted after it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ucma_core.progress import ProgressCallback, notify
from ucma_core.storage import codec
from ucma_core.storage.journal import Journal
from ucma_core.storage.keywords import KeywordIndex, keyword_row
from ucma_core.storage.manifest import FEATURES, Manifest, new_key_secret
from ucma_core.storage.vectors import FOLDER_KEY, VectorStore

__all__ = ["Rekey"]


class Rekey:
    """The key names of :class:`~ucma_core.storage.backend.Backend`'s folder in Chroma.

    The attributes below are the backend's (set by its constructor and ``_open``); the
    method declared for type checking only is the backend's too.
    """

    folder: Path
    manifest: Manifest
    keywords: KeywordIndex
    vectors: VectorStore
    _journal: Journal
    _keys: tuple[str | None, codec.ChromaKeys] | None

    if TYPE_CHECKING:

        def _set_manifest(self, **changes: Any) -> None: ...

    @property
    def keys(self) -> codec.ChromaKeys:
        """How this folder names tag, participant and metadata keys in Chroma."""
        secret = self.manifest.key_secret
        if self._keys is None or self._keys[0] != secret:
            self._keys = (secret, codec.ChromaKeys.from_hex(secret))
        return self._keys[1]

    def _upgrade(self) -> None:
        """Bring a folder written by an earlier version up to :data:`~ucma_core.storage.manifest.FEATURES`."""
        if "keyed-hashes" not in self.manifest.features:
            self._rekey()  # names every key afresh, metadata keys of old records included
        elif "metadata-keys" not in self.manifest.features:
            self._promote_metadata()
        if not set(FEATURES) <= set(self.manifest.features):
            self._set_manifest(features=tuple(dict.fromkeys((*self.manifest.features, *FEATURES))))

    def _rekey(self, progress: ProgressCallback | None = None) -> None:
        """Give the folder its own key secret and name every tag, participant and metadata key
        in Chroma with it (a folder from before per-folder secrets has plain hashes there).

        All or nothing across a crash: the records are copied into a new collection under
        the new key names, and switching ``ucma.json`` to that collection and secret (one
        atomic write) is the commit. A crash before it leaves the folder as it was (the
        next open drops the partial copy and starts again); a crash after it is finished
        by :meth:`_finish_rekey` on the next open."""
        secret = new_key_secret()
        keys = codec.ChromaKeys.from_hex(secret)
        old = self.manifest.collection
        for name, meta in self.vectors.collections().items():  # a copy an earlier try left
            if name != old and meta.get(FOLDER_KEY) == self.manifest.folder_id:
                self.vectors.drop(name)
        new = self.manifest.next_collection()
        self.vectors.copy_to(
            new,
            self.manifest.folder_id,
            rewrite=lambda memory_id, text, stored: codec.rekey(memory_id, text, stored, keys),
            progress=progress,
        )
        features = tuple(dict.fromkeys((*self.manifest.features, *FEATURES)))
        self.manifest = dataclasses.replace(
            self.manifest, collection=new, key_secret=secret, features=features
        )
        self.manifest.save(self.folder)  # the commit
        self._journal.header = {"manifest": self.manifest.to_dict()}
        notify(progress, 0, 1, "dropping the old collection")
        self._finish_rekey()
        notify(progress, 1, 1, "dropping the old collection")

    def _finish_rekey(self) -> None:
        """After the manifest's key secret changed (a re-key, or a keyword index rebuilt
        without its copy of the manifest): drop the collection the copy in the keyword index
        names if it is this folder's old one, then rename the keys in the keyword index's
        copies of the records and record the manifest there, in one transaction (so a crash
        anywhere here is finished by the next open)."""
        copy = self.keywords.get_meta("manifest")
        try:
            before = json.loads(copy) if copy else {}
        except ValueError:
            before = {}
        if not isinstance(before, dict) or before.get("key_secret") == self.manifest.key_secret:
            return
        old = before.get("collection")
        if isinstance(old, str) and old != self.manifest.collection:
            if self.vectors.collections().get(old, {}).get(FOLDER_KEY) == self.manifest.folder_id:
                self.vectors.drop(old)
            self.vectors.scrub([])  # the old key names leave the file's free pages too
        keys = self.keys
        self.keywords.rewrite_stored(
            lambda memory_id, text, stored: codec.rekey(memory_id, text, stored, keys),
            {"manifest": json.dumps(self.manifest.to_dict())},
        )

    def _promote_metadata(self) -> None:
        """Store each record's top-level scalar metadata values under filterable keys
        (Chroma and the keyword index's copy), so ``metadata_filter`` sees old records."""
        ids = sorted(self.vectors.all_ids())
        for start in range(0, len(ids), 500):
            rows = self.vectors.get(ids[start : start + 500])
            records = {i: codec.decode(i, doc, meta, None) for i, (doc, meta) in rows.items()}
            extra = {i: codec.filterable_metadata(r.metadata, self.keys) for i, r in records.items()}
            changed = [i for i in records if extra[i]]
            self.vectors.update_metadata(changed, [extra[i] for i in changed])
            self.keywords.delete(changed)
            self.keywords.add(keyword_row(records[i], {**rows[i][1], **extra[i]}) for i in changed)
