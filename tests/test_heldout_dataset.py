"""The held-out benchmark's dataset: regenerable byte for byte, and its questions are what
they claim to be (fast, offline, no model)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.heldout.generate import DEFAULT_OUT, KINDS, SHAPES, build_dataset, content_words, main
from benchmarks.heldout.run import latest_first, select, small_talk, without_names
from tests._datasets import assert_fresh, dataset_fixtures

text, data, turns = dataset_fixtures(build_dataset)


@pytest.fixture(scope="module")
def people(data: dict) -> dict[str, list[str]]:
    return {u["user_id"]: u["participants"] for u in data["users"]}


def test_the_shipped_file_is_a_fresh_generation_byte_for_byte(text: str) -> None:
    assert_fresh(text, build_dataset, DEFAULT_OUT, "benchmarks.heldout.generate")
    assert main(["--check", str(DEFAULT_OUT)]) == 0


def test_check_reports_a_changed_file(tmp_path: Path, text: str) -> None:
    changed = tmp_path / "conversations.json"
    changed.write_text(text.replace("Bye,", "Bye now,", 1), encoding="utf-8")
    assert main(["--check", str(changed)]) == 1


def test_conversations_between_two_or_three_named_people_over_dozens_of_sessions(
    data: dict, people: dict[str, list[str]]
) -> None:
    assert all(len(names) in (2, 3) for names in people.values())
    assert any(len(names) == 3 for names in people.values())
    sessions = Counter(s["user_id"] for s in data["sessions"])
    assert min(sessions.values()) >= 24
    for t in data["turns"]:
        assert t["speaker"] in people[t["user_id"]]  # nobody else talks: no assistant
    assert len({t["turn_id"] for t in data["turns"]}) == len(data["turns"])
    by_session: dict[str, list[int]] = {}
    for t in data["turns"]:
        by_session.setdefault(t["session_id"], []).append(t["timestamp"])
    assert all(stamps == sorted(stamps) for stamps in by_session.values())
    assert {u["user_id"] for u in data["users"] if u["imported"]}, "some conversations are imported"


def test_lots_of_short_turns_that_only_name_someone(data: dict, people: dict[str, list[str]]) -> None:
    named = [t for t in data["turns"] if any(re.search(rf"\b{n}\b", t["text"]) for n in people[t["user_id"]])]
    assert len(named) >= 0.25 * len(data["turns"])
    assert sum(len(t["text"].split()) <= 5 for t in named) >= 0.5 * len(named)


def test_every_question_names_a_participant_and_its_evidence_exists(
    data: dict, turns: dict[str, dict], people: dict[str, list[str]]
) -> None:
    assert set(KINDS) == {q["kind"] for q in data["questions"]}
    assert len({q["qid"] for q in data["questions"]}) == len(data["questions"])
    last = {}
    for t in data["turns"]:
        last[t["user_id"]] = max(last.get(t["user_id"], 0), t["timestamp"])
    for q in data["questions"]:
        assert q["person"] in people[q["user_id"]]
        assert re.search(rf"\b{q['person']}\b", q["question"]), q["question"]
        assert q["evidence"], q
        for tid in q["evidence"]:
            turn = turns[tid]
            assert turn["user_id"] == q["user_id"]
            assert turn["speaker"] == q["person"]  # each person answers for themselves
        assert q["asked_at"] > last[q["user_id"]]
        assert q["shape"] in SHAPES
        assert (q["kind"] == "imported") == next(
            u["imported"] for u in data["users"] if u["user_id"] == q["user_id"]
        )
        if q["kind"] != "imported":
            assert q["kind"] == q["shape"]


def test_spread_answers_are_several_turns_in_several_sessions(data: dict, turns: dict[str, dict]) -> None:
    spread = [q for q in data["questions"] if q["shape"] == "spread"]
    assert len(spread) >= 30
    for q in spread:
        assert 3 <= len(q["evidence"]) <= 6
        assert len({turns[tid]["session_id"] for tid in q["evidence"]}) == len(q["evidence"])


def test_paraphrases_share_no_content_word_with_their_evidence(
    data: dict, turns: dict[str, dict], people: dict[str, list[str]]
) -> None:
    paraphrases = [q for q in data["questions"] if q["shape"] == "paraphrase"]
    assert len(paraphrases) >= 30
    for q in paraphrases:
        (evidence,) = q["evidence"]
        asked = content_words(q["question"], people[q["user_id"]])
        assert asked, q["question"]
        assert not asked & content_words(turns[evidence]["text"]), q["question"]


def test_distractor_topics_are_crowded_by_the_others(data: dict, turns: dict[str, dict]) -> None:
    for q in (q for q in data["questions"] if q["shape"] == "distractor"):
        crowd = [turns[tid] for tid in q["distractors"]]
        assert len(crowd) >= 8
        assert all(t["speaker"] != q["person"] for t in crowd)
        assert any(q["person"] in t["text"] for t in crowd), "some are said to the person, by name"
        word = re.compile(rf"\b{q['topic']}\b", re.IGNORECASE)
        (evidence,) = q["evidence"]
        assert word.search(turns[evidence]["text"])
        assert sum(bool(word.search(t["text"])) for t in crowd) >= 6
        for t in turns.values():  # the person says the topic's word only in the evidence
            if t["user_id"] == q["user_id"] and t["speaker"] == q["person"] and t["turn_id"] != evidence:
                assert not word.search(t["text"]), (q["question"], t["text"])


def test_corrections_keep_only_the_latest_statement_as_evidence(data: dict, turns: dict[str, dict]) -> None:
    corrections = [q for q in data["questions"] if q["shape"] == "correction"]
    assert len(corrections) >= 30
    for q in corrections:
        (latest,) = q["evidence"]
        assert 1 <= len(q["superseded"]) <= 2
        stamps = [turns[tid]["timestamp"] for tid in (*q["superseded"], latest)]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        assert q["answer"] in turns[latest]["text"]
    # several plans change at once: one person's corrections overlap in time
    by_person = Counter((q["user_id"], q["person"]) for q in corrections)
    assert min(by_person.values()) >= 2


def test_runner_helpers(data: dict, people: dict[str, list[str]]) -> None:
    questions, chat_turns = select(data, 3)
    assert Counter(q["kind"] for q in questions) == dict.fromkeys(KINDS, 3)
    assert {t["user_id"] for t in chat_turns} == {q["user_id"] for q in questions}
    stripped = without_names(questions, people)
    assert all(q["person"] not in s["question"] for q, s in zip(questions, stripped, strict=True))
    q = {"evidence": ["new"], "superseded": ["old"]}
    assert latest_first(["x", "new", "old"], q) and not latest_first(["old", "new"], q)
    assert not latest_first(["x"], q)


def test_small_talk_is_what_no_question_refers_to(data: dict, turns: dict[str, dict]) -> None:
    chatter = small_talk(data)
    assert 0.6 * len(turns) <= len(chatter) < len(turns)
    assert any(turns[t]["text"].startswith("Bye, ") for t in chatter)
    assert not chatter & {tid for q in data["questions"] for tid in q["evidence"]}
