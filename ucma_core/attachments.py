"""What adapters keep beside the memory: the owner model of the folder.

A file an adapter keeps in the memory folder (LangGraph's checkpoint database) and
a writer that holds turns not yet stored (a :class:`~ucma_core.conversation.WriteBehind`)
belong to the memory. They are *attached* with :meth:`Memory.attach
<ucma_core.Memory.attach>`, and every promise the core makes about the folder then
reaches them:

* ``Memory.forget_user`` / ``forget_session`` call the attachment's
  :meth:`~Attachment.forget_user` / :meth:`~Attachment.forget_session` first (it
  drops what it holds of the user or session and scrubs its files), then delete
  the memories;
* ``Memory.verify`` adds what :meth:`~Attachment.verify` finds to the report;
* ``Memory.close`` closes every attachment first (newest first), so queued writes
  are stored before the folder is released;
* the folder's manifest (``ucma.json``) lists the attachment's files, so
  ``Memory.attachments``, ``ucma info`` and ``ucma export`` say what else the
  folder holds.

A forget that runs while an attachment with files is not open (``ucma forget-user``
from the command line) is applied through the ``ucma.attachments`` entry point group:
an installed package registers, under the attachment's name, a callable
``open(memory) -> Attachment`` that opens (and attaches) it; the forget then runs at
once and the attachment is closed again. Without such an entry point the forget is
recorded in the manifest as *pending* and applied the next time the attachment is
attached, before anything else; ``Memory.verify`` reports it until then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ucma_core.errors import InvalidInputError, StorageError
from ucma_core.storage.diskspace import storage_error

if TYPE_CHECKING:
    from ucma_core.memory import Memory

__all__ = ["ENTRY_POINT_GROUP", "Attachment", "file_error", "opener"]

#: The entry point group that maps an attachment's name to ``open(memory) -> Attachment``.
ENTRY_POINT_GROUP = "ucma.attachments"


@runtime_checkable
class Attachment(Protocol):
    """Something an adapter keeps beside a memory (files, queued writes).

    ``name`` is stable across processes (it keys the manifest entry); ``files`` are
    the paths it keeps (those inside the memory folder are recorded in the manifest).
    Every hook may be called from any thread, never while the memory's lock is held.
    """

    @property
    def name(self) -> str:
        """A stable name: lowercase letters, digits and ``-`` (``"langgraph-checkpoints"``)."""
        ...

    def files(self) -> Sequence[Path]:
        """The files it keeps (may be empty)."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Store what it holds; ``False`` if ``timeout`` seconds passed first."""
        ...

    def close(self) -> None:
        """Store what it holds and release its files; idempotent. It detaches itself."""
        ...

    def forget_user(self, user_id: str) -> None:
        """Drop everything of ``user_id`` it holds or keeps, leaving none of their text in its files."""
        ...

    def forget_session(self, session_id: str, *, user_id: str | None, agent_id: str | None) -> None:
        """Drop everything of one session it holds or keeps."""
        ...

    def verify(self) -> Sequence[str]:
        """Problems found (empty when healthy); reads only."""
        ...


def check_name(name: object) -> str:
    """An attachment name must be a short lowercase token."""
    if (
        not isinstance(name, str)
        or not name
        or len(name) > 64
        or not all(c.islower() or c.isdigit() or c == "-" for c in name)
    ):
        raise InvalidInputError(
            f"an attachment's name must be 1-64 lowercase letters, digits or '-', got {name!r}"
        )
    return name


def opener(name: str) -> Callable[[Memory], Attachment] | None:
    """The installed ``open(memory) -> Attachment`` registered for ``name``, if any (``None``
    also when its package's dependencies are missing: ``ucma`` registers the LangGraph
    checkpointer's opener whether or not LangGraph is installed)."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == name:
            try:
                loaded: Any = point.load()
            except ImportError:
                return None
            return loaded if callable(loaded) else None
    return None


def file_error(error: BaseException, what: str, *, folder: Path | None = None) -> StorageError:
    """A :class:`~ucma_core.errors.StorageError` for a failure in an attachment's file (a
    :class:`~ucma_core.errors.DiskFullError` that says so when the disk is full), as the
    core reports its own files' failures."""
    return storage_error(error, what, folder=folder)
