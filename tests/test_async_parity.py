"""Every public sync method has an async partner that behaves the same."""

from __future__ import annotations

import asyncio
import inspect

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder

SYNC_ONLY = {"scope", "now", "snapshot"}  # snapshot() is a `with` block holding the lock


def _public_methods() -> list[str]:
    names = set()
    for cls in Memory.__mro__[:-1]:
        names |= {n for n, v in vars(cls).items() if inspect.isfunction(v) and not n.startswith("_")}
    return sorted(n for n in names if not inspect.iscoroutinefunction(getattr(Memory, n)))


def test_every_public_method_has_an_async_partner() -> None:
    names = _public_methods()
    assert {"observe", "remember", "prune", "consolidate", "forget_user"} <= set(names)
    missing = [
        n
        for n in names
        if n not in SYNC_ONLY and not inspect.iscoroutinefunction(getattr(Memory, "a" + n, None))
    ]
    assert missing == []
    for n in names:
        if n in SYNC_ONLY:
            continue
        sync_params = list(inspect.signature(getattr(Memory, n)).parameters)
        async_params = list(inspect.signature(getattr(Memory, "a" + n)).parameters)
        assert sync_params == async_params, n


def _scenario_sync(mem: Memory) -> list[object]:
    e = mem.observe("Ana moved to Lisbon in May", user_id="ana", importance=0.9)
    f = mem.assert_fact("Ana", "lives in", "Lisbon", user_id="ana", source_ids=[e])
    p = mem.add_procedure("onboard", ["create account", "send welcome"], user_id="ana")
    mem.record_outcome(p.id, True)
    hits = mem.remember("where does Ana live", user_id="ana")
    return [h.content for h in hits] + [f.confidence, mem.stats()["by_type"]]


async def _scenario_async(mem: Memory) -> list[object]:
    e = await mem.aobserve("Ana moved to Lisbon in May", user_id="ana", importance=0.9)
    f = await mem.aassert_fact("Ana", "lives in", "Lisbon", user_id="ana", source_ids=[e])
    p = await mem.aadd_procedure("onboard", ["create account", "send welcome"], user_id="ana")
    await mem.arecord_outcome(p.id, True)
    hits = await mem.aremember("where does Ana live", user_id="ana")
    return [h.content for h in hits] + [f.confidence, (await mem.astats())["by_type"]]


def test_sync_and_async_give_the_same_result(tmp_path, clock) -> None:
    with Memory(tmp_path / "s", embedder=HashingEmbedder(), clock=clock) as m:
        expected = _scenario_sync(m)

    async def run() -> list[object]:
        async with Memory(tmp_path / "a", embedder=HashingEmbedder(), clock=clock) as m:
            return await _scenario_async(m)

    assert asyncio.run(run()) == expected
