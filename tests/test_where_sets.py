"""Narrow searches answered without Chroma's filter give what Chroma gives, and no write is hidden.

A search repeated inside the same ``where`` clause with no write in between is answered
from the ids Chroma listed for it and their cached vectors
(:mod:`ucma_core.storage.wheresets`). These tests hold that answer to Chroma's own, and
check that every kind of write (a new record, a rewrite, a metadata change, a deletion,
a record still in the write-behind buffer) is seen by the next search.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.models.Collection import Collection

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.config import ChromaConfig, GroupCommitConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.vectorcache import VectorCache
from ucma_core.storage.vectors import VectorStore, chroma_settings
from ucma_core.storage.wheresets import WhereSets, nearest_among

NOW = 1_800_000_000.0
INSIDE = {"team": "red"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VectorStore]:
    vectors = VectorStore(ChromaConfig(), tmp_path, cache_size=64)
    vectors.use("narrow-test", create=True, folder_id="f")
    rng = np.random.default_rng(7)
    ids = [f"m{n}" for n in range(40)]
    vectors.add(
        ids,
        rng.normal(size=(40, 8)).tolist(),
        ids,
        [{"team": "red" if n % 4 == 0 else "blue", "half": n % 8 == 0, "n": n} for n in range(40)],
    )
    yield vectors
    vectors.close()


def _hits(found: list[tuple[str, float, np.ndarray]]) -> list[tuple[str, float]]:
    return [(i, round(d, 5)) for i, d, _ in found]


def _query(seed: int) -> list[float]:
    return [float(x) for x in np.random.default_rng(seed).normal(size=8)]


def test_a_repeated_narrow_search_gives_chromas_answer_without_asking_it(store: VectorStore) -> None:
    answers = [store.nearest(_query(s), 5, INSIDE) for s in range(6)]
    assert store.where_sets.get(INSIDE, store.cache.token()) is not None  # asked twice: kept
    again = [store.nearest(_query(s), 5, INSIDE) for s in range(6)]
    assert [[i for i, _, _ in a] for a in again] == [[i for i, _, _ in a] for a in answers]
    for a, chroma in zip(again, answers, strict=True):  # Chroma's own arithmetic, to float32 rounding
        assert [d for _, d, _ in a] == pytest.approx([d for _, d, _ in chroma], abs=1e-6)
        assert all(v.tolist() == w.tolist() for (_, _, v), (_, _, w) in zip(a, chroma, strict=True))
    assert all(len(a) == 5 and all(int(i[1:]) % 4 == 0 for i, _, _ in a) for a in again)
    # more than the clause admits: every one of them, nearest first
    everything = store.nearest(_query(0), 100, INSIDE)
    assert len(everything) == 10
    assert [d for _, d, _ in everything] == sorted(d for _, d, _ in everything)
    assert sorted(store.ids_where(INSIDE)) == sorted(f"m{n}" for n in range(0, 40, 4))


def test_a_clause_added_to_a_kept_one_is_listed_at_its_first_ask(store: VectorStore) -> None:
    # a speaker's search: the scope's clause and one more, e.g. {participant: True}
    half = {"$and": [INSIDE, {"half": True}]}
    q = _query(2)
    chroma = store.nearest(q, 50, half)
    assert {i for i, _, _ in chroma} == {f"m{n}" for n in range(0, 40, 8)}
    assert store.where_sets.get(half, store.cache.token()) is None  # the scope is not kept yet
    for _ in range(2):
        store.nearest(q, 5, INSIDE)  # the scope's set is kept
    assert _hits(store.nearest(q, 50, half)) == _hits(chroma)
    assert store.where_sets.get(half, store.cache.token()) is not None
    assert store.nearest(q, 50, {"$and": [INSIDE, {"half": "yes"}]}) == []  # another type: no match
    other = {"$and": [INSIDE, {"half": {"$eq": False}}]}
    found = store.nearest(q, 50, other)  # asked once: listed and kept at once
    assert store.where_sets.get(other, store.cache.token()) is not None
    assert {i for i, _, _ in found} == {f"m{n}" for n in range(4, 40, 8)}
    long = "x" * 300  # a long stored value (a packed record) is compared by Chroma as any other
    store.update_metadata(["m8", "m16"], [{"half": False}, {"note": long}])
    for _ in range(2):
        store.nearest(q, 5, INSIDE)
    assert "m8" not in {i for i, _, _ in store.nearest(q, 50, half)}
    on_long = {"$and": [INSIDE, {"note": long}]}
    assert [i for i, _, _ in store.nearest(q, 50, on_long)] == ["m16"]
    assert store.where_sets.get(on_long, store.cache.token()) == ("m16",)
    # a range is not an equality: asked once, Chroma answers and nothing is listed
    ranged = {"$and": [INSIDE, {"n": {"$gte": 20}}]}
    assert {i for i, _, _ in store.nearest(q, 50, ranged)} == {f"m{n}" for n in range(20, 40, 4)}
    assert store.where_sets.get(ranged, store.cache.token()) is None


def test_a_set_is_kept_from_a_listing_of_ids_alone(
    store: VectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # reading a few hundred members' stored fields (packed records) cost a user's second
    # search more than all its other Chroma calls: a kept set is listed, nothing more read
    reads: list[list[str]] = []
    get = Collection.get

    def recorded(self: Collection, *args: Any, **kwargs: Any) -> Any:
        reads.append(list(kwargs.get("include") or ()))
        return get(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "get", recorded)
    for _ in range(2):
        store.nearest(_query(3), 5, INSIDE)
    assert store.where_sets.get(INSIDE, store.cache.token()) is not None
    assert [] in reads and not any("metadatas" in include or "documents" in include for include in reads)


@pytest.fixture
def narrow_index(tmp_path: Path) -> Iterator[VectorStore]:
    """The fixture's records in an index whose search breadth (5) is below the clause's 10,
    with a vector cache too small to hold the set (a quarter of 32 is 8): Chroma answers."""
    vectors = VectorStore(ChromaConfig(search_ef=5), tmp_path, cache_size=32)
    vectors.use("narrow-test", create=True, folder_id="f")
    rng = np.random.default_rng(7)
    ids = [f"m{n}" for n in range(40)]
    teams: list[dict[str, str | int | float | bool]] = [
        {"team": "red" if n % 4 == 0 else "blue"} for n in range(40)
    ]
    vectors.add(ids, rng.normal(size=(40, 8)).tolist(), ids, teams)
    yield vectors
    vectors.close()


def _collection(folder: Path, name: str = "narrow-test") -> Any:
    """The folder's collection through Chroma's own client (the process's cached one)."""
    import chromadb

    client = chromadb.PersistentClient(path=str(folder / "chroma"), settings=chroma_settings())
    return client.get_collection(name)


def test_a_kept_set_wider_than_the_search_breadth_is_searched_inside_its_ids(
    narrow_index: VectorStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chroma evaluates a ``where`` over the whole collection; inside the listed ids it
    # gives the same answer for a fraction of the cost
    col = _collection(tmp_path)  # Chroma itself, asked with ``where``
    chroma: list[list[tuple[str, float]]] = []
    for s in range(6):
        res = col.query(query_embeddings=[_query(s)], n_results=5, where=INSIDE, include=["distances"])
        chroma.append([(i, round(d, 5)) for i, d in zip(res["ids"][0], res["distances"][0], strict=True)])
    asked: list[dict[str, Any]] = []
    query = Collection.query

    def recorded(self: Collection, *args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return query(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "query", recorded)
    store = narrow_index
    answers = [_hits(store.nearest(_query(s), 5, INSIDE)) for s in range(6)]  # the second ask lists the set
    assert store.where_sets.size(INSIDE) == 10
    assert answers == chroma
    assert "where" in asked[0] and "ids" not in asked[0]
    members = sorted(store.ids_where(INSIDE))
    assert all("where" not in kwargs and sorted(kwargs["ids"]) == members for kwargs in asked[1:])
    assert len(asked) == 6


def test_an_id_deleted_behind_a_kept_set_is_not_found(narrow_index: VectorStore, tmp_path: Path) -> None:
    store = narrow_index
    q = _query(5)
    for _ in range(2):
        before = store.nearest(q, 5, INSIDE)
    assert store.where_sets.size(INSIDE) == 10
    # another client of the same folder deletes the nearest record: this store is not told
    _collection(tmp_path).delete(ids=[before[0][0]])
    after = store.nearest(q, 5, INSIDE)  # Chroma refuses the unknown id: asked with ``where``
    assert [i for i, _, _ in after] == [i for i, _, _ in before[1:]] + [after[-1][0]]
    assert before[0][0] not in {i for i, _, _ in after}


def test_every_kind_of_write_is_seen_by_the_next_search(store: VectorStore) -> None:
    q = _query(1)
    for _ in range(2):
        store.nearest(q, 50, INSIDE)
    assert store.where_sets.get(INSIDE, store.cache.token()) is not None
    # a new record inside the clause, right on the query
    store.add(["new"], [q], ["new"], [{"team": "red", "n": 99}])
    assert store.nearest(q, 1, INSIDE)[0][0] == "new"
    store.nearest(q, 1, INSIDE)
    # a rewrite moves it away from the query
    store.upsert(["new"], [(-np.asarray(q)).tolist()], ["new"], [{"team": "red", "n": 99}])
    assert store.nearest(q, 50, INSIDE)[-1][0] == "new"
    store.nearest(q, 50, INSIDE)
    # a metadata change takes a record out of the clause, another one in
    store.update_metadata(["m0", "m1"], [{"team": "blue"}, {"team": "red"}])
    inside = {i for i, _, _ in store.nearest(q, 50, INSIDE)}
    assert "m0" not in inside and "m1" in inside
    assert inside == {i for i, _, _ in store.nearest(q, 50, INSIDE)}
    # a deletion
    store.delete(["m1"])
    assert "m1" not in {i for i, _, _ in store.nearest(q, 50, INSIDE)}
    assert sorted(store.ids_where(INSIDE)) == sorted(inside - {"m1"})


def test_a_listing_that_overlapped_a_write_is_not_kept_and_large_sets_are_not_kept() -> None:
    cache = VectorCache(8)
    sets = WhereSets(cache, max_ids=3)
    token = cache.token()  # a listing starts
    cache.forget([])  # a write meanwhile
    sets.put({"a": 1}, ["x"], token)
    assert sets.get({"a": 1}, cache.token()) is None
    sets.put({"a": 1}, ["x", "y", "z", "w"], cache.token())
    assert sets.get({"a": 1}, cache.token()) is None
    assert not sets.wanted({"a": 1}, cache.token())  # known to be too large: Chroma answers
    assert not WhereSets(VectorCache(0)).enabled  # the cache turned off turns this off


def test_kept_sets_are_bounded_in_ids_all_together() -> None:
    cache = VectorCache(8)
    sets = WhereSets(cache, max_ids=3, max_total_ids=4)
    sets.put({"a": "1"}, ["x", "y", "z"], cache.token())
    sets.put({"b": "1"}, ["u"], cache.token())
    assert sets.stats()["sets"] == 2
    sets.get({"a": "1"}, cache.token())  # the most recently used now: "b" goes first
    sets.put({"c": "1"}, ["v", "w"], cache.token())
    assert sets.get({"b": "1"}, cache.token()) is None and sets.get({"c": "1"}, cache.token()) == ("v", "w")
    assert sets.get({"a": "1"}, cache.token()) is None  # still 5 ids: the next least recently used goes
    sets.changed(["t"], [{"c": "1"}])  # a set a write grows past the bound is the only one left
    assert sets.get({"c": "1"}, cache.token()) == ("v", "w", "t") and sets.stats()["sets"] == 1


def test_a_clause_admitting_more_than_a_kept_set_is_left_to_chroma(store: VectorStore) -> None:
    store.where_sets = WhereSets(store.cache, max_ids=3)
    blue = {"team": "blue"}  # 30 of the 40 records
    q = _query(4)
    answers = [_hits(store.nearest(q, 5, blue)) for _ in range(3)]  # the second ask lists it
    assert answers[0] == answers[1] == answers[2]
    assert store.where_sets.get(blue, store.cache.token()) is None
    assert not store.where_sets.wanted(blue, store.cache.token())  # known to be too large
    for _ in range(2):  # a small clause is still kept beside it
        store.nearest(q, 5, {"n": 4})
    assert store.where_sets.get({"n": 4}, store.cache.token()) == ("m4",)


def test_exact_nearest_matches_cosine_distance() -> None:
    rng = np.random.default_rng(3)
    vectors = {f"v{n}": rng.normal(size=6).astype(np.float32) for n in range(30)}
    vectors["zero"] = np.zeros(6, dtype=np.float32)
    q = rng.normal(size=6)
    found = nearest_among(q.tolist(), vectors, 31)
    expected = {
        i: 1.0 - (float(v @ q) / (np.linalg.norm(v) * np.linalg.norm(q)) if v.any() else 0.0)
        for i, v in vectors.items()
    }
    assert [i for i, _, _ in found] == sorted(expected, key=lambda i: expected[i])
    assert all(d == pytest.approx(expected[i], abs=1e-6) for i, d, _ in found)
    assert nearest_among(q.tolist(), vectors, 0) == [] and nearest_among(q.tolist(), {}, 3) == []


QUESTIONS = ["what does Ana drink", "where does the sister live", "tax deadline", "train to Porto"]
TEXTS = [
    "Ana drinks green tea every morning",
    "the quarterly tax filing deadline is in April",
    "Ana's sister lives in Porto and teaches music",
    "we booked a train to Porto for the spring holiday",
    "green tea with jasmine is Ana's favourite",
    "the library card must be renewed every year",
]


@pytest.mark.parametrize("group_commit", [False, True])
def test_remember_in_a_tag_gives_the_same_answers_and_reads_its_writes(
    tmp_path: Path, group_commit: bool
) -> None:
    config = MemoryConfig(group_commit=GroupCommitConfig(enabled=group_commit))
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem:
        for n, text in enumerate(TEXTS * 3):
            mem.observe(text, user_id=f"u{n % 3}", tags=[f"t{n % 3}"], timestamp=NOW - 1000 + n, keep=True)
        mem.flush()

        def answers() -> list[list[tuple[str, float]]]:
            return [
                [
                    (r.id, r.score)
                    for r in mem.remember(q, k=4, user_id=ANY, tags=["t1"], now=NOW, reinforce=False)
                ]
                for q in QUESTIONS
            ]

        first = answers()
        for _ in range(2):
            again = answers()
            assert [[i for i, _ in a] for a in again] == [[i for i, _ in a] for a in first]
            assert all(
                s == pytest.approx(s0, abs=1e-6)
                for a, a0 in zip(again, first, strict=True)
                for (_, s), (_, s0) in zip(a, a0, strict=True)
            )
        # read your writes: a new memory in the tag is found at once (buffered or not)
        new = mem.observe(
            "Ana now drinks oolong tea", user_id="u1", tags=["t1"], timestamp=NOW - 1, keep=True
        )
        assert new is not None
        assert new in [r.id for r in mem.remember("oolong tea", k=3, user_id=ANY, tags=["t1"], now=NOW)]
        mem.forget(new)
        for _ in range(2):
            assert new not in [
                r.id for r in mem.remember("oolong tea", k=3, user_id=ANY, tags=["t1"], now=NOW)
            ]


def _kept(store: VectorStore, where: Mapping[str, Any]) -> tuple[str, ...] | None:
    return store.where_sets.get(where, store.cache.token())


def test_a_write_updates_the_sets_it_decides_and_drops_the_others(store: VectorStore, tmp_path: Path) -> None:
    red, blue = INSIDE, {"team": "blue"}
    odd = {"n": {"$gte": 30}}  # a comparison: not evaluated, so any write drops it
    q = _query(5)
    for where in (red, blue, odd):
        for _ in range(2):
            store.nearest(q, 5, where)
    kept_red, kept_blue = _kept(store, red), _kept(store, blue)
    assert kept_red is not None and kept_blue is not None and _kept(store, odd) is not None

    def members(where: Mapping[str, Any]) -> set[str]:
        found = _kept(store, where)
        assert found is not None, where
        return set(found)

    # a new blue record right on the query joins blue's set; red's stays as it was
    store.add(["b1"], [q], ["b1"], [{"team": "blue", "n": 100}])
    assert _kept(store, red) == kept_red and _kept(store, blue) == (*kept_blue, "b1")
    assert _kept(store, odd) is None
    assert store.nearest(q, 1, blue)[0][0] == "b1"
    assert store.where_sets.stats()["kept"] >= 2
    # an update of a key the clauses do not read changes no set; one that moves a record moves it
    store.update_metadata(["m1"], [{"half": True}])
    assert _kept(store, red) == kept_red and "m1" in members(blue)
    store.update_metadata(["m3"], [{"team": "red"}])
    assert "m3" in members(red) and "m3" not in members(blue)
    assert "m3" in {i for i, _, _ in store.nearest(q, 50, red)}
    # a deletion takes the record out of the sets holding it
    store.delete(["m3"])
    assert "m3" not in members(red)
    assert "m3" not in {i for i, _, _ in store.nearest(q, 50, red)}
    # a rewrite (upsert) of a member that moves it out
    store.upsert(["m4"], [q], ["m4"], [{"team": "blue", "n": 4}])
    assert "m4" not in members(red) and "m4" in members(blue)
    assert "m4" not in {i for i, _, _ in store.nearest(q, 50, red)}
    assert store.nearest(q, 1, blue)[0][0] in {"m4", "b1"}
    # every kept set holds what Chroma's own filter admits
    col = _collection(tmp_path, "narrow-test")
    for where in (red, blue):
        assert members(where) == set(col.get(where=where, include=[])["ids"])
    # a change the sets are not told of (another collection, a sync) drops every set
    store.cache.forget([])
    assert _kept(store, red) is None


def test_one_users_write_keeps_another_users_set_and_is_seen_in_its_own(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as mem:
        for n, text in enumerate(TEXTS * 2):
            mem.observe(text, user_id=f"u{n % 2}", timestamp=NOW - 1000 + n, keep=True)
        mem.flush()

        def ask(user: str, question: str = "green tea") -> list[str]:
            return [r.id for r in mem.remember(question, k=4, user_id=user, now=NOW, reinforce=False)]

        before = [ask("u1") for _ in range(3)]  # listed on the second ask, kept from the third
        hits = mem.stats()["where_sets"]["hits"]
        assert hits >= 1
        ask("u0")
        new = mem.observe("u0 now drinks green tea with mint", user_id="u0", timestamp=NOW - 1, keep=True)
        mem.flush()
        assert ask("u1") == before[0]  # u1's set was kept through u0's write
        assert mem.stats()["where_sets"]["hits"] > hits
        assert new in ask("u0", "green tea with mint")  # and u0's write is seen in u0's


@pytest.mark.parametrize("group_commit", [False, True])
def test_a_conversation_searches_its_kept_set_between_its_own_turns(
    tmp_path: Path, group_commit: bool
) -> None:
    # a turn written, then a search, for the same user: the set is kept up to date, not listed again
    config = MemoryConfig(group_commit=GroupCommitConfig(enabled=group_commit))
    plain = MemoryConfig(group_commit=GroupCommitConfig(enabled=group_commit), vector_cache_size=0)
    with (
        Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem,
        Memory(tmp_path / "plain", embedder=HashingEmbedder(), config=plain) as chroma_only,
    ):
        for n, text in enumerate(TEXTS):
            for memory in (mem, chroma_only):
                memory.observe(text, user_id="ana", timestamp=NOW - 1000 + n, keep=True)

        def ask(memory: Memory, question: str) -> list[str]:
            found = memory.remember(question, k=3, user_id="ana", now=NOW, reinforce=False)
            return [r.content for r in found]

        for _ in range(2):  # the second ask lists the set
            ask(mem, "green tea")
        listings = mem.stats()["where_sets"]["hits"]
        for n, question in enumerate(QUESTIONS * 2):
            turn = f"turn {n}: {question.replace('?', '')} came up again"
            for memory in (mem, chroma_only):
                memory.observe(turn, user_id="ana", timestamp=NOW - 100 + n, keep=True)
            answer = ask(mem, question)
            assert answer == ask(chroma_only, question)
            assert turn in ask(mem, turn)  # the turn just written is found
        stats = mem.stats()["where_sets"]
        assert stats["hits"] >= listings + 2 * len(QUESTIONS) * 2 and stats["sets"] >= 1


def test_a_bulk_write_drops_every_set(store: VectorStore) -> None:
    q = _query(6)
    for _ in range(2):
        store.nearest(q, 5, INSIDE)
    assert _kept(store, INSIDE) is not None
    ids = [f"bulk{n}" for n in range(5000)]  # blue records: checking each costs more than a listing
    store.where_sets.changed(ids, [{"team": "blue"}] * len(ids))
    assert _kept(store, INSIDE) is None
    for _ in range(2):
        store.nearest(q, 5, INSIDE)
    store.where_sets.changed(ids[:10], [{"team": "blue"}] * 10)  # a small one is checked
    assert _kept(store, INSIDE) is not None


def test_a_deletion_takes_exactly_its_ids_out_of_a_kept_set() -> None:
    # the kept sets' members are held sorted (8 bytes an id): a write of a few ids is looked up
    # in them, a write of many is checked by one pass; both must find a member anywhere
    cache = VectorCache(1000)
    sets = WhereSets(cache)
    members = [f"id-{n:04d}" for n in range(400)]
    others = [f"other-{n}" for n in range(100)]
    for written in (["id-0000"], ["id-0399"], ["zz", "id-0213"], [*others[:60], "id-0077"], ["aa"], others):
        sets.put({"user_id": "ana"}, members[::-1], cache.token())  # Chroma's order is kept
        assert sets.get({"user_id": "ana"}, cache.token()) == tuple(members[::-1])
        sets.changed(written, None)
        kept = sets.get({"user_id": "ana"}, cache.token())
        assert kept == tuple(i for i in members[::-1] if i not in written), written


def test_kept_ids_are_the_string_objects_the_cache_is_given() -> None:
    # ids read from Chroma are new strings; a kept set holds the graph's own instead
    cache = VectorCache(8)
    sets = WhereSets(cache)
    own = {i: i for i in ("".join(["m", str(n)]) for n in range(3))}
    cache.shared_ids = lambda memory_id: own.get(memory_id, memory_id)
    read = ["".join(["m", str(n)]) for n in (2, 0, 1)] + ["x"]  # equal to own's, other objects
    assert not any(r is own.get(r) for r in read)
    sets.put({"user_id": "ana"}, read, cache.token())
    kept = sets.get({"user_id": "ana"}, cache.token())
    assert kept == tuple(read)  # the same ids in Chroma's order
    assert all(k is own[k] for k in kept[:3]) and kept[3] is read[3]
