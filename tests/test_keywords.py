"""The FTS5 keyword index: updated on every write and delete, scoped, repaired from Chroma."""

from __future__ import annotations

import sqlite3

from ucma_core import Memory
from ucma_core.embedders import HashingEmbedder
from ucma_core.storage.keywords import KeywordIndex, KeywordRow, keywords, match_query


def test_keyword_helpers_drop_stopwords_and_quote_terms() -> None:
    assert keywords("What did Ana say about the Zephyr-9 bike?") == ["ana", "zephyr", "9", "bike"]
    assert match_query('the "odd" one') == '"odd"'
    assert match_query("what is it") is None


def test_bm25_ranks_exact_rare_terms_first(tmp_path) -> None:
    index = KeywordIndex(tmp_path)
    rows = [
        KeywordRow("a", "we talked about bikes and weather", "u", None, None, "episodic", 1.0),
        KeywordRow("b", "my bike serial is ZX-4471", "u", None, None, "episodic", 2.0),
        KeywordRow("c", "ZX-4471 for another user", "v", None, None, "episodic", 3.0),
    ]
    index.add(rows)
    assert [h.id for h in index.search("serial ZX-4471", 5, user_id="u")] == ["b"]
    assert {h.id for h in index.search("ZX-4471", 5, user_id=False)} == {"b", "c"}
    assert [h.id for h in index.search("bikes", 5, user_id="u", time_range=(0.5, 1.5))] == ["a"]
    index.delete(["b"])
    assert index.search("ZX-4471", 5, user_id="u") == []
    assert index.ids() == {"a", "c"}
    index.close()


def test_index_follows_writes_forget_and_forget_user(mem: Memory) -> None:
    a = mem.observe("Ana's locker code is 7731", user_id="ana", importance=0.9)
    b = mem.observe("Bob's locker code is 1188", user_id="bob", importance=0.9)
    f = mem.assert_fact("Ana", "owns", "a kayak", user_id="ana")
    index = KeywordIndex(mem.path)  # a second reader of the folder's keyword index
    assert index.ids() == {a, b, f.id}
    assert [h.id for h in index.search("7731", 5, user_id="ana")] == [a]
    mem.forget(a)
    assert index.ids() == {b, f.id}
    mem.forget_user("bob")
    assert index.ids() == {f.id}
    index.close()


def test_missing_or_stale_index_is_rebuilt_from_chroma_on_open(folder, clock) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        a = m.observe("The boiler was serviced by Kowalski", importance=0.9)
        b = m.observe("Kowalski invoiced 240 euros", importance=0.9)
    (folder / "keywords.sqlite3").unlink()
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        assert m.verify().ok and m.verify().keyword_rows == 2
        assert {h.id for h in m.remember("Kowalski", k=2)} == {a, b}


def test_rows_serve_reads_by_id_and_fall_back_to_chroma(folder, clock) -> None:
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        a = m.observe(
            "Kayak rental at the lake, 30 euros", tags=["leisure"], metadata={"k": 1}, importance=0.9
        )
        index = KeywordIndex(m.path)
        text, stored = index.rows([a, "no-such-id"])[a]
        index.close()
        assert text == "Kayak rental at the lake, 30 euros" and stored["memory_type"] == "episodic"
        before = m.get(a)
    # a folder whose index rows keep no fields (written before they did) still reads in full
    con = sqlite3.connect(folder / "keywords.sqlite3")
    con.execute("UPDATE rowids SET stored = NULL")
    con.commit()
    con.close()
    with Memory(folder, embedder=HashingEmbedder(), clock=clock) as m:
        index = KeywordIndex(m.path)
        assert index.rows([a]) == {}
        index.close()
        again = m.get(a)
        assert again is not None and before is not None
        assert (again.content, again.tags, again.metadata) == (before.content, before.tags, before.metadata)
        assert [h.id for h in m.remember("kayak lake", tags=["leisure"])] == [a]


