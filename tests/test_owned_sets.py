"""A user's first search: its set listed from the keyword index, its members' vectors cached.

A search inside one user's memories (``where={"user_id": …}``) keeps the ids the clause
admits (:mod:`ucma_core.storage.wheresets`). A folder's keyword index holds a row for every
record Chroma holds and every one waiting for its Chroma write, so the set is listed from
it at the user's first search, with no Chroma filter evaluated over the whole collection
(:meth:`KeywordIndex.owned <ucma_core.storage.keywords.KeywordIndex.owned>`). Records waiting
in the write-behind buffer are searched there and left out of what Chroma is asked. The
vectors of records just written are read back into the vector cache, so a search among them
reads none. Every answer is held to a memory that asks Chroma's filter each time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.api.models.Collection import Collection

from ucma_core import Memory, MemoryConfig
from ucma_core.config import ChromaConfig, GroupCommitConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.vectors import VectorStore, chroma_settings

NOW = 1_800_000_000.0
WORDS = "tea porto train music library sister garden piano harbour ferry".split()
QUESTIONS = ["green tea in the morning", "train to porto", "piano lessons", "the harbour ferry"]


def _text(n: int) -> str:
    a, b, c = (WORDS[(n * k) % len(WORDS)] for k in (1, 3, 7))
    return f"note {n}: the {a} and the {b}, then the {c}"


@pytest.fixture
def filters(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The ``where`` clauses Chroma is asked (queries and listings), in order."""
    asked: list[dict[str, Any]] = []
    query, get = Collection.query, Collection.get

    def recorded_query(self: Collection, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("where") is not None:
            asked.append(kwargs["where"])
        return query(self, *args, **kwargs)

    def recorded_get(self: Collection, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("where") is not None:
            asked.append(kwargs["where"])
        return get(self, *args, **kwargs)

    monkeypatch.setattr(Collection, "query", recorded_query)
    monkeypatch.setattr(Collection, "get", recorded_get)
    return asked


def _memories(
    tmp_path: Path, *, group_commit: bool, search_ef: int | None
) -> Iterator[tuple[Memory, Memory]]:
    chroma = ChromaConfig(search_ef=search_ef)
    group = GroupCommitConfig(enabled=group_commit, interval_seconds=60.0)  # waits for flush()
    config = MemoryConfig(chroma=chroma, group_commit=group)
    plain = MemoryConfig(chroma=chroma, group_commit=group, vector_cache_size=0)  # Chroma's filter each time
    with (
        Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem,
        Memory(tmp_path / "plain", embedder=HashingEmbedder(), config=plain) as chroma_only,
    ):
        yield mem, chroma_only


def _ask(memory: Memory, question: str, user: str | None) -> list[str]:
    found = memory.remember(question, k=5, user_id=user, now=NOW, reinforce=False, route="hybrid")
    return [r.content for r in found]


@pytest.mark.parametrize("search_ef", [None, 4], ids=["in-process", "inside-ids"])
@pytest.mark.parametrize("group_commit", [False, True])
def test_a_users_first_search_asks_chroma_no_filter_and_answers_as_chroma(
    tmp_path: Path, filters: list[dict[str, Any]], group_commit: bool, search_ef: int | None
) -> None:
    # a search breadth of 4: each user's set is wider and Chroma searches inside its ids
    for mem, chroma_only in _memories(tmp_path, group_commit=group_commit, search_ef=search_ef):
        users = ["u0", "u1", None]  # None: the memories stored without a user
        for n in range(36):
            for memory in (mem, chroma_only):
                memory.observe(_text(n), user_id=users[n % 3], timestamp=NOW - 1000 + n, keep=True)
        mem.flush()
        chroma_only.flush()
        for n in range(3):  # a few records still waiting for their Chroma write (group commit)
            for memory in (mem, chroma_only):
                memory.observe(
                    f"just now: the tea and the ferry {n}", user_id=users[n], timestamp=NOW - 10 + n
                )
        for user in users:
            for question in QUESTIONS:
                del filters[:]
                answer = _ask(mem, question, user)
                assert {"user_id": user or ""} not in filters  # UCMA asked Chroma no filter on the user
                assert answer == _ask(chroma_only, question, user)
                assert {"user_id": user or ""} in filters  # the plain memory does
            assert f"just now: the tea and the ferry {users.index(user)}" in _ask(
                mem, "tea ferry just now", user
            )
        assert mem.stats()["where_sets"]["sets"] == 3


def test_a_users_set_follows_writes_and_deletions(tmp_path: Path, filters: list[dict[str, Any]]) -> None:
    for mem, chroma_only in _memories(tmp_path, group_commit=True, search_ef=4):
        ids: dict[Memory, list[str]] = {mem: [], chroma_only: []}
        for n in range(20):
            for memory in (mem, chroma_only):
                found = memory.observe(_text(n), user_id="ana", timestamp=NOW - 1000 + n, keep=True)
                assert found is not None
                ids[memory].append(found)
        for n, question in enumerate(QUESTIONS * 2):
            assert _ask(mem, question, "ana") == _ask(chroma_only, question, "ana")
            for memory in (mem, chroma_only):
                memory.forget(ids[memory][n])  # a deletion, with and without a flush between
                if n % 2:
                    memory.flush()
            assert _ask(mem, question, "ana") == _ask(chroma_only, question, "ana")
        del filters[:]
        _ask(mem, "tea", "ana")
        assert {"user_id": "ana"} not in filters  # the set was kept through every write


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VectorStore]:
    vectors = VectorStore(ChromaConfig(), tmp_path, cache_size=64)
    vectors.use("read-back", create=True, folder_id="f")
    yield vectors
    vectors.close()


def test_vectors_written_are_read_back_as_chroma_holds_them(store: VectorStore, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    ids = [f"m{n}" for n in range(16)]
    sent = rng.normal(size=(16, 32)).astype(np.float32)
    store.add(ids, sent.tolist(), ids, [{"n": n} for n in range(16)])
    store.count()  # a call behind the read-back on the worker: it is done
    cached = store.cache.get(ids)
    assert sorted(cached) == sorted(ids)
    chroma = chromadb.PersistentClient(path=str(tmp_path / "chroma"), settings=chroma_settings())
    held = chroma.get_collection("read-back").get(ids=ids, include=["embeddings"])
    for memory_id, vector in zip(held["ids"], held["embeddings"], strict=True):  # Chroma's copy, bit for bit
        assert np.array_equal(cached[memory_id], np.asarray(vector, dtype=np.float32))
    # deleted right after its write: its vector is not kept, whichever ran first
    store.add(["gone"], [sent[0].tolist()], ["gone"], [{"n": 99}])
    store.delete(["gone"])
    store.count()
    assert store.cache.get(["gone"]) == {}
    # a write of more than a quarter of the cache (an import) is not read back
    many = [f"x{n}" for n in range(17)]
    store.add(many, rng.normal(size=(17, 32)).tolist(), many, [{"n": n} for n in range(17)])
    store.count()
    assert store.cache.get(many) == {}


def test_a_wide_set_held_in_the_cache_is_ranked_exactly_in_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A set wider than Chroma's search breadth (100 by default) is searched by Chroma inside
    its ids, unless the vector cache holds it: then it is ranked in the process, exactly. The
    answers are those of a memory with an exact Chroma index (``search_ef`` above the number
    of records) that asks Chroma's filter each time."""
    group = GroupCommitConfig(enabled=False)
    exact = ChromaConfig(search_ef=1000)
    items = [
        {
            "content": _text(n),
            "user_id": "bob" if n % 4 == 0 else "ana",
            "timestamp": NOW - 1000 + n,
            "keep": True,
        }
        for n in range(240)  # 180 of them Ana's
    ]
    with (
        Memory(tmp_path / "m", embedder=HashingEmbedder(), config=MemoryConfig(group_commit=group)) as mem,
        Memory(
            tmp_path / "exact",
            embedder=HashingEmbedder(),
            config=MemoryConfig(group_commit=group, chroma=exact, vector_cache_size=0),
        ) as reference,
    ):
        for memory in (mem, reference):
            memory.observe_many(items)  # one write, its vectors read back into the cache
        expected = {question: _ask(reference, question, "ana") for question in QUESTIONS}
        queried: list[dict[str, Any]] = []
        query = Collection.query

        def recorded(self: Collection, *args: Any, **kwargs: Any) -> Any:
            queried.append(kwargs)
            return query(self, *args, **kwargs)

        monkeypatch.setattr(Collection, "query", recorded)
        for question in QUESTIONS:
            assert _ask(mem, question, "ana") == expected[question]
        assert queried == []  # no Chroma query: the 180 vectors are cached
        assert mem.stats()["where_sets"]["sets"] == 1
