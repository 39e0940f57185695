"""The retrieval-quality benchmark: its dataset, metrics and keyword baseline (fast, offline)."""

from __future__ import annotations

import calendar
import re
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from benchmarks.quality.baselines import BM25Index, rrf, stem, tokenize
from benchmarks.quality.generate import DEFAULT_OUT, KINDS, build_dataset
from benchmarks.quality.metrics import evaluate, recall_at_k, reciprocal_rank
from tests._datasets import assert_fresh, dataset_fixtures

MONTHS = list(calendar.month_name)[1:]

text, data, turns = dataset_fixtures(build_dataset)


def test_generator_is_deterministic_and_matches_the_shipped_file(text: str) -> None:
    assert_fresh(text, build_dataset, DEFAULT_OUT, "benchmarks.quality.generate")


def test_size_and_shape(data: dict, text: str) -> None:
    assert len(text.encode()) < 5_000_000
    assert len(data["users"]) >= 5
    assert 5_000 <= len(data["turns"]) <= 15_000
    per_user = Counter(s["user_id"] for s in data["sessions"])
    assert min(per_user.values()) >= 20
    for user in data["users"]:
        days = sorted(s["started_at"] for s in data["sessions"] if s["user_id"] == user["user_id"])
        assert days[-1] - days[0] > 180 * 86400  # spread over months
    assert len({t["turn_id"] for t in data["turns"]}) == len(data["turns"])
    assert len({q["qid"] for q in data["questions"]}) == len(data["questions"])
    fields = {"turn_id", "user_id", "session_id", "speaker", "timestamp", "text"}
    assert all(fields <= set(t) and isinstance(t["timestamp"], int) for t in data["turns"])
    q_fields = {"qid", "user_id", "kind", "question", "asked_at", "evidence", "answer"}
    assert all(q_fields <= set(q) for q in data["questions"])


def test_turns_are_in_time_order_within_sessions_and_some_sessions_have_two_people(data: dict) -> None:
    by_session: dict[str, list[dict]] = {}
    for t in data["turns"]:
        by_session.setdefault(t["session_id"], []).append(t)
    for session_turns in by_session.values():
        stamps = [t["timestamp"] for t in session_turns]
        assert stamps == sorted(stamps)
    names = {u["user_id"]: u["name"] for u in data["users"]}
    shared = [s for s in by_session.values() if len({t["speaker"] for t in s} - {"assistant"}) == 2]
    assert len(shared) >= len(names) * 3
    for t in data["turns"]:
        if t["speaker"] not in ("assistant", names[t["user_id"]]):
            user = next(u for u in data["users"] if u["user_id"] == t["user_id"])
            assert t["speaker"] in user["companions"]


def test_every_kind_has_at_least_40_questions(data: dict) -> None:
    counts = Counter(q["kind"] for q in data["questions"])
    assert set(counts) == set(KINDS)
    assert min(counts.values()) >= 40, counts


def test_evidence_exists_and_belongs_to_the_asking_user(data: dict, turns: dict[str, dict]) -> None:
    last_turn = {}
    for t in data["turns"]:
        last_turn[t["user_id"]] = max(last_turn.get(t["user_id"], 0), t["timestamp"])
    for q in data["questions"]:
        assert q["evidence"], q
        for tid in q["evidence"]:
            assert tid in turns, (q["qid"], tid)
            assert turns[tid]["user_id"] == q["user_id"]
            assert turns[tid]["speaker"] != "assistant"
        assert q["asked_at"] > last_turn[q["user_id"]]  # asked after the user's whole history
        if q["kind"] == "multi_hop":
            assert len(set(q["evidence"])) == 2
        if q["kind"] == "who_said":
            assert q["answer"] == turns[q["evidence"][0]]["speaker"]


def _window(wording: str, asked_at: int) -> tuple[int, int]:
    """The [start, end) a temporal phrase means, worked out here independently of the generator."""
    asked = datetime.fromtimestamp(asked_at, tz=timezone.utc).date()

    def ts(d: date) -> int:
        return int(datetime(d.year, d.month, d.day, tzinfo=timezone.utc).timestamp())

    if wording == "yesterday":
        return ts(asked - timedelta(days=1)), ts(asked)
    if wording == "last week":
        monday = asked - timedelta(days=asked.weekday())
        return ts(monday - timedelta(days=7)), ts(monday)
    if wording == "last month":
        first = asked.replace(day=1)
        return ts((first - timedelta(days=1)).replace(day=1)), ts(first)
    month = MONTHS.index(wording.removeprefix("in ")) + 1
    start = date(asked.year, month, 1)
    end = date(asked.year + 1, 1, 1) if month == 12 else date(asked.year, month + 1, 1)
    return ts(start), ts(end)


