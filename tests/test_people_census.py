"""The census of a scope's people: the names each turn mentions are worked out as the turn is
written, so a first census reads no text, and it is the census a census that reads every text
computes, across writes, replacements and deletions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ucma_core import MemoryConfig
from ucma_core.embedders import HashingEmbedder
from ucma_core.retrieval.people import Census, People, TurnNames
from ucma_core.scope import Scope
from ucma_core.stores.episodic import EpisodeDraft
from ucma_core.stores.folder import FolderStores

_USER = "chat-7"
_SCOPE = Scope(user_id=_USER)
_EMBEDDER = HashingEmbedder()


@pytest.fixture
def stores(tmp_path: Path, clock) -> Iterator[FolderStores]:
    opened = FolderStores(tmp_path / "m", MemoryConfig(importance_threshold=0.0), _EMBEDDER, clock)
    try:
        yield opened
    finally:
        opened.close()


def _draft(text: str, at: float, speaker: str, session: str = "s1") -> EpisodeDraft:
    return EpisodeDraft(
        content=text,
        source="user",
        timestamp=at,
        importance=0.5,
        user_id=_USER,
        agent_id=None,
        session_id=session,
        participants=(speaker,),
    )


def _write(stores: FolderStores, drafts: Sequence[EpisodeDraft]) -> list[str]:
    with stores.graph.batch():
        episodes = stores.add_episodes(drafts, _EMBEDDER.embed([d.content for d in drafts]))
    return [ep.id for ep in episodes]


def _chat(stores: FolderStores, start: float) -> list[str]:
    lines = [
        ("Ana", "Slept badly. Met Zainab at the harbour"),
        ("Sam", "Honestly, Zainab and Oskar sound great"),
        ("Ana", "Oskar sold his boat to the Harbour Master on Monday"),
        ("Sam", "Finally home"),
    ]
    return _write(
        stores,
        [_draft(text, start + 60.0 * n, who, f"s{n % 2}") for n, (who, text) in enumerate(lines)],
    )


def _read_everything(stores: FolderStores) -> Census:
    """The census as counted from the texts themselves (nothing kept from the writes)."""
    return People(stores.backend, stores.episodic, turns=TurnNames(0)).census(_SCOPE)


def _texts_read(stores: FolderStores, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    texts = stores.backend.texts

    def counting(ids: Sequence[str]) -> dict[str, str]:
        read.extend(ids)
        return texts(ids)

    monkeypatch.setattr(stores.backend, "texts", counting)
    return read


def test_a_first_census_reads_no_text_of_turns_written_since_opening(
    stores: FolderStores, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = People(stores.backend, stores.episodic)
    _chat(stores, clock.now - 3600.0)
    read = _texts_read(stores, monkeypatch)
    census = people.census(_SCOPE)
    assert read == []
    assert {"zainab", "oskar"} <= set(census.mentions) and "zainab" in census.proper
    assert census == _read_everything(stores)


def test_a_replaced_turn_counts_with_its_new_text(stores: FolderStores, clock) -> None:
    people = People(stores.backend, stores.episodic)
    ids = _chat(stores, clock.now - 3600.0)
    for memory_id in ids[:2]:  # the two turns naming Zainab
        node = stores.graph.node(memory_id)
        draft = _draft("Met Priya at the market", node["timestamp"], "Ana", node["session_id"])
        stores.replace_episode(memory_id, draft, _EMBEDDER.embed([draft.content])[0])
    census = people.census(_SCOPE)
    assert "zainab" not in census.mentions and "zainab" not in census.proper
    assert "priya" in census.mentions
    assert census == _read_everything(stores)


def test_deleted_turns_leave_the_names_kept(stores: FolderStores, clock) -> None:
    turns = TurnNames()
    people = People(stores.backend, stores.episodic, turns=turns)
    ids = _chat(stores, clock.now - 3600.0)
    assert len(turns) == len(ids)
    stores.delete(ids[:3], scrub=False)
    assert len(turns) == 1
    stores.forget_scope(_SCOPE, scrub=True)
    assert len(turns) == 0
    census = people.census(_SCOPE)
    assert census.sessions == 0 and not census.mentions and census == _read_everything(stores)


def test_the_names_kept_are_bounded_and_the_census_unchanged(stores: FolderStores, clock) -> None:
    turns = TurnNames(capacity=4)
    people = People(stores.backend, stores.episodic, turns=turns)
    for day in range(5):
        _chat(stores, clock.now - 86_400.0 * (day + 1))
        assert len(turns) <= 4
    assert people.census(_SCOPE) == _read_everything(stores)


def test_a_census_counts_new_turns_without_reading_them(
    stores: FolderStores, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = People(stores.backend, stores.episodic)
    ids = _chat(stores, clock.now - 7200.0)
    assert people.census(_SCOPE) == _read_everything(stores)
    _write(stores, [_draft("Priya and Zainab say hi", clock.now - 60.0, "Sam", "s1")])
    stores.delete(ids[:1], scrub=False)  # session s0 starts elsewhere now: counted again
    read = _texts_read(stores, monkeypatch)
    census = people.census(_SCOPE)
    assert read == [] and census.mentions["priya"] == 1
    assert census == _read_everything(stores)


def test_a_replacement_that_failed_leaves_the_names_of_the_text_kept(
    stores: FolderStores, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = People(stores.backend, stores.episodic)
    ids = _chat(stores, clock.now - 3600.0)
    node = stores.graph.node(ids[0])
    draft = _draft("Met Priya at the market", node["timestamp"], "Ana", node["session_id"])

    def fail(memory_id: str) -> None:
        raise RuntimeError("the process is being stopped")

    monkeypatch.setattr(stores.episodic, "link", fail)
    with pytest.raises(RuntimeError):
        stores.replace_episode(ids[0], draft, _EMBEDDER.embed([draft.content])[0])
    people.rebind(stores.episodic)  # the indexes were rebuilt from the graph (as retrieval does)
    read = _texts_read(stores, monkeypatch)
    census = people.census(_SCOPE)
    assert read == []  # the old text went back through the keyword index: its names with it
    assert "priya" not in census.mentions and census.mentions["zainab"] == 2
    assert census == _read_everything(stores)


def _name(n: int) -> str:
    return "Ka" + "".join(chr(97 + n // 26**i % 26) for i in range(3))


def test_the_names_kept_are_bounded_in_names_too(stores: FolderStores, clock) -> None:
    """A pasted text naming many things is not kept, and the names held stay under
    ``max_names`` however many turns: the oldest go. The census is the one read from the texts."""
    turns = TurnNames(capacity=1000, max_names=640)
    people = People(stores.backend, stores.episodic, turns=turns)
    logs: list[str] = []
    for day in range(80):
        at = clock.now - 86_400.0 * (day + 1)
        roster = f"Then {_name(day)} met {_name(day + 100)}. So {_name(day + 200)} met {_name(day + 300)}"
        log = "Seen: " + ", ".join(_name(n + 1000) for n in range(30))  # more than max_names // 64
        ids = _write(stores, [_draft(roster, at, "Ana"), _draft(log, at + 1.0, "Sam", "s9")])
        logs.append(ids[1])
        assert turns.names_held <= 640
    held, missing = turns.get(logs)
    assert held == [] and missing == logs
    assert 0 < len(turns) < 80 and turns.names_held > 640 // 2
    assert people.census(_SCOPE) == _read_everything(stores)
    turns.forget(stores.episodic.turns(_SCOPE))
    assert turns.names_held == 0 and len(turns) == 0
