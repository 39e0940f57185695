"""Procedural memory: named, reusable step sequences that learn from outcomes.

A procedure's id comes from its scope and name, so a name is unique within a
scope. Each :meth:`ProceduralStore.record_outcome` updates the running success
rate; a draft with at least ``_PROMOTE_AFTER`` runs and a success rate of at least
0.6 becomes active, and an active one that falls under 0.3 after as many runs is
deprecated. Ranking weighs the success rate by the evidence behind it, so a
procedure that worked once does not outrank one that worked forty times out of
fifty.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ucma_core.errors import InvalidInputError
from ucma_core.records import MemoryType, Procedure, ProcedureStatus
from ucma_core.storage.graph import EdgeType
from ucma_core.storage.nodes import ProcedureNode
from ucma_core.stores.context import StoreContext, stable_id
from ucma_core.stores.semantic import normalise

__all__ = ["ProceduralStore", "evidence_weighted_score"]

_PROMOTE_AFTER = 3
_FULL_EVIDENCE = 10


def evidence_weighted_score(success_rate: float, executions: int) -> float:
    """Success rate shrunk towards 0.5 until ``_FULL_EVIDENCE`` runs back it up."""
    weight = min(1.0, executions / _FULL_EVIDENCE)
    return 0.5 + (success_rate - 0.5) * weight


def next_status(status: ProcedureStatus, success_rate: float, executions: int) -> ProcedureStatus:
    if executions < _PROMOTE_AFTER:
        return status
    if status is ProcedureStatus.DRAFT and success_rate >= 0.6:
        return ProcedureStatus.ACTIVE
    if status is ProcedureStatus.ACTIVE and success_rate < 0.3:
        return ProcedureStatus.DEPRECATED
    return status


class ProceduralStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def add(
        self,
        *,
        name: str,
        steps: tuple[str, ...],
        description: str,
        trigger_tags: tuple[str, ...],
        status: ProcedureStatus,
        user_id: str | None,
        agent_id: str | None,
        session_id: str | None,
        importance: float,
        source: str,
        metadata: dict[str, Any],
        source_ids: Sequence[str],
    ) -> Procedure:
        ctx = self._ctx
        graph = ctx.backend.graph
        memory_id = stable_id("procedure", user_id, agent_id, normalise(name))
        if memory_id in graph:
            raise InvalidInputError(
                f"a procedure named {name!r} already exists in this scope (id {memory_id}); "
                "forget it first or choose another name"
            )
        now = ctx.now()
        lines = [f"{name}: {description}".strip().rstrip(":")]
        lines += [f"{i}. {step}" for i, step in enumerate(steps, 1)]
        procedure = Procedure(
            id=memory_id,
            memory_type=MemoryType.PROCEDURAL,
            content="\n".join(lines),
            timestamp=now,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            importance=importance,
            source=source,
            tags=trigger_tags,
            metadata=metadata,
            source_ids=ctx.known(source_ids),
            **ctx.fresh_state(importance, now),
            name=name,
            description=description,
            steps=steps,
            trigger_tags=trigger_tags,
            status=status,
        )
        ctx.backend.insert([procedure], ctx.embedder.embed([procedure.content]))
        self.link(memory_id)
        return procedure

    def link(self, memory_id: str) -> None:
        self._ctx.link_sources(memory_id, EdgeType.DERIVED_FROM)

    def find_by_name(self, name: str, user_id: str | None, agent_id: str | None) -> str | None:
        """The id of the procedure called ``name`` in this scope, if there is one."""
        memory_id = stable_id("procedure", user_id, agent_id, normalise(name))
        return memory_id if memory_id in self._ctx.backend.graph else None

    def record_outcome(self, memory_id: str, success: bool) -> None:
        """Fold one run's outcome into the running success rate (and maybe the status)."""
        node = self._ctx.backend.graph.node_as(memory_id, ProcedureNode)
        assert node is not None
        executions = int(node.executions) + 1
        rate = float(node.success_rate) + ((1.0 if success else 0.0) - float(node.success_rate)) / executions
        status = next_status(ProcedureStatus(node.status), rate, executions)
        self._ctx.reinforce(
            memory_id,
            self._ctx.now(),
            executions=executions,
            success_rate=round(rate, 6),
            usage_count=int(node.usage_count) + 1,
            status=status.value,
        )

    def set_status(self, memory_id: str, status: ProcedureStatus) -> None:
        self._ctx.backend.set_state(memory_id, status=status.value)

    @staticmethod
    def find(
        tags: Sequence[str],
        procedures: Iterable[tuple[str, dict[str, Any]]],
        *,
        include_deprecated: bool = False,
    ) -> list[str]:
        """Ids of those ``procedures`` (``(id, graph attrs)``, already scoped) sharing a
        trigger tag with ``tags``, best evidence first."""
        wanted = {t.lower() for t in tags}
        scored = []
        for memory_id, attrs in procedures:
            if not include_deprecated and attrs["status"] == ProcedureStatus.DEPRECATED.value:
                continue
            overlap = len(wanted & {t.lower() for t in attrs.get("trigger_tags", [])})
            if wanted and not overlap:
                continue
            score = evidence_weighted_score(float(attrs["success_rate"]), int(attrs["executions"]))
            scored.append((overlap, score, memory_id))
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        return [memory_id for _, _, memory_id in scored]
