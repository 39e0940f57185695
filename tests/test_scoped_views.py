"""What a scoped view forwards beyond reads and writes (pin / unpin, updates by id, its scopes),
and ``remember(..., reinforce=False)``: a look that leaves retention as it was."""

from __future__ import annotations

import inspect

import pytest

from ucma_core import Memory, ScopedMemory
from ucma_core.errors import InvalidInputError, MemoryNotFoundError
from ucma_core.records import ObserveDefaults, ScopedObserveDefaults

#: Memory methods a view does not forward, and why.
NOT_FORWARDED = {
    "scope",  # a view is already one scope
    "now",
    "new_session",  # the memory's current session; a view has its own
    "close",
    "stats",  # whole-folder reads and maintenance
    "verify",
    "skipped",  # the folder's record of turns not stored (each record names its scope)
    "record_skipped",
    "prune",
    "expire",
    "rekey",  # the whole memory's key secret
    "consolidate",
    "start_consolidation",
    "stop_consolidation",
    "forget_user",
    "snapshot",
    "restore",
    "attach",  # what adapters keep in the folder is the whole memory's
    "detach",
    "check_space",
    "flush",  # the write-behind is the whole memory's
    "link",  # graph plumbing by id, not scoped
    "edges",
    "neighbours",
}


def test_a_view_forwards_every_per_user_method_with_its_async_partner() -> None:
    public = {
        n
        for cls in Memory.__mro__[:-1]
        for n, v in vars(cls).items()
        if inspect.isfunction(v) and not inspect.iscoroutinefunction(v) and not n.startswith("_")
    }
    assert {"pin", "unpin", "observe", "remember"} <= public
    missing = sorted(n for n in public - NOT_FORWARDED if not hasattr(ScopedMemory, n))
    assert missing == []
    for name in public - NOT_FORWARDED:
        assert inspect.iscoroutinefunction(getattr(ScopedMemory, "a" + name, None)), name


#: View methods whose ``session_id`` is optional (the bound session) where Memory's is required.
SESSION_DEFAULTED = {"history", "forget_session"}


def test_a_view_method_takes_the_memory_methods_arguments_less_the_bound_ones() -> None:
    """Real signatures, kept equal to Memory's: a misspelt keyword fails as it does on Memory."""
    public = {n for n in dir(Memory) if not n.startswith("_") and hasattr(ScopedMemory, n)}
    methods = sorted(
        n
        for n in public
        if inspect.isfunction(getattr(ScopedMemory, n))
        and not inspect.iscoroutinefunction(getattr(ScopedMemory, n))
    )
    assert {"observe", "remember", "history", "list_memories", "intentions"} <= set(methods)
    for name in methods:
        memory_sig = inspect.signature(getattr(Memory, name))
        view_sig = inspect.signature(getattr(ScopedMemory, name))
        expected = [p for p in memory_sig.parameters.values() if p.name not in ("user_id", "agent_id")]
        if name == "observe_many":  # **defaults: Memory.observe's arguments, less the bound ones
            expected = [
                p.replace(annotation="Unpack[ScopedObserveDefaults]") if p.kind is p.VAR_KEYWORD else p
                for p in expected
            ]
        if name in SESSION_DEFAULTED:
            expected = [
                p.replace(annotation="str | None", default=None) if p.name == "session_id" else p
                for p in expected
            ]
        assert list(view_sig.parameters.values()) == expected, name
        assert view_sig.return_annotation == memory_sig.return_annotation, name
        assert name == "observe_many" or not any(p.kind is p.VAR_KEYWORD for p in expected), name
        partner = inspect.signature(getattr(ScopedMemory, "a" + name))
        assert list(partner.parameters.values()) == list(view_sig.parameters.values()), name


def test_observe_many_defaults_are_observes_arguments() -> None:
    observe = [p for p in inspect.signature(Memory.observe).parameters.values() if p.name != "self"]
    hints = {p.name: p.annotation for p in observe}

    def fields(typed: type) -> dict[str, str]:
        return {n: getattr(a, "__forward_arg__", a) for n, a in typed.__annotations__.items()}

    assert fields(ObserveDefaults) == hints
    unbound = {n: a for n, a in hints.items() if n not in ("user_id", "agent_id")}
    assert fields(ScopedObserveDefaults) == unbound


def test_a_view_pins_and_unpins_only_its_own_memories(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    ana, ben = mem.scope(user_id="ana"), mem.scope(user_id="ben")
    note = ana.observe("The spare key is under the blue pot", importance=0.3, keep=True)
    assert note is not None
    assert ben.pin(note) is False
    assert ana.pin(note) is True
    clock.advance(days=365)
    assert mem.prune(dry_run=True).protected == {"pinned": 1}
    assert ben.unpin(note) is False and mem.prune(dry_run=True).forgotten == ()
    assert ana.unpin(note) is True
    assert mem.prune(dry_run=True).forgotten == (note,)


async def test_async_pin_through_a_view(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    ana = mem.scope(user_id="ana")
    note = await ana.aobserve("Gate code 4411", importance=0.3, keep=True)
    assert await ana.apin(note) is True
    clock.advance(days=365)
    assert mem.prune(dry_run=True).protected == {"pinned": 1}


def test_updates_by_id_stay_in_the_view(mem: Memory) -> None:
    ana, ben = mem.scope(user_id="ana"), mem.scope(user_id="ben")
    procedure = ana.add_procedure("deploy", ["build", "ship"])
    learning = ana.learn("Clear the cache before a build")
    intention = ana.intend("Ask about the passport", "passport")
    for call in (
        lambda: ben.record_outcome(procedure.id, True),
        lambda: ben.validate_learning(learning.id, True),
        lambda: ben.resolve_intention(intention.id),
    ):
        with pytest.raises(MemoryNotFoundError):
            call()
    assert ana.record_outcome(procedure.id, True).executions == procedure.executions + 1
    assert ana.validate_learning(learning.id, True).confidence > learning.confidence
    assert ana.resolve_intention(intention.id).status.value == "resolved"
    assert ana.list_scopes() and {u for u, _, _ in ana.list_scopes()} == {"ana"}
    assert ben.list_scopes() == []


# ------------------------------------------------------------------ reinforce=False
def _retention(mem: Memory, memory_id: str) -> tuple[float, float, int]:
    record = mem.get(memory_id)
    assert record is not None
    return record.stability, record.last_access, record.access_count


def test_a_look_leaves_retention_and_a_recall_is_counted(mem: Memory, clock) -> None:  # type: ignore[no-untyped-def]
    boiler = mem.observe("The boiler was serviced on Monday.", keep=True)
    assert boiler is not None
    clock.advance(days=3)
    before = _retention(mem, boiler)
    looked = mem.remember("when was the boiler serviced?", reinforce=False)
    assert looked and looked[0].id == boiler
    assert _retention(mem, boiler) == before
    assert mem.scope().remember("boiler", reinforce=False)[0].id == boiler
    assert _retention(mem, boiler) == before
    recalled = mem.remember("when was the boiler serviced?")
    assert recalled[0].id == boiler and recalled[0].score == pytest.approx(looked[0].score)
    # counted (and kept from forgetting), but not rehearsed: the rank's state is unchanged
    assert _retention(mem, boiler) == (before[0], before[1], before[2] + 1)
    assert mem.scope().reinforce([boiler]) == 1  # the app used it: a rehearsal
    stability, last_access, count = _retention(mem, boiler)
    assert stability > before[0] and last_access > before[1] and count == before[2] + 2
    with pytest.raises(InvalidInputError):
        mem.remember("boiler", reinforce="no")  # type: ignore[arg-type]
