"""The reads and writes adapters build on: keys, upserts, history, listing, metadata filters,
bound views and plain-dict results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ucma_core import ANY, Memory, RouteDecision
from ucma_core.embedders import HashingEmbedder
from ucma_core.errors import InvalidInputError


def _reopen(folder: Path, clock: object) -> Memory:
    return Memory(folder, embedder=HashingEmbedder(), clock=clock)  # type: ignore[arg-type]


# ------------------------------------------------------------------ keyed writes
def test_a_key_is_stored_once_across_restarts(folder: Path, clock) -> None:
    with _reopen(folder, clock) as mem:
        first = mem.observe("Lunch with Marta on Friday", user_id="ana", key="msg-1", keep=True)
        again = mem.observe("Lunch with Marta on Friday", user_id="ana", key="msg-1", keep=True)
        assert first is not None and again == first
        record = mem.get_by_key("msg-1", user_id="ana")
        assert record is not None and record.id == first and record.key == "msg-1"
    with _reopen(folder, clock) as mem:
        assert mem.observe("Lunch with Marta on Friday", user_id="ana", key="msg-1") == first
        assert mem.stats()["memories"] == 1
        # the same key in another user's scope is another memory
        other = mem.observe("Lunch with Marta on Friday", user_id="ben", key="msg-1", keep=True)
        assert other not in (None, first)
        assert mem.get_by_key("msg-1", user_id="ana").id == first  # type: ignore[union-attr]
        assert mem.get_by_key("nope", user_id="ana") is None


def test_repeated_keys_in_one_batch_store_one_memory(mem: Memory) -> None:
    ids = mem.observe_many(
        [{"content": "hello there", "key": "k"}, {"content": "hello there", "key": "k"}, "unkeyed"],
        keep=True,
    )
    assert ids[0] == ids[1] and ids[2] not in (None, ids[0])
    assert mem.stats()["memories"] == 2


def test_keep_stores_whatever_the_importance(mem: Memory) -> None:
    assert mem.observe("ok", importance=0.0) is None
    assert mem.observe("ok", importance=0.0, keep=True) is not None


def test_upsert_replaces_content_metadata_and_vector(mem: Memory) -> None:
    first = mem.upsert("pref", "Ana likes tea", user_id="ana", metadata={"v": 1}, tags=["drinks"])
    assert mem.remember("tea", user_id="ana")[0].id == first
    again = mem.upsert("pref", "Ana switched to espresso", user_id="ana", metadata={"v": 2})
    assert again == first
    record = mem.get(first)
    assert record is not None and record.content == "Ana switched to espresso"
    assert record.metadata == {"v": 2} and record.tags == ()
    assert [h.id for h in mem.remember("espresso", user_id="ana")] == [first]
    assert mem.remember("drinks tea", user_id="ana", tags=["drinks"]) == []
    assert mem.list_memories(user_id="ana", metadata_filter={"v": 1}) == []
    assert [r.id for r in mem.list_memories(user_id="ana", metadata_filter={"v": 2})] == [first]
    assert mem.verify().ok and mem.stats()["memories"] == 1


def test_bad_keys_are_refused(mem: Memory) -> None:
    for bad in ("", "   ", 7, "x" * 2000):
        with pytest.raises(InvalidInputError):
            mem.observe("text", key=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        mem.observe("text", keep="yes")  # type: ignore[arg-type]
    assert mem.stats()["memories"] == 0


# ------------------------------------------------------------------ history and sessions
def test_history_is_in_write_order_with_limit_and_before(mem: Memory, clock) -> None:
    ids = [mem.observe(f"turn {n}", session_id="s1", user_id="ana", keep=True) for n in range(5)]
    mem.observe("other session", session_id="s2", user_id="ana", keep=True)
    mem.observe("other user", session_id="s1", user_id="ben", keep=True)
    assert [e.id for e in mem.history(session_id="s1", user_id="ana")] == ids  # same clock time
    assert [e.id for e in mem.history(session_id="s1", user_id="ana", limit=2)] == ids[-2:]
    assert mem.history(session_id="s1", user_id="ana", limit=0) == []
    clock.advance(seconds=10)
    late = mem.observe("later", session_id="s1", user_id="ana", keep=True)
    assert [e.id for e in mem.history(session_id="s1", user_id="ana", before=clock.now)] == ids
    assert mem.history(session_id="s1", user_id="ana")[-1].id == late
    assert mem.forget_session("s1", user_id="ana") == 6
    assert mem.history(session_id="s1", user_id="ana") == []
    assert len(mem.history(session_id="s1", user_id="ben")) == 1
    assert mem.verify().ok


# ------------------------------------------------------------------ listing
def test_list_memories_pages_and_filters(mem: Memory, clock) -> None:
    ids = []
    for n in range(6):
        clock.advance(seconds=1)
        ids.append(
            mem.observe(
                f"note {n}",
                user_id="ana",
                keep=True,
                metadata={"n": n, "kind": "even" if n % 2 == 0 else "odd"},
            )
        )
    mem.observe("Ben's note", user_id="ben", keep=True, metadata={"n": 1})
    newest = [r.id for r in mem.list_memories(user_id="ana")]
    assert newest == ids[::-1]
    assert [r.id for r in mem.list_memories(user_id="ana", limit=2, offset=1)] == ids[::-1][1:3]
    assert [r.id for r in mem.list_memories(user_id="ana", newest_first=False, limit=2)] == ids[:2]
    odd = mem.list_memories(user_id="ana", metadata_filter={"kind": "odd"}, newest_first=False)
    assert [r.id for r in odd] == ids[1::2]
    big = mem.list_memories(user_id="ana", metadata_filter={"n": {"$gte": 4}, "kind": {"$in": ["even"]}})
    assert [r.id for r in big] == [ids[4]]
    assert len(mem.list_memories(user_id=ANY, metadata_filter={"n": 1})) == 2
    assert mem.list_scopes() == sorted(mem.list_scopes())
    assert {u for u, _, _ in mem.list_scopes()} == {"ana", "ben"}
    with pytest.raises(InvalidInputError):
        mem.list_memories(metadata_filter={"n": {"$like": 3}})
    with pytest.raises(InvalidInputError):
        mem.list_memories(limit=-1)


def test_metadata_filter_applies_to_every_retrieval_signal(mem: Memory) -> None:
    keep = mem.observe("the quarterly budget review", user_id="ana", keep=True, metadata={"team": "red"})
    mem.observe("the quarterly budget review again", user_id="ana", keep=True, metadata={"team": "blue"})
    hits = mem.remember("quarterly budget review", user_id="ana", metadata_filter={"team": "red"})
    assert [h.id for h in hits] == [keep]
    none = mem.remember("quarterly budget", user_id="ana", metadata_filter={"team": {"$eq": "green"}})
    assert none == []


# ------------------------------------------------------------------ results as plain data
def test_results_convert_to_plain_json(mem: Memory) -> None:
    mem.observe("We planned the trip to Porto", user_id="ana", keep=True, metadata={"a": [1, 2]}, tags=["t"])
    result = mem.remember("trip to Porto", user_id="ana")[0]
    assert isinstance(result.route, RouteDecision) and result.route.kind in {"hybrid", "entity", "temporal"}
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["user_id"] == "ana" and data["tags"] == ["t"] and data["metadata"] == {"a": [1, 2]}
    assert data["route"] == {"kind": result.route.kind, "reason": result.route.reason}
    assert data["timestamp_iso"].endswith("+00:00")


# ------------------------------------------------------------------ bound views
def test_a_bound_view_reads_its_user_across_sessions_and_writes_its_session(mem: Memory) -> None:
    ana_t1 = mem.scope(user_id="ana", session_id="t1")
    ana_t2 = mem.scope(user_id="ana", session_id="t2")
    ben = mem.scope(user_id="ben", session_id="t1")
    fact = ana_t1.observe("My sister Marta lives in Porto", keep=True)
    ben.observe("My sister lives in Lyon", keep=True)
    assert [h.id for h in ana_t2.remember("where does my sister live?", k=1)] == [fact]
    assert ana_t2.history() == [] and [e.id for e in ana_t1.history()] == [fact]
    assert all(h.record.user_id == "ben" for h in ben.remember("sister"))
    assert ben.get(fact) is None and ben.forget(fact) is False and mem.get(fact) is not None
    with pytest.raises(TypeError):  # a view has no user_id to widen it with
        ben.remember("sister", user_id="ana")  # type: ignore[call-arg]
    with pytest.raises(InvalidInputError):
        ben.observe_many([{"content": "sneaky", "user_id": "ana"}])
    assert ana_t1.forget_session() == 1 and mem.get(fact) is None


async def test_bound_view_async_partners(mem: Memory) -> None:
    view = mem.scope(user_id="ana", session_id="s")
    memory_id = await view.aobserve("async turn", keep=True)
    assert [e.id for e in await view.ahistory()] == [memory_id]
    assert (await view.aremember("async turn"))[0].id == memory_id


def test_a_folder_from_before_filterable_metadata_is_upgraded_on_open(folder: Path, clock) -> None:
    import chromadb
    from chromadb.config import Settings

    from ucma_core.storage.codec import ChromaKeys

    with _reopen(folder, clock) as mem:
        memory_id = mem.observe("the quarterly review", keep=True, metadata={"team": "red"})
        collection = json.loads((folder / "ucma.json").read_text())["collection"]
    # make it look like a folder written before metadata values were filterable keys (a
    # folder from before the key secret too is re-keyed instead: tests/test_keyed_hashes.py)
    manifest = json.loads((folder / "ucma.json").read_text())
    manifest["features"] = ["keyed-hashes"]
    team_key = ChromaKeys.from_hex(manifest["key_secret"]).metadata("team")
    (folder / "ucma.json").write_text(json.dumps(manifest))
    client = chromadb.PersistentClient(
        path=str(folder / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    client.get_collection(collection).update(ids=[memory_id], metadatas=[{team_key: None}])
    client.close()
    with _reopen(folder, clock) as mem:
        assert [r.id for r in mem.list_memories(metadata_filter={"team": "red"})] == [memory_id]
        assert [h.id for h in mem.remember("quarterly review", metadata_filter={"team": "red"})] == [
            memory_id
        ]
        assert mem.get(memory_id).metadata == {"team": "red"}  # type: ignore[union-attr]
    assert "metadata-keys" in json.loads((folder / "ucma.json").read_text())["features"]