def test_an_index_without_the_stored_column_is_upgraded(tmp_path) -> None:
    con = sqlite3.connect(tmp_path / "keywords.sqlite3")
    con.execute(
        "CREATE VIRTUAL TABLE memories USING fts5(content, id UNINDEXED, user_id UNINDEXED, "
        "agent_id UNINDEXED, session_id UNINDEXED, memory_type UNINDEXED, ts UNINDEXED)"
    )
    con.execute("CREATE TABLE rowids (id TEXT PRIMARY KEY, fts INTEGER NOT NULL)")
    con.execute("INSERT INTO memories VALUES ('old text', 'old', 'u', '', '', 'episodic', 1.0)")
    con.execute("INSERT INTO rowids VALUES ('old', 1)")
    con.commit()
    con.close()
    index = KeywordIndex(tmp_path)
    index.add([KeywordRow("new", "new text", "u", None, None, "episodic", 2.0, {"memory_type": "episodic"})])
    assert index.rows(["old", "new"]) == {"new": ("new text", {"memory_type": "episodic"})}
    assert [h.id for h in index.search("text", 5, user_id="u")] and index.ids() == {"old", "new"}
    index.close()


def _row(memory_id: str, text: str, user: str | None) -> KeywordRow:
    return KeywordRow(memory_id, text, user, None, None, "episodic", 1.0, {"memory_type": "episodic"})


def test_a_users_search_never_sees_a_row_that_took_a_deleted_rows_id(tmp_path) -> None:
    index = KeywordIndex(tmp_path)
    index.add([_row("a", "kayak at the lake", "ana"), _row("b", "kayak rental", "bob")])
    assert [h.id for h in index.search("kayak", 5, user_id="bob")] == ["b"]
    assert [h.id for h in index.search("kayak", 5, user_id="ana")] == ["a"]
    index.delete(["b"])  # the newest row: SQLite gives its id to the next row added
    index.add([_row("c", "kayak for carl", "carl"), _row("d", "kayak without a user", None)])
    assert [h.id for h in index.search("kayak", 5, user_id="bob")] == []
    assert [h.id for h in index.search("kayak", 5, user_id="ana")] == ["a"]
    assert [h.id for h in index.search("kayak", 5, user_id="carl")] == ["c"]
    assert [h.id for h in index.search("kayak", 5, user_id=None)] == ["d"]
    index.add([_row("e", "a second kayak", "ana")])  # a user already searched: found at once
    assert {h.id for h in index.search("kayak", 5, user_id="ana")} == {"a", "e"}
    index.close()


def test_the_user_searched_last_sees_each_write_at_once(tmp_path) -> None:
    # the last user searched is held as a set of row ids: every write must reach it too
    index = KeywordIndex(tmp_path)
    index.add([_row("a", "kayak at the lake", "ana"), _row("b", "kayak rental", "bob")])
    assert [h.id for h in index.search("kayak", 5, user_id="ana")] == ["a"]
    index.add([_row("c", "a second kayak", "ana")])
    assert {h.id for h in index.search("kayak", 5, user_id="ana")} == {"a", "c"}
    index.delete(["c"])  # the newest row: SQLite gives its id to the next row added
    index.add([_row("d", "kayak for bob", "bob")])
    assert [h.id for h in index.search("kayak", 5, user_id="ana")] == ["a"]
    assert {h.id for h in index.search("kayak", 5, user_id="bob")} == {"b", "d"}
    index.close()


def test_a_users_search_sees_rows_another_connection_added_or_deleted(tmp_path) -> None:
    reader, writer = KeywordIndex(tmp_path), KeywordIndex(tmp_path)
    writer.add([_row("a", "boiler serviced", "ana")])
    assert [h.id for h in reader.search("boiler", 5, user_id="ana")] == ["a"]
    writer.add([_row("b", "boiler invoice", "ana")])
    assert {h.id for h in reader.search("boiler", 5, user_id="ana")} == {"a", "b"}
    writer.delete(["b"])
    writer.add([_row("c", "boiler for bob", "bob")])
    assert [h.id for h in reader.search("boiler", 5, user_id="ana")] == ["a"]
    reader.close()
    writer.close()


def test_a_user_searched_again_after_many_others_gets_only_their_rows(tmp_path) -> None:
    from ucma_core.storage.userrows import MAX_USERS

    index = KeywordIndex(tmp_path)
    users = [f"u{n}" for n in range(MAX_USERS + 2)]
    index.add([_row(f"m-{u}", f"the shared word from {u}", u) for u in users])
    for _ in range(2):  # the second round finds the first users' bitmaps dropped and reads them again
        for u in users:
            assert [h.id for h in index.search("shared", 5, user_id=u)] == [f"m-{u}"]
    index.close()
