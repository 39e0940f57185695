"""Working memory: the context window as a budgeted resource.

Three zones, each with a token budget counted exactly by a
:class:`~ucma_core.tokens.TokenCounter`:

* ``system`` — instructions; never evicted (an item that does not fit is refused);
* ``active`` — the live working set, including task-scoped slots;
* ``staging`` — memories just recalled by :meth:`~ucma_core.Memory.remember`,
  waiting to be promoted or dropped.

When an item does not fit, the zone evicts its lowest-priority items, priority
being ``0.7 × importance + 0.3 × recency`` (recency halves every hour since the
item was last touched, on the memory's clock). The sum of token counts in a zone
never exceeds its budget.

Task slots (question, retrieved fact, reasoning step, plan…) live in the active
zone, at most ``max_task_slots`` per task (the least relevant goes first), and are
cleared together when the task completes.

Items carry a scope like memories do (``user_id``, ``agent_id``, ``session_id``).
Reads — :meth:`WorkingMemory.items` and :meth:`WorkingMemory.render_context` — take
a scope: for a user they show that user's items and the shared ones (added without
a user, such as instructions), never another user's; :data:`~ucma_core.ANY` (the
default) shows everything. Recalled memories are staged with their own scope;
items moved to long-term memory keep it, so ``forget_user`` removes them too.

Examples:
    >>> from ucma_core.config import WorkingMemoryConfig
    >>> class Words:
    ...     def count(self, text: str) -> int:
    ...         return len(text.split())
    >>> wm = WorkingMemory(WorkingMemoryConfig(), Words(), lambda: 0.0)
    >>> _ = wm.add("Be brief.", zone="system")
    >>> _ = wm.add("Ana is planning a trip to Porto.", user_id="ana")
    >>> _ = wm.add("Ben is allergic to nuts.", user_id="ben")
    >>> print(wm.render_context(user_id="ana"))
    Be brief.
    <BLANKLINE>
    Ana is planning a trip to Porto.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ucma_core.config import WorkingMemoryConfig
from ucma_core.errors import InvalidInputError
from ucma_core.protocols import Clock
from ucma_core.records import RetrievalResult
from ucma_core.scope import ANY, AnyScope, ScopeId
from ucma_core.tokens import TokenCounter
from ucma_core.validation import check_scope_id

__all__ = ["SLOT_TYPES", "ZONES", "WorkingItem", "WorkingMemory"]

ZONES = ("system", "active", "staging")
SLOT_TYPES = ("question", "retrieved_fact", "reasoning_step", "context", "plan", "evaluation", "reminder")


@dataclass(frozen=True)
class WorkingItem:
    id: str
    content: str
    zone: str
    tokens: int
    importance: float
    inserted_at: float
    last_access: float
    slot: str | None = None
    task_id: str | None = None
    memory_id: str | None = None
    sequence: int = 0
    reads: int = 0
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    def visible_to(self, user_id: ScopeId, agent_id: ScopeId, session_id: ScopeId) -> bool:
        """Whether a read in that scope shows this item (shared items, added without a
        user, agent or session, show in every scope that narrows that field)."""
        for mine, wanted in (
            (self.user_id, user_id),
            (self.agent_id, agent_id),
            (self.session_id, session_id),
        ):
            if wanted is None or isinstance(wanted, AnyScope) or mine is None:
                continue
            if mine != wanted:
                return False
        return not (user_id is None and self.user_id is not None)


class WorkingMemory:
    """Budgeted zones of context for one agent loop (in memory, not persisted)."""

    def __init__(self, config: WorkingMemoryConfig, counter: TokenCounter, clock: Clock) -> None:
        self._budgets = {
            "system": config.system_tokens,
            "active": config.active_tokens,
            "staging": config.staging_tokens,
        }
        self._max_slots = config.max_task_slots
        self._counter = counter
        self._clock = clock
        self._items: dict[str, WorkingItem] = {}
        self._lock = threading.RLock()
        self._sequence = 0

    # ------------------------------------------------------------------ core
    def count_tokens(self, text: str) -> int:
        return int(self._counter.count(text))

    def add(
        self,
        content: str,
        *,
        zone: str = "active",
        importance: float = 0.5,
        item_id: str | None = None,
        slot: str | None = None,
        task_id: str | None = None,
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> WorkingItem | None:
        """Place ``content`` in ``zone``; returns the item, or ``None`` if it cannot fit.

        Re-adding an ``item_id`` replaces that item. Lower-priority items of the zone
        are evicted to make room (never in ``system``). ``user_id`` / ``agent_id`` /
        ``session_id`` scope the item (unset: shared by every scope).
        """
        scope = (
            check_scope_id(user_id, "user_id"),
            check_scope_id(agent_id, "agent_id"),
            check_scope_id(session_id, "session_id"),
        )
        if zone not in ZONES:
            raise InvalidInputError(f"unknown zone {zone!r}; expected one of: {', '.join(ZONES)}")
        if not isinstance(content, str) or not content.strip():
            raise InvalidInputError("working-memory content must be a non-empty str")
        if (
            isinstance(importance, bool)
            or not isinstance(importance, (int, float))
            or not 0 <= importance <= 1
        ):
            raise InvalidInputError(f"importance must be in [0, 1], got {importance!r}")
        tokens = self.count_tokens(content)
        now = float(self._clock())
        with self._lock:
            key = item_id or uuid.uuid4().hex
            previous = self._items.pop(key, None)
            if tokens > self._budgets[zone] or not self._make_room(zone, tokens, now):
                if previous is not None:
                    self._items[key] = previous
                return None
            self._sequence += 1
            item = WorkingItem(
                key,
                content,
                zone,
                tokens,
                float(importance),
                now,
                now,
                slot,
                task_id,
                memory_id,
                self._sequence,
                0,
                *scope,
            )
            self._items[key] = item
            return item

    def _used(self, zone: str) -> int:
        return sum(i.tokens for i in self._items.values() if i.zone == zone)

    def _priority(self, item: WorkingItem, now: float) -> float:
        hours = max(0.0, now - item.last_access) / 3600.0
        return float(0.7 * item.importance + 0.3 * 0.5**hours)

    def _make_room(self, zone: str, tokens: int, now: float) -> bool:
        budget = self._budgets[zone]
        if self._used(zone) + tokens <= budget:
            return True
        if zone == "system":
            return False
        victims = sorted(
            (i for i in self._items.values() if i.zone == zone),
            key=lambda i: (self._priority(i, now), i.sequence),
        )
        used = self._used(zone)
        for victim in victims:
            if used + tokens <= budget:
                break
            del self._items[victim.id]
            used -= victim.tokens
        return used + tokens <= budget

    def get(self, item_id: str) -> WorkingItem | None:
        """The item (its recency is refreshed), or ``None``."""
        with self._lock:
            item = self._items.get(item_id)
            if item is None:
                return None
            item = replace(item, last_access=float(self._clock()), reads=item.reads + 1)
            self._items[item_id] = item
            return item

    def remove(self, item_id: str) -> bool:
        with self._lock:
            return self._items.pop(item_id, None) is not None

    def clear(self, zone: str | None = None) -> int:
        """Empty one zone (or all); returns how many items went."""
        with self._lock:
            doomed = [i for i, item in self._items.items() if zone is None or item.zone == zone]
            for item_id in doomed:
                del self._items[item_id]
            return len(doomed)

    def items(
        self,
        zone: str | None = None,
        *,
        user_id: ScopeId = ANY,
        agent_id: ScopeId = None,
        session_id: ScopeId = None,
    ) -> list[WorkingItem]:
        """Items of a zone (or all) visible in the scope given (default: every item), most
        important first."""
        with self._lock:
            chosen = [
                i
                for i in self._items.values()
                if (zone is None or i.zone == zone) and i.visible_to(user_id, agent_id, session_id)
            ]
        return sorted(chosen, key=lambda i: (ZONES.index(i.zone), -i.importance, i.sequence))

    def forget_user(self, user_id: str) -> int:
        """Drop every item of ``user_id``; returns how many went."""
        with self._lock:
            doomed = [k for k, item in self._items.items() if item.user_id == user_id]
            for key in doomed:
                del self._items[key]
            return len(doomed)

    def usage(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {z: {"used": self._used(z), "budget": b} for z, b in self._budgets.items()}

    def render_context(
        self, *, user_id: ScopeId = ANY, agent_id: ScopeId = None, session_id: ScopeId = None
    ) -> str:
        """System, active and staging items in that order, most important first within a
        zone; slots are labelled with their type. Empty zones are skipped.

        For a ``user_id`` only that user's and shared items are rendered, never another
        user's (see the module docstring); by default every item is."""
        sections = []
        for zone in ZONES:
            lines = [
                f"[{i.slot}] {i.content}" if i.slot else i.content
                for i in self.items(zone, user_id=user_id, agent_id=agent_id, session_id=session_id)
            ]
            if lines:
                sections.append("\n".join(lines))
        return "\n\n".join(sections)

    # ------------------------------------------------------------------ recall
    def stage(self, results: Iterable[RetrievalResult]) -> list[WorkingItem]:
        """Put recalled memories in the staging zone (importance = their rank score), each in
        its own memory's scope."""
        staged = []
        for result in results:
            record = result.record
            item = self.add(
                result.content,
                zone="staging",
                importance=min(1.0, max(0.0, result.score)),
                item_id=f"memory:{result.id}",
                memory_id=result.id,
                user_id=record.user_id,
                agent_id=record.agent_id,
                session_id=record.session_id,
            )
            if item is not None:
                staged.append(item)
        return staged

    def promote(self, item_id: str) -> WorkingItem | None:
        """Move a staged item into the active zone (``None`` if it is gone or cannot fit)."""
        with self._lock:
            item = self._items.get(item_id)
            if item is None:
                return None
            return self.add(
                item.content,
                zone="active",
                importance=item.importance,
                item_id=item.id,
                slot=item.slot,
                task_id=item.task_id,
                memory_id=item.memory_id,
                user_id=item.user_id,
                agent_id=item.agent_id,
                session_id=item.session_id,
            )

    # ------------------------------------------------------------------ task slots
    def set_slot(
        self,
        task_id: str,
        slot: str,
        content: str,
        *,
        relevance: float = 0.5,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> WorkingItem | None:
        """Add a task-scoped slot in the active zone; the task keeps at most
        ``max_task_slots`` slots, dropping the least relevant."""
        if slot not in SLOT_TYPES:
            raise InvalidInputError(f"unknown slot type {slot!r}; expected one of: {', '.join(SLOT_TYPES)}")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidInputError("task_id must be a non-empty str")
        with self._lock:
            mine = [i for i in self._items.values() if i.task_id == task_id]
            if len(mine) >= self._max_slots:
                weakest = min(mine, key=lambda i: (i.importance, i.sequence))
                if weakest.importance > relevance:
                    return None
                del self._items[weakest.id]
            return self.add(
                content,
                zone="active",
                importance=relevance,
                slot=slot,
                task_id=task_id,
                user_id=user_id,
                agent_id=agent_id,
                session_id=session_id,
            )

    def slots(self, task_id: str, slot: str | None = None) -> list[WorkingItem]:
        """A task's slots in insertion order."""
        with self._lock:
            found = [
                i for i in self._items.values() if i.task_id == task_id and (slot is None or i.slot == slot)
            ]
        return sorted(found, key=lambda i: i.sequence)

    def complete_task(self, task_id: str) -> list[WorkingItem]:
        """Remove and return a finished task's slots (observe them to keep an episode of the task)."""
        with self._lock:
            done = self.slots(task_id)
            for item in done:
                del self._items[item.id]
            return done

    # ------------------------------------------------------------------ to long-term memory
    def due_for_long_term(
        self, now: float, *, access_count: int, age_hours: float, importance: float, capacity: float
    ) -> list[WorkingItem]:
        """Items not yet in long-term memory that should move there: read at least
        ``access_count`` times, held ``age_hours`` or longer, at least ``importance``, or
        sitting in a zone filled to ``capacity`` (then its oldest half). The system zone
        and recalled memories (they are long-term already) never move."""
        with self._lock:
            candidates = [i for i in self._items.values() if i.zone != "system" and i.memory_id is None]
            due = {
                i.id
                for i in candidates
                if i.reads >= access_count
                or now - i.inserted_at >= age_hours * 3600.0
                or i.importance >= importance
            }
            for zone in ("active", "staging"):
                if self._used(zone) >= capacity * self._budgets[zone]:
                    in_zone = sorted((i for i in candidates if i.zone == zone), key=lambda i: i.sequence)
                    due.update(i.id for i in in_zone[: max(1, len(in_zone) // 2)])
            return sorted((self._items[i] for i in due), key=lambda i: i.sequence)

    def mark_stored(self, item_id: str, memory_id: str) -> None:
        """Record that an item now lives in long-term memory as ``memory_id``."""
        with self._lock:
            item = self._items.get(item_id)
            if item is not None:
                self._items[item_id] = replace(item, memory_id=memory_id)
