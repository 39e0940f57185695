"""The read path's started calls: a Chroma read begun before other work answers as the plain read.

``remember`` starts Chroma's query (and the read of candidate vectors) on the vector
store's worker thread and does its keyword and entity searches meanwhile; these tests
hold the started reads to the answers of the plain ones, with records waiting in the
group-commit buffer and records in Chroma, and the keyword index's text read to its
row read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma_core import Memory, MemoryConfig
from ucma_core.config import ChromaConfig, GroupCommitConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.keywords import KeywordIndex
from ucma_core.storage.pending import BufferedVectorStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BufferedVectorStore]:
    # a long interval and a large batch: what is staged waits in the buffer until drained
    group = GroupCommitConfig(batch_size=1000, interval_seconds=60.0)
    vectors = BufferedVectorStore(ChromaConfig(), tmp_path, group=group, cache_size=16)
    vectors.use("read-path", create=True, folder_id="f")
    yield vectors
    vectors.close()


def _vec(*values: float) -> list[float]:
    return [*values, 0.0, 0.0, 0.0][:4]


def _plain(hits: list[tuple[str, float, object]]) -> list[tuple[str, float, list[float]]]:
    return [(i, round(d, 6), v.tolist()) for i, d, v in hits]  # type: ignore[attr-defined]


def test_started_reads_answer_as_plain_ones_with_waiting_and_stored_records(
    store: BufferedVectorStore,
) -> None:
    store.add(["a", "b"], [_vec(1, 0), _vec(0, 1)], ["a", "b"], [{"u": "x"}, {"u": "y"}])
    store.stage(["c", "d"], [_vec(1, 0.1), _vec(0, 0, 1)], ["c", "d"], [{"u": "x"}, {"u": "x"}])
    assert len(store.pending) == 2  # c and d wait, a and b are in Chroma
    for where in (None, {"u": "x"}):
        query = store.nearest_later(_vec(1, 0.02), 3, where)
        vectors = store.vectors_of_later(["b", "d", "missing"])
        started = _plain(query())
        assert started == _plain(store.nearest(_vec(1, 0.02), 3, where))
        assert [i for i, _, _ in started] == (["a", "c", "b"] if where is None else ["a", "c", "d"])
        got = vectors()
        assert sorted(got) == ["b", "d"] and got["d"].tolist() == _vec(0, 0, 1)
    assert store.nearest_later(_vec(1, 0), 0, None)() == []


def test_started_reads_may_be_answered_in_any_order(store: BufferedVectorStore) -> None:
    store.add(["a", "b"], [_vec(1, 0), _vec(0, 1)], ["a", "b"], [{"u": "x"}, {"u": "x"}])
    first = store.vectors_of_later(["a"])
    second = store.nearest_later(_vec(0, 1), 1, None)
    assert [i for i, _, _ in second()] == ["b"]
    assert first()["a"].tolist() == _vec(1, 0)
    store.drain()  # nothing waits; the writer is free after answers taken out of order


def test_a_text_read_is_the_text_of_a_row_read(tmp_path: Path) -> None:
    with Memory(
        tmp_path / "m", embedder=HashingEmbedder(), config=MemoryConfig(importance_threshold=0.0)
    ) as mem:
        ids = [mem.observe(f"note {n}: the blue kettle is in cupboard {n}", user_id="ana") for n in range(5)]
    index = KeywordIndex(tmp_path / "m")
    try:
        known = [i for i in ids if i is not None]
        rows = index.rows([*known, "missing"])
        assert index.texts([*known, "missing"]) == {i: text for i, (text, _) in rows.items()}
        assert len(rows) == 5
    finally:
        index.close()


def test_a_remember_reads_the_vectors_its_dense_search_missed_at_most_once(tmp_path: Path) -> None:
    # no vector cache: every vector a remember lacks is read from Chroma; sessions of turns
    # that name people bring keyword, hop, context and graph candidates dense search misses
    config = MemoryConfig(importance_threshold=0.0, vector_cache_size=0)
    people = ["Zainab", "Oskar", "Mireille", "Tomasz", "Ines", "Kwame"]
    topics = ["the pottery class", "a hiking trip", "the new job", "a sourdough starter", "the garden"]
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as mem:
        for n in range(120):
            who, what = people[n % len(people)], topics[(n // 3) % len(topics)]
            text = f"Talked with {who} about {what} on day {n}. Did {people[(n + 2) % 6]} join?"
            mem.observe(text, user_id="ana", session_id=f"s{n // 12}", timestamp=1.7e9 + 60 * n)
        mem.flush()
        reads = []
        for query in ("what did Zainab say about pottery?", "hiking with Oskar", "sourdough starter tips"):
            before = mem.stats()["vector_cache"]["reads"]
            assert mem.remember(query, k=5, user_id="ana", reinforce=False)
            reads.append(mem.stats()["vector_cache"]["reads"] - before)
    assert max(reads) <= 1  # at most one read per remember
    assert sum(reads) >= 1  # and some remember needed one
