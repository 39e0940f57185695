"""What a consistency check or a repair of one memory folder found.

Chroma holds every record; the graph must have one memory node per record and the
keyword index one row per record. :class:`VerifyReport` lists every id that breaks
this, graph nodes that are neither memories nor entities, work a failed call left
to finish, and what was recovered when the folder was opened.
:class:`RepairReport` says what :meth:`ucma_core.Memory.repair` found and did (or
would do, in a dry run), including every memory it dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ucma_core.storage.skipped import Skipped

__all__ = ["RepairReport", "VerifyReport"]


@dataclass(frozen=True)
class VerifyReport:
    """What :meth:`ucma_core.Memory.verify` found.

    Attributes:
        chroma_records: records in Chroma.
        graph_memories: memory nodes in the graph.
        keyword_rows: rows in the keyword index.
        entities: entity nodes in the graph.
        only_in_chroma: records whose graph node is missing.
        only_in_graph: memory nodes whose Chroma record is missing.
        missing_keywords: records without a keyword row.
        stale_keywords: keyword rows without a record.
        bare_nodes: graph nodes that are neither a memory nor an entity.
        problems: other trouble (an unfinished rollback or deletion, an unreadable vector index).
        notes: recoveries made without loss when the folder was opened (a torn journal
            line, a damaged snapshot replaced by the previous one, a rebuilt index).
        skipped: messages the conversation helpers were handed and did not store (see
            :mod:`ucma_core.storage.skipped`), oldest first. They do not make the folder
            inconsistent, so they leave :attr:`ok` as it is.
    """

    chroma_records: int
    graph_memories: int
    keyword_rows: int
    entities: int
    only_in_chroma: tuple[str, ...] = ()
    only_in_graph: tuple[str, ...] = ()
    missing_keywords: tuple[str, ...] = ()
    stale_keywords: tuple[str, ...] = ()
    bare_nodes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    @property
    def ok(self) -> bool:
        """True when Chroma, the graph and the keyword index agree and nothing is pending."""
        return not (
            self.only_in_chroma
            or self.only_in_graph
            or self.missing_keywords
            or self.stale_keywords
            or self.bare_nodes
            or self.problems
        )


@dataclass(frozen=True)
class RepairReport:
    """What :meth:`ucma_core.Memory.repair` found and did.

    Attributes:
        applied: False for a dry run (nothing was changed).
        problems: what was wrong with the folder (empty: it opened without a repair).
        plan: what the repair does about it (a dry run's answer).
        actions: what the repair did.
        restored_from_chroma: ids whose graph node was rebuilt from Chroma (first values).
        restored_from_keywords: ids put back into Chroma from the keyword index's copy.
        dropped: ids of memories removed because their text was nowhere left.
        notes: recoveries made without loss.
        rebuilt_index: vector-index directories found damaged, set aside (moved to
            ``chroma.damaged-index-N/``, never deleted) and rebuilt from the records' text.
    """

    applied: bool
    problems: tuple[str, ...] = ()
    plan: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    restored_from_chroma: tuple[str, ...] = ()
    restored_from_keywords: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    rebuilt_index: tuple[str, ...] = ()

    @property
    def needed(self) -> bool:
        """Whether the folder needed a repair."""
        return bool(self.problems)
