"""A consistency check of one memory folder: Chroma, the graph and the keyword index
against each other.

Chroma holds every record; the graph must have one memory node per record and the
keyword index one row per record. :class:`VerifyReport` lists every id that breaks
this, plus graph nodes that are neither memories nor entities.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VerifyReport"]


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

    @property
    def ok(self) -> bool:
        """True when Chroma, the graph and the keyword index agree."""
        return not (
            self.only_in_chroma
            or self.only_in_graph
            or self.missing_keywords
            or self.stale_keywords
            or self.bare_nodes
        )
