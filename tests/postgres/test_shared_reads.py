"""A ``remember`` on a shared memory reads the ``records`` rows it needs once, and never
keeps them past its own call: what another worker writes next is what the next
``remember`` returns (real PostgreSQL and Chroma servers)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.postgres.conftest import Servers
from ucma_core import Memory
from ucma_core.config import FusionConfig
from ucma_core.embedders import HashingEmbedder


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every SQL statement the test's thread sends from now on (its text, whitespace folded):
    not the background flush of pending vectors, which a worker runs on its own thread."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute
    caller = threading.get_ident()

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == caller:
            sent.append(" ".join(str(query).split()))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", counted)
    yield sent


def _row_reads(sent: list[str]) -> list[str]:
    """The statements that read ``records`` rows, the keyword search left out."""
    return [q for q in sent if "FROM records" in q and "to_tsquery" not in q]


def test_a_remember_reads_rows_once_and_never_past_its_own_call(
    servers: Servers, statements: list[str]
) -> None:
    url = servers.url()
    config = dataclasses.replace(servers.config(), fusion=FusionConfig(context_turns=1))
    with (
        Memory(url, embedder=HashingEmbedder(), config=config) as writer,
        Memory(url, embedder=HashingEmbedder(), config=config) as reader,
    ):
        turns = [
            "Ana asked where the harbour ferry leaves from",
            "The harbour ferry leaves from pier 4 at nine",
            "Ana said she will bring the tickets",
            "Marta keeps the spare keys of the boat house",
        ]
        ids = [
            writer.observe(t, user_id="ana", session_id="trip", metadata={"turn": n})
            for n, t in enumerate(turns)
        ]
        address = writer.upsert("ferry", "The ferry office is at 12 Harbour Road", user_id="ana")
        assert all(ids) and address
        writer.flush()  # the vectors are in Chroma: every worker's dense search finds them
        reader.remember("where is Marta", user_id="ana", k=3)  # reads who the scope knows once

        del statements[:]
        hits = reader.remember("harbour ferry pier", user_id="ana", k=3)
        # the texts for the hop and context, the content check and the records returned:
        # one read of rows at most (the keyword search brings its hits' rows itself, and the
        # dense hits' too when a kept set answered them in the process); one per stage before
        assert len(_row_reads(statements)) <= 1, _row_reads(statements)
        assert hits[0].id == ids[1] and len(hits) == 3
        assert hits[0].content == turns[1] and hits[0].metadata == {"turn": 1}
        assert [r.content for r in hits[0].context] == [turns[0], turns[2]]

        # another worker changes and removes rows between two remembers: the next one reads them
        assert writer.upsert("ferry", "The ferry office moved to 3 Quay Street", user_id="ana") == address
        assert writer.forget(ids[1]) is True
        writer.flush()
        again = {h.id: h for h in reader.remember("ferry office harbour pier", user_id="ana", k=5)}
        assert ids[1] not in again
        assert again[address].content == "The ferry office moved to 3 Quay Street"
        assert reader.get(address).content == "The ferry office moved to 3 Quay Street"  # type: ignore[union-attr]