def test_temporal_evidence_lies_in_the_range_the_wording_implies(data: dict, turns: dict[str, dict]) -> None:
    phrases = (
        r"(yesterday|last week|last month|in (?:" + "|".join(MONTHS) + r")|before the move|after the move)"
    )
    seen = Counter()
    for q in (q for q in data["questions"] if q["kind"] == "temporal"):
        found = re.findall(phrases, q["question"])
        assert len(found) == 1, q["question"]
        wording = found[0]
        assert q["time_expr"] == wording
        stamps = [turns[t]["timestamp"] for t in q["evidence"]]
        if wording.endswith("the move"):
            anchor = turns[q["anchor"]]
            assert re.search(r"\bmov(ed|ing)\b", anchor["text"], re.I)
            assert all(
                (s < anchor["timestamp"]) if wording.startswith("before") else (s > anchor["timestamp"])
                for s in stamps
            )
            seen["move"] += 1
        else:
            start, end = _window(wording, q["asked_at"])
            assert q["time_range"] == [start, end]
            assert all(start <= s < end for s in stamps), (q["question"], stamps, start, end)
            seen[wording.split()[0]] += 1
        assert all(q["time_range"][0] <= s < q["time_range"][1] for s in stamps)
    assert {"yesterday", "last", "in", "move"} <= set(seen)


def test_recall_and_mrr_on_a_hand_made_example() -> None:
    ranked = ["a", "b", "c", "d", "e"]
    assert recall_at_k(ranked, ["c", "x"], 2) == 0.0
    assert recall_at_k(ranked, ["c", "x"], 3) == 0.5
    assert recall_at_k(ranked, ["a", "e"], 5) == 1.0
    assert reciprocal_rank(ranked, ["c", "x"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranked, ["x"]) == 0.0
    questions = [
        {"qid": "q1", "kind": "single_fact", "evidence": ["b"]},
        {"qid": "q2", "kind": "multi_hop", "evidence": ["a", "z"]},
        {"qid": "q3", "kind": "multi_hop", "evidence": ["y"]},
    ]
    rankings = {"q1": ["x", "b"], "q2": ["z", "q", "r", "s", "t", "a"], "q3": []}
    scores = evaluate(rankings, questions, ks=(1, 5))
    assert scores["single_fact"] == {"n": 1, "recall@1": 0.0, "recall@5": 1.0, "mrr": 0.5}
    assert scores["multi_hop"]["recall@1"] == pytest.approx(0.25)  # (1/2 + 0) / 2
    assert scores["multi_hop"]["recall@5"] == pytest.approx(0.25)
    assert scores["multi_hop"]["mrr"] == pytest.approx(0.5)  # (1 + 0) / 2
    assert scores["overall"]["n"] == 3
    assert scores["overall"]["mrr"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert scores["overall"]["recall@5"] == pytest.approx((1 + 0.5 + 0) / 3)


def test_bm25_ranks_the_exact_term_match_first_and_stays_within_the_user() -> None:
    index = BM25Index()
    index.add(
        [
            ("t1", "ana", "I love the climbing gym, the code of conduct there is strict."),
            ("t2", "ana", "The new locker code at the gym is 4471."),
            ("t3", "ana", "Code reviews at work are boring."),
            ("t4", "bob", "My locker code is 4471 too, funny."),
        ]
    )
    assert index.search("What is Ana's locker code 4471?", "ana")[0] == "t2"
    assert "t4" not in index.search("locker code 4471", "ana")
    assert index.search("locker code 4471", "bob") == ["t4"]
    assert index.search("unrelated words", "ana") == []


def test_tokenizer_drops_stopwords_and_stems_lightly() -> None:
    assert tokenize("What street did Ana move to?") == ["street", "ana", "move"]
    assert tokenize("We moved into the flats") == ["move", "flat"]
    assert [stem(w) for w in ("tomatoes", "living", "studied", "family")] == [
        "tomato",
        "live",
        "study",
        "family",
    ]


def test_user_name_is_removed_from_questions_for_the_diagnostic_rows() -> None:
    from benchmarks.quality.run import without_user_name

    assert without_user_name("Where does Ana's sister live?", "Ana") == "Where does sister live?"
    assert (
        without_user_name("What did Ana say about the car in May?", "Ana")
        == "What did say about the car in May?"
    )
    assert without_user_name("Who saw a fox?", "Ana") == "Who saw a fox?"
    assert without_user_name("Is Anatole here?", "Ana") == "Is Anatole here?"


def test_rrf_fuses_rankings() -> None:
    assert rrf([["a", "b", "c"], ["c", "a"]], k=2) == ["a", "c"]


def test_dense_baseline_filters_by_user(tmp_path: Path) -> None:
    pytest.importorskip("chromadb")
    from benchmarks.quality.baselines import DenseIndex
    from ucma_core.embedders import HashingEmbedder

    index = DenseIndex(HashingEmbedder(64))
    try:
        index.add(
            [
                ("t1", "ana", "my sister lives in Porto"),
                ("t2", "ana", "the boiler is broken"),
                ("t3", "bob", "my sister lives in Porto"),
            ]
        )
        found = index.search("where does my sister live, Porto?", "ana", k=2)
        assert found[0] == "t1" and "t3" not in found
    finally:
        index.close()
