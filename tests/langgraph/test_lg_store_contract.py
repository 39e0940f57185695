"""Store contract: the same operations on LangGraph's InMemoryStore (the reference) and on
UCMAStore give the same results.

Exact for get / put / delete / filters / list_namespaces / pagination; for query search
the same items are found (order may differ: UCMA ranks with its own signals). The
reference gets an index config with the same deterministic embedder UCMA uses, so
its query search is comparable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_langchain.langgraph import UCMAStore

FIELDS = ["text", "tags[*]"]

VALUES: list[dict[str, Any]] = [
    {"text": "Ana drinks green tea every morning", "score": 3, "kind": "habit", "tags": ["tea", "morning"]},
    {"text": "Bo plays the trumpet in a jazz band", "score": 7.5, "kind": "hobby", "tags": ["music"]},
    {"text": "The office moves to Lisbon in May", "score": 5, "kind": "event", "meta": {"city": "Lisbon"}},
    {"text": "Carla is allergic to peanuts", "score": 9, "kind": "health", "flags": [True, False, None]},
    {"text": "Dan prefers short answers", "score": 1, "kind": "habit", "nested": {"a": {"b": [1, 2]}}},
    {"text": "Unicode: café, naïve, 東京, emoji 🎉", "score": 4, "kind": "misc", "empty": {}},
]


def _embed(texts: list[str]) -> list[list[float]]:
    return HashingEmbedder().embed(texts)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[BaseStore, UCMAStore]]:
    reference = InMemoryStore(index={"dims": HashingEmbedder().dimension, "embed": _embed, "fields": FIELDS})
    with Memory(tmp_path / "memory", embedder=HashingEmbedder()) as mem:
        yield reference, UCMAStore(mem, index={"fields": FIELDS})


def _item(item: Item | None) -> tuple[Any, ...] | None:
    if item is None:
        return None
    return (item.namespace, item.key, json.dumps(item.value))


def _items(items: list[Any]) -> list[tuple[Any, ...] | None]:
    return [_item(i) for i in items]


def same(
    stores: tuple[BaseStore, UCMAStore], run: Callable[[BaseStore], Any], norm: Callable[[Any], Any]
) -> Any:
    """Run ``run`` on both stores and assert the normalised results are equal."""
    reference, ucma = stores
    expected, got = norm(run(reference)), norm(run(ucma))
    assert got == expected
    return got


def fill(store: BaseStore, namespaces: list[tuple[str, ...]], per: int = 3) -> None:
    """Namespace by namespace (so insertion order is also the reference's namespace order)."""
    n = 0
    for ns in namespaces:
        for i in range(per):
            value = dict(VALUES[n % len(VALUES)])
            value["n"] = n
            store.put(ns, f"k{i}", value)
            n += 1


def both(stores: tuple[BaseStore, UCMAStore], action: Callable[[BaseStore], Any]) -> None:
    for store in stores:
        action(store)


# ---------------------------------------------------------------------- get / put / delete
def test_values_come_back_exactly(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        for n, value in enumerate(VALUES):
            store.put(("docs", "v"), f"key-{n}", value)
        return [store.get(("docs", "v"), f"key-{n}") for n in range(len(VALUES))]

    got = same(stores, run, _items)
    assert [json.loads(i[2]) for i in got] == VALUES  # type: ignore[index]


def test_update_replaces_value_and_delete_removes(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        store.put(("a",), "x", {"v": 1})
        store.put(("a",), "x", {"v": 2, "w": [1]})
        first = store.get(("a",), "x")
        store.delete(("a",), "x")
        store.delete(("a",), "missing")
        return [first, store.get(("a",), "x"), store.get(("b",), "x")]

    same(stores, run, _items)


def test_get_missing_and_same_key_in_other_namespace(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        store.put(("users", "ana"), "prefs", {"theme": "dark"})
        store.put(("users", "bo"), "prefs", {"theme": "light"})
        return [
            store.get(("users", "ana"), "prefs"),
            store.get(("users", "bo"), "prefs"),
            store.get(("users",), "prefs"),
            store.get(("users", "ana"), "other"),
        ]

    same(stores, run, _items)


def test_timestamps_are_aware_datetimes(stores: tuple[BaseStore, UCMAStore]) -> None:
    for store in stores:
        store.put(("t",), "k", {"a": 1})
        item = store.get(("t",), "k")
        assert item is not None
        assert item.created_at.tzinfo is not None and item.updated_at >= item.created_at


# ---------------------------------------------------------------------- search without a query
NAMESPACES = [("docs", "a"), ("docs", "b"), ("docs", "a", "deep"), ("notes",), ("users", "ana", "prefs")]


@pytest.mark.parametrize(
    "prefix",
    [(), ("docs",), ("docs", "a"), ("docs", "a", "deep"), ("notes",), ("users",), ("nothing",)],
)
def test_prefix_search_lists_in_the_same_order(
    stores: tuple[BaseStore, UCMAStore], prefix: tuple[str, ...]
) -> None:
    both(stores, lambda s: fill(s, NAMESPACES))
    same(stores, lambda s: s.search(prefix, limit=100), _items)


@pytest.mark.parametrize(
    "flt",
    [
        {"kind": "habit"},
        {"kind": {"$eq": "habit"}},
        {"kind": {"$ne": "habit"}},
        {"score": {"$gt": 4}},
        {"score": {"$gte": 5}},
        {"score": {"$lt": 5}},
        {"score": {"$lte": 3}},
        {"score": {"$gt": 2, "$lt": 8}},
        {"score": 7.5},
        {"score": 5.0},
        {"kind": "habit", "score": {"$lt": 2}},
        {"meta": {"city": "Lisbon"}},
        {"tags": ["tea", "morning"]},
        {"tags": ["morning", "tea"]},
        {"nested": {"a": {"b": [1, 2]}}},
        {"flags": [True, False, None]},
        {"kind": "nothing"},
        {"n": {"$gte": 10}},
    ],
)
def test_filters_match_the_same_items(stores: tuple[BaseStore, UCMAStore], flt: dict[str, Any]) -> None:
    both(stores, lambda s: fill(s, NAMESPACES))
    same(stores, lambda s: s.search(("docs",), filter=flt, limit=100), _items)
    same(stores, lambda s: s.search((), filter=flt, limit=100), _items)


@pytest.mark.parametrize(
    ("limit", "offset"), [(1, 0), (4, 0), (4, 4), (4, 12), (5, 13), (100, 0), (3, 100), (0, 0)]
)
def test_pagination_is_exact(stores: tuple[BaseStore, UCMAStore], limit: int, offset: int) -> None:
    both(stores, lambda s: fill(s, NAMESPACES))
    same(stores, lambda s: s.search((), limit=limit, offset=offset), _items)
    same(
        stores,
        lambda s: s.search(("docs",), filter={"kind": {"$ne": "x"}}, limit=limit, offset=offset),
        _items,
    )


def test_pages_cover_everything_once(stores: tuple[BaseStore, UCMAStore]) -> None:
    both(stores, lambda s: fill(s, NAMESPACES, per=5))

    def pages(store: BaseStore) -> list[Any]:
        out: list[Any] = []
        for offset in range(0, 40, 7):
            out.extend(store.search((), limit=7, offset=offset))
        return out

    got = same(stores, pages, _items)
    assert len(got) == len(set(got)) == 25


def test_interleaved_namespaces_find_the_same_items(stores: tuple[BaseStore, UCMAStore]) -> None:
    """Interleaved writes: InMemoryStore groups results by namespace, UCMA lists them by
    creation time; the items are the same."""

    def run(store: BaseStore) -> list[Any]:
        for n in range(6):
            store.put(("mix", "even" if n % 2 == 0 else "odd"), f"k{n}", {"n": n})
        return store.search(("mix",), limit=100)

    same(stores, run, lambda items: sorted(_items(items)))


# ---------------------------------------------------------------------- list_namespaces
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"prefix": ("docs",)},
        {"prefix": ("docs", "a")},
        {"suffix": ("prefs",)},
        {"prefix": ("docs", "*")},
        {"suffix": ("*", "prefs")},
        {"prefix": ("*", "a")},
        {"prefix": ("docs",), "suffix": ("deep",)},
        {"max_depth": 1},
        {"max_depth": 2},
        {"prefix": ("docs",), "max_depth": 2},
        {"limit": 2},
        {"limit": 2, "offset": 2},
        {"offset": 10},
        {"prefix": ("nothing",)},
    ],
)
def test_list_namespaces_is_exact(stores: tuple[BaseStore, UCMAStore], kwargs: dict[str, Any]) -> None:
    both(stores, lambda s: fill(s, NAMESPACES, per=1))
    same(stores, lambda s: s.list_namespaces(**kwargs), list)


# ---------------------------------------------------------------------- query search
def _keys(items: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((i.namespace, i.key, i.score is None) for i in items)


@pytest.mark.parametrize(
    "query", ["green tea", "jazz trumpet", "Lisbon office move", "peanut allergy", "café"]
)
def test_query_search_finds_the_same_items(stores: tuple[BaseStore, UCMAStore], query: str) -> None:
    both(stores, lambda s: fill(s, NAMESPACES, per=2))
    same(stores, lambda s: s.search(("docs",), query=query, limit=100), _keys)
    same(stores, lambda s: s.search((), query=query, filter={"kind": "habit"}, limit=100), _keys)


@pytest.mark.parametrize("n", range(len(VALUES)))
def test_query_equal_to_an_item_ranks_it_first(stores: tuple[BaseStore, UCMAStore], n: int) -> None:
    both(stores, lambda s: fill(s, [("docs",)], per=len(VALUES)))
    same(stores, lambda s: s.search(("docs",), query=VALUES[n]["text"], limit=1)[0].key, str)


def test_identical_texts_are_all_found(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        for n in range(3):
            store.put(("dup",), f"k{n}", {"text": "the same words in every item"})
        return store.search(("dup",), query="same words", limit=10)

    same(stores, run, _keys)


def test_unindexed_items_are_never_scored(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        store.put(("idx",), "on", {"text": "a red bicycle"})
        store.put(("idx",), "off", {"text": "a red bicycle too"}, index=False)
        store.put(("idx",), "other-field", {"text": "ignored", "title": "red bicycle"}, index=["title"])
        store.put(("idx",), "no-text", {"title": "no indexed field here"})
        return store.search(("idx",), query="red bicycle", limit=10)

    got = same(stores, run, _keys)
    assert [k for _, k, unscored in got if unscored] == ["no-text", "off"]


def test_batch_reads_see_the_state_before_its_writes(stores: tuple[BaseStore, UCMAStore]) -> None:
    def run(store: BaseStore) -> list[Any]:
        store.put(("b",), "x", {"v": 0})
        ops = [
            PutOp(("b",), "x", {"v": 1}),
            GetOp(("b",), "x"),
            PutOp(("b",), "y", {"v": 2}),
            SearchOp(("b",), limit=10),
            PutOp(("b",), "x", {"v": 3}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
        ]
        return [*store.batch(ops), store.get(("b",), "x"), store.get(("b",), "y")]

    def norm(results: list[Any]) -> list[Any]:
        return [_items(r) if isinstance(r, list) and r and isinstance(r[0], Item) else r for r in results]

    same(stores, run, lambda r: [_item(x) if isinstance(x, Item) else x for x in norm(r)])


async def test_async_api_gives_the_same_results(stores: tuple[BaseStore, UCMAStore]) -> None:
    reference, ucma = stores
    results = []
    for store in (reference, ucma):
        await store.aput(("as", "ana"), "k", {"text": "async tea", "n": 1})
        await store.aput(("as", "bo"), "k", {"text": "async coffee", "n": 2})
        results.append(
            (
                _item(await store.aget(("as", "ana"), "k")),
                _items(await store.asearch(("as",), filter={"n": {"$gt": 1}})),
                await store.alist_namespaces(prefix=("as",)),
                _keys(await store.asearch(("as",), query="tea", limit=10)),
            )
        )
        await store.adelete(("as", "ana"), "k")
        results.append(_item(await store.aget(("as", "ana"), "k")))
    assert results[:2] == results[2:]


def test_a_batch_writes_under_the_reserved_root_as_langgraph_does(
    stores: tuple[BaseStore, UCMAStore],
) -> None:
    """LangGraph refuses the root label "langgraph" in put() only: a batch takes it, and the
    other writes of the batch are kept."""

    def run(store: BaseStore) -> list[Any]:
        store.batch(
            [
                PutOp(("memories", "ana"), "a", {"v": 1}),
                PutOp(("langgraph", "internal"), "b", {"v": 2}),
                PutOp(("memories", "ana"), "c", {"v": 3}),
            ]
        )
        return [
            store.get(("memories", "ana"), "a"),
            store.get(("langgraph", "internal"), "b"),
            store.get(("memories", "ana"), "c"),
        ]

    got = same(stores, run, _items)
    assert None not in got
    for store in stores:
        with pytest.raises(ValueError, match="langgraph"):
            store.put(("langgraph", "x"), "k", {"v": 1})


# Filters the SQL stores resolve: nested dotted keys and comparisons with every number.
SQL_VALUES: list[dict[str, Any]] = [
    {"user": {"access_level": 3, "name": "ana"}, "score": 1.5, "day": "2026-01-05"},
    {"user": {"access_level": 7, "name": "bo"}, "score": -2, "day": "2026-03-01"},
    {"user": {"access_level": 5, "name": "carla"}, "score": 1e300, "day": "2025-12-31"},
]


@pytest.fixture
def sql_stores(tmp_path: Path) -> Iterator[tuple[BaseStore, UCMAStore]]:
    with SqliteStore.from_conn_string(str(tmp_path / "reference.sqlite")) as reference:
        reference.setup()
        with Memory(tmp_path / "memory", embedder=HashingEmbedder()) as mem:
            yield reference, UCMAStore(mem)


@pytest.mark.parametrize(
    "flt",
    [
        {"user.access_level": {"$gte": 5}},
        {"user.access_level": 3},
        {"user.name": "bo"},
        {"user.name": {"$ne": "bo"}},
        {"user.access_level": {"$gt": 2, "$lt": 7}},
        {"score": {"$lt": math.inf}},
        {"score": {"$gt": -math.inf}},
        {"score": {"$gt": math.inf}},
        {"score": {"$lte": -math.inf}},
        {"score": {"$gte": 1e300}},
        {"user.access_level": {"$lt": math.inf}, "score": {"$gt": 0}},
        {"day": {"$gte": "2026-01-01"}},
        {"day": {"$lt": "2026-02-01"}},
    ],
)
def test_filters_match_as_the_sql_stores_resolve_them(
    sql_stores: tuple[BaseStore, UCMAStore], flt: dict[str, Any]
) -> None:
    def run(store: BaseStore) -> list[Any]:
        for n, value in enumerate(SQL_VALUES):
            store.put(("f", "ana"), f"k{n}", value)
        return sorted(item.key for item in store.search(("f",), filter=flt, limit=100))

    got = same(sql_stores, run, lambda keys: keys)
    assert isinstance(got, list)


def test_nested_filters_and_infinities_are_not_empty(sql_stores: tuple[BaseStore, UCMAStore]) -> None:
    _, store = sql_stores
    for n, value in enumerate(SQL_VALUES):
        store.put(("f", "ana"), f"k{n}", value)
    assert [i.key for i in store.search(("f",), filter={"user.access_level": {"$gte": 5}})] == ["k1", "k2"]
    assert len(store.search(("f",), filter={"score": {"$lt": math.inf}})) == 3
    assert store.search(("f",), filter={"score": {"$gt": math.inf}}) == []


@pytest.fixture
def whole_value_stores(tmp_path: Path) -> Iterator[tuple[BaseStore, UCMAStore]]:
    """Both stores embed the whole value (``"$"``) with the same embedder."""
    reference = InMemoryStore(index={"dims": HashingEmbedder().dimension, "embed": _embed})
    with Memory(tmp_path / "memory", embedder=HashingEmbedder()) as mem:
        yield reference, UCMAStore(mem)


def test_scores_are_the_cosine_similarity_the_reference_reports(
    whole_value_stores: tuple[BaseStore, UCMAStore],
) -> None:
    def run(store: BaseStore) -> dict[str, float]:
        for n, value in enumerate(VALUES):
            store.put(("s",), f"k{n}", value)
        found = store.search(("s",), query="Ana drinks green tea", limit=len(VALUES))
        return {i.key: round(i.score, 6) for i in found if i.score is not None}

    reference, ucma = whole_value_stores
    expected, got = run(reference), run(ucma)
    assert got and all(got[k] == expected[k] for k in got)
    assert max(got, key=lambda k: got[k]) == "k0"


def test_a_threshold_drops_an_unrelated_lone_item_on_both_stores(
    whole_value_stores: tuple[BaseStore, UCMAStore],
) -> None:
    threshold = 0.5
    kept = []
    for store in whole_value_stores:
        store.put(("lone",), "tea", {"text": "Ana drinks green tea every morning"})
        unrelated = store.search(("lone",), query="quarterly tax filing deadline")
        related = store.search(("lone",), query="Ana drinks green tea every morning")
        assert all(i.score is not None and i.score < threshold for i in unrelated)
        assert related and related[0].score is not None and related[0].score > 0.8
        kept.append([i.key for i in [*unrelated, *related] if i.score is not None and i.score >= threshold])
    assert kept[0] == kept[1] == ["tea"]


def test_a_large_batch_of_new_updated_and_deleted_items(stores: tuple[BaseStore, UCMAStore]) -> None:
    """New items are written in bulk, updates and deletes one by one: the result is the same."""

    def run(store: BaseStore) -> list[Any]:
        store.put(("bulk", "ana"), "old", {"text": "before", "n": -1})
        store.put(("bulk", "ana"), "gone", {"text": "to delete", "n": -2})
        ops: list[Any] = [
            PutOp(("bulk", f"user{n % 3}"), f"k{n}", {"text": f"item {n}", "n": n})  # distinct texts:
            for n in range(60)  # InMemoryStore fails on one text twice in a batch
        ]
        ops += [
            PutOp(("bulk", "ana"), "old", {"text": "after", "n": 100}),
            PutOp(("bulk", "ana"), "gone", None),
        ]
        ops.append(PutOp(("bulk", "user0"), "k0", {"text": "the last write wins", "n": 0}))
        store.batch(ops)
        return sorted(_items(store.search(("bulk",), limit=100)), key=repr)

    got = same(stores, run, lambda r: r)
    assert len(got) == 61
