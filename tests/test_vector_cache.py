"""The read path's cache of stored vectors: a hit gives what Chroma would, a write is never hidden.

Retrieval keeps the vectors it read (:mod:`ucma_core.storage.vectorcache`) so the next
retrieval asks Chroma only for vectors it has not seen; these tests hold it to giving
exactly what a read gives, after rewrites and deletions too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ucma_core import ANY, Memory, MemoryConfig
from ucma_core.config import ChromaConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.vectorcache import VectorCache
from ucma_core.storage.vectors import VectorStore

NOW = 1_800_000_000.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VectorStore]:
    vectors = VectorStore(ChromaConfig(), tmp_path, cache_size=16)
    vectors.use("cache-test", create=True, folder_id="f")
    yield vectors
    vectors.close()


def _vec(*values: float) -> list[float]:
    return [*values, 0.0, 0.0][:3]


def test_a_rewritten_or_deleted_vector_is_read_again(store: VectorStore) -> None:
    store.add(["a", "b"], [_vec(1, 0), _vec(0, 1)], ["a", "b"], [{"n": 1}, {"n": 2}])
    assert {i for i, _, _ in store.nearest(_vec(1, 0), 2)} == {"a", "b"}  # both read, both cached
    assert store.vectors_of(["a", "b"])["a"].tolist() == _vec(1, 0)
    store.upsert(["a"], [_vec(0, 0, 1)], ["a again"], [{"n": 1}])
    store.delete(["b"])
    got = store.vectors_of(["a", "b"])
    assert list(got) == ["a"] and got["a"].tolist() == [0.0, 0.0, 1.0]
    near = store.nearest(_vec(0, 0, 1), 1)
    assert [(i, round(d, 6), v.tolist()) for i, d, v in near] == [("a", 0.0, [0.0, 0.0, 1.0])]


def test_cached_vectors_are_the_ones_chroma_returns_and_read_only(store: VectorStore) -> None:
    vector = [0.1234567, 0.7654321, 0.3333333]
    store.add(["a"], [vector], ["a"], [{"n": 1}])
    read = store.vectors_of(["a"])["a"]
    again = store.vectors_of(["a"])["a"]
    assert again.dtype == np.float32 and again.tolist() == read.tolist()
    assert np.allclose(again, vector)
    with pytest.raises(ValueError):
        again[0] = 1.0  # shared with every later reader
    assert store.cache.hits >= 1


def test_an_answer_read_while_a_write_ran_is_not_kept() -> None:
    cache = VectorCache(4)
    token = cache.token()  # a read starts
    cache.forget(["a"])  # a writer rewrites "a" meanwhile
    cache.put({"a": np.zeros(2, dtype=np.float32)}, token)  # the read's (maybe old) answer
    assert cache.get(["a"]) == {}
    cache.put({"a": np.ones(2, dtype=np.float32)}, cache.token())
    assert list(cache.get(["a"])) == ["a"]


def test_least_recently_used_go_first_and_zero_turns_it_off() -> None:
    cache = VectorCache(2)
    one = np.ones(2, dtype=np.float32)
    cache.put({"a": one.copy(), "b": one.copy()}, cache.token())
    cache.get(["a"])  # "b" is now the least recently used
    cache.put({"c": one.copy()}, cache.token())
    assert sorted(cache.get(["a", "b", "c"])) == ["a", "c"]
    off = VectorCache(0)
    off.put({"a": one.copy()}, off.token())
    assert len(off) == 0


TEXTS = [
    "Ana drinks green tea every morning before work",
    "the quarterly tax filing deadline is in April",
    "Ana's sister lives in Porto and teaches music",
    "we booked a train to Porto for the spring holiday",
    "green tea with jasmine is Ana's favourite",
    "the library card must be renewed every year",
    "Carla suggested a walk along the river on Sunday",
    "the car needs new tyres before winter",
] * 4
QUERIES = ["what does Ana drink", "when is the tax deadline", "who lives in Porto", "river walk", "tyres"]


Answers = list[list[tuple[str, float, dict[str, float]]]]


def _answers(mem: Memory) -> Answers:
    return [
        [
            (r.id, r.score, r.signals)
            for r in mem.remember(q, k=6, user_id=ANY, now=NOW, reinforce=False, diversify=d)
        ]
        for q in QUERIES
        for d in (True, False)
    ]


def _same(got: Answers, expected: Answers, *, scores: bool = True) -> None:
    """The same memories in the same order with the same signals (and scores). Chroma returns
    a stored vector with last-bit differences depending on where it reads it from (its log
    or its index), and a search repeated inside a small set is ranked by UCMA's own float32
    cosine (:mod:`~ucma_core.storage.wheresets`), whose sums differ from Chroma's in the
    last bits: scores rounded to 6 places may then differ by one unit in the last place
    (2e-6 allows that), far below what a rewrite changes. Across a reopen the final
    score is not compared: its calibration spans every candidate, and Chroma's approximate
    index may find a slightly different set of distant ones after reloading."""
    assert [[i for i, _, _ in answer] for answer in got] == [[i for i, _, _ in answer] for answer in expected]
    for answer, reference in zip(got, expected, strict=True):
        for (_, score, signals), (_, score_ref, signals_ref) in zip(answer, reference, strict=True):
            assert not scores or score == pytest.approx(score_ref, abs=2e-6)
            assert signals.keys() == signals_ref.keys()
            assert all(signals[s] == pytest.approx(signals_ref[s], abs=2e-6) for s in signals)


def test_remember_gives_the_same_answers_from_the_cache_as_from_chroma(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    with Memory(folder, embedder=HashingEmbedder()) as mem:
        for n, text in enumerate(TEXTS):
            mem.upsert(f"k{n}", f"{text} ({n})", user_id=f"u{n % 3}", timestamp=NOW - 3600 * n)
        first = _answers(mem)  # fills the cache
        _same(_answers(mem), first)
        for n in range(0, len(TEXTS), 3):  # rewrite some the cache holds, delete others
            mem.upsert(f"k{n}", f"Porto trains and green tea, take {n}", user_id="u0", timestamp=NOW - 60)
        assert mem.forget(mem.remember("library card", k=1, user_id=ANY, now=NOW, reinforce=False)[0].id)
        cached = _answers(mem)
    with Memory(folder, embedder=HashingEmbedder(), config=MemoryConfig(vector_cache_size=0)) as mem:
        _same(_answers(mem), cached, scores=False)


def test_the_cache_holds_at_most_its_bytes_and_a_reused_row_changes_no_answer() -> None:
    cache = VectorCache(1000, max_bytes=3 * 4 * 4)  # three vectors of four floats
    first = {f"v{n}": np.full(4, n, dtype=np.float32) for n in range(5)}
    cache.put(first, cache.token())
    assert len(cache) == 3 and cache.nbytes == 3 * 4 * 4
    held = cache.get(["v2", "v3", "v4"])
    cache.put({f"w{n}": np.full(4, 100 + n, dtype=np.float32) for n in range(3)}, cache.token())
    assert cache.get(["v2", "v3", "v4"]) == {}  # their rows now hold w0..w2
    assert {k: v.tolist() for k, v in held.items()} == {f"v{n}": [float(n)] * 4 for n in (2, 3, 4)}
    assert cache.get(["w1"])["w1"].tolist() == [101.0] * 4
    cache.put({"long": np.ones(8, dtype=np.float32)}, cache.token())  # another length: starts again
    assert len(cache) == 1 and list(cache.get(["long", "w1"])) == ["long"]
    assert VectorCache(10, max_bytes=0).nbytes == 0


def test_memory_config_bounds_the_cache_in_mib(tmp_path: Path) -> None:
    rows = 5  # room for five vectors of the embedder's length
    mib = rows * 4 * HashingEmbedder().dimension / 2**20
    config = MemoryConfig(vector_cache_size=10_000, vector_cache_mib=mib)
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem:
        for n, text in enumerate(TEXTS):
            mem.upsert(f"k{n}", f"{text} ({n})", user_id="u", timestamp=NOW - n)
        mem.flush()  # every vector in Chroma: the reads below are cached
        mem.remember("green tea in Porto", k=20, user_id="u", now=NOW, reinforce=False)
        held = mem.stats()["vector_cache"]
    assert held["vectors"] == rows and held["bytes"] == rows * 4 * HashingEmbedder().dimension
