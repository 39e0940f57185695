"""The keyword index: SQLite FTS5 with BM25 ranking, in the memory folder.

Every memory's text is indexed with its scope, type and time, so keyword search
filters the same way dense search does. Each row also keeps a copy of the
record's stored fields (the Chroma metadata), so reading memories by id — which
every :meth:`~ucma_core.Memory.remember` does for its results — is one SQLite
primary-key lookup instead of a Chroma read. The index is derived data: it is updated
on every write and deletion, and when it is missing or disagrees with Chroma
after a crash it is repaired from Chroma on open; a damaged file is replaced by a
new one rebuilt from Chroma (:meth:`KeywordIndex.open_or_rebuild`). Deleted rows are
purged with ``secure_delete``, a VACUUM and a WAL checkpoint, so
:meth:`KeywordIndex.scrub` leaves no text of a forgotten user in the file. The
write-ahead log is checkpointed once it passes 256 KiB, by a background thread (see
:mod:`~ucma_core.storage.walcheckpoint`: a write does not pay for it), and cut back to
256 KiB, so it stays small on a small disk.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ucma_core.errors import StorageError
from ucma_core.storage.diskspace import storage_error
from ucma_core.storage.textcache import TextCache
from ucma_core.storage.userrows import UserRows
from ucma_core.storage.walcheckpoint import WalCheckpointer

if TYPE_CHECKING:
    from ucma_core.records import MemoryRecord

__all__ = [
    "DamagedIndexError",
    "KeywordHit",
    "KeywordIndex",
    "KeywordRow",
    "TextFollower",
    "keyword_row",
    "match_query",
    "search_filters",
]

_FILE = "keywords.sqlite3"
_WAL_BYTES = 256 * 1024  # the log size at which the background thread checkpoints
#: Texts :meth:`KeywordIndex.texts` keeps (about 100 bytes of text each, and as much again
#: for the id and the entry). A retrieval reads the texts it misses in one query, so a hit
#: saves only a row of it (about 5 us): at 10,000 memories 4,096 texts answered 24% of the
#: lookups of 200 remembers (4,006 of 16,882) for 1.3 MiB; 2,048 take half of that.
TEXT_CACHE_SIZE = 2048
#: FTS5's own table of the columns of ``memories``: ``id`` is the row id, ``c0`` the content,
#: ``c2`` the user id (in the order ``memories`` declares them). Reading rows by id from it is a
#: plain table read; through ``memories`` each row is a virtual-table lookup (1.6x slower
#: for 500 texts, 5x for one user's rows).
_CONTENT = "memories_content"
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# Words too common in conversation to say anything about which memory is meant.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves tell know say said says ask asked remember mention mentioned did does like
    get got go going went thing things also really one much many well""".split()
)


class DamagedIndexError(StorageError):
    """The keyword index file cannot be read (it is rebuilt from Chroma)."""


@dataclass(frozen=True)
class KeywordRow:
    id: str
    content: str
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    memory_type: str
    timestamp: float
    #: The record's Chroma metadata (served by :meth:`KeywordIndex.rows`); ``None`` stores none.
    stored: dict[str, str | int | float | bool] | None = None


def keyword_row(record: MemoryRecord, stored: dict[str, str | int | float | bool]) -> KeywordRow:
    """The keyword index's row of ``record``, keeping ``stored`` (its Chroma metadata)."""
    return KeywordRow(
        id=record.id,
        content=record.content,
        user_id=record.user_id,
        agent_id=record.agent_id,
        session_id=record.session_id,
        memory_type=record.memory_type.value,
        timestamp=record.timestamp,
        stored=stored,
    )


class TextFollower(Protocol):
    """Something derived from the texts of a keyword index and kept in step with them (see
    :attr:`KeywordIndex.followers`)."""

    def wrote(self, rows: Sequence[KeywordRow]) -> None:
        """``rows`` are stored (their transaction committed)."""

    def forget(self, ids: Iterable[str]) -> None:
        """The rows of ``ids`` are being rewritten or deleted."""

    def clear(self) -> None:
        """Any row may have changed."""


class KeywordHit(NamedTuple):
    """One match of a keyword search (a tuple: a search builds hundreds of them)."""

    id: str
    score: float  # BM25, larger is better


def keywords(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` without stop words (order kept, no repeats)."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(text.lower()):
        if tok not in STOPWORDS and (len(tok) > 1 or tok.isdigit()):
            seen[tok] = None
    return list(seen)


def match_query(text: str) -> str | None:
    """An FTS5 MATCH expression: any of the query's keywords (each quoted), or ``None``."""
    terms = keywords(text)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:64])


def search_filters(
    param: str,
    any_of: Callable[[str, Sequence[str]], tuple[str, list[object]]],
    *,
    user_id: str | bool | None,
    agent_id: str | None,
    session_id: str | None,
    memory_types: Sequence[str],
    time_range: tuple[float, float] | None,
    ids: Sequence[str] | None,
) -> tuple[list[str], list[object]] | None:
    """The ``AND`` clauses and arguments of a keyword search's filters, for both keyword
    indexes (``param``: the driver's placeholder; ``any_of(column, values)``: its "column
    is one of" clause). ``user_id=False`` searches every user; ``None`` when ``ids`` is
    empty (nothing can match).

    >>> search_filters("?", lambda c, v: (f"{c} IN (?)", list(v)), user_id="ana", agent_id=None,
    ...                session_id=None, memory_types=("episodic",), time_range=None, ids=None)
    (['AND user_id = ?', 'AND memory_type IN (?)'], ['ana', 'episodic'])
    """
    clauses: list[str] = []
    args: list[object] = []
    if user_id is not False:
        clauses.append(f"AND user_id = {param}")
        args.append(user_id or "")
    for column, value in (("agent_id", agent_id), ("session_id", session_id)):
        if value is not None:
            clauses.append(f"AND {column} = {param}")
            args.append(value)
    if memory_types:
        clause, values = any_of("memory_type", memory_types)
        clauses.append(f"AND {clause}")
        args.extend(values)
    if time_range is not None:
        clauses.append(f"AND ts >= {param} AND ts <= {param}")
        args.extend(time_range)
    if ids is not None:
        if not ids:
            return None
        clause, values = any_of("id", ids)
        clauses.append(f"AND {clause}")
        args.extend(values)
    return clauses, args


class KeywordIndex:
    """BM25 keyword search over memory texts, scoped like the vector store."""

    def __init__(self, folder: Path, *, check: bool = False) -> None:
        self.path = folder / _FILE
        self.created = not self.path.exists()
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise storage_error(e, f"opening keyword index {self.path}") from e
        try:
            # WAL with synchronous=NORMAL: a commit survives a crash of the process without an
            # fsync per write (the index is derived data, repaired from Chroma on open anyway)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: self._checkpointer
            self._db.execute(f"PRAGMA journal_size_limit={_WAL_BYTES}")
            if check and not self.created:
                verdict = self._db.execute("PRAGMA quick_check(1)").fetchone()
                if verdict is None or verdict[0] != "ok":
                    raise sqlite3.DatabaseError(f"quick_check: {verdict[0] if verdict else 'no answer'}")
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS memories USING fts5("
                "content, id UNINDEXED, user_id UNINDEXED, agent_id UNINDEXED, session_id UNINDEXED, "
                "memory_type UNINDEXED, ts UNINDEXED, tokenize='porter unicode61 remove_diacritics 2')"
            )
            # memory id -> FTS rowid (a deletion is an index lookup, not a scan) and stored fields
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS rowids (id TEXT PRIMARY KEY, fts INTEGER NOT NULL, stored TEXT)"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(rowids)")}
            if "stored" not in columns:  # a folder written before rows kept their fields
                self._db.execute("ALTER TABLE rowids ADD COLUMN stored TEXT")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            if check:
                self._db.execute("SELECT count(*) FROM rowids").fetchone()
        except sqlite3.DatabaseError as e:
            self._db.close()
            if "disk" in str(e).lower() and "full" in str(e).lower():
                raise storage_error(e, f"opening keyword index {self.path}") from e
            raise DamagedIndexError(f"keyword index {self.path} is damaged: {e}") from e
        except sqlite3.Error as e:
            self._db.close()
            raise storage_error(e, f"opening keyword index {self.path}") from e
        self._checkpointer = WalCheckpointer(self.path, max_bytes=_WAL_BYTES)
        #: Texts read recently (:meth:`texts`), forgotten by every write that touches them.
        self.text_cache = TextCache(TEXT_CACHE_SIZE)
        #: Told of every row written (once committed) and every row rewritten or deleted (before),
        #: as :attr:`text_cache` forgets: what they derive from texts never outlives a text.
        self.followers: list[TextFollower] = []
        #: Each searched user's rows: a search tests them instead of reading every match's user.
        self._user_rows = UserRows()
        self._db.create_function("ucma_owned", 1, self._user_rows.chosen)

    @classmethod
    def open_or_rebuild(cls, folder: Path) -> tuple[KeywordIndex, str | None]:
        """Open the index; a damaged one is deleted and started afresh (the caller refills
        it from Chroma). Returns the index and a note saying what was done, if anything."""
        try:
            return cls(folder, check=True), None
        except DamagedIndexError as e:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    (folder / (_FILE + suffix)).unlink()
            index = cls(folder)
            return index, f"{e}; it was deleted and is rebuilt from Chroma (derived data, nothing lost)"

    def get_meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as e:
            raise storage_error(e, f"reading keyword index {self.path}") from e
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        try:
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        except sqlite3.Error as e:
            raise storage_error(e, f"writing keyword index {self.path}") from e

    def count(self) -> int:
        try:
            return int(self._db.execute("SELECT count(*) FROM rowids").fetchone()[0])
        except sqlite3.Error as e:
            raise storage_error(e, f"reading keyword index {self.path}") from e

    def add(self, rows: Iterable[KeywordRow]) -> None:
        written = list(rows)
        data = [
            (
                r.content,
                r.id,
                r.user_id or "",
                r.agent_id or "",
                r.session_id or "",
                r.memory_type,
                r.timestamp,
                None if r.stored is None else json.dumps(r.stored, ensure_ascii=False, allow_nan=False),
            )
            for r in written
        ]
        if not data:
            return
        self._forget([row[1] for row in data])
        try:
            self._db.execute("BEGIN")
            for row in data:
                cur = self._db.execute(
                    "INSERT INTO memories(content, id, user_id, agent_id, session_id, memory_type, ts) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    row[:7],
                )
                with self._user_rows.lock:
                    self._user_rows.added(str(row[2]), int(cur.lastrowid or 0))
                self._db.execute(
                    "INSERT OR REPLACE INTO rowids(id, fts, stored) VALUES (?, ?, ?)",
                    (row[1], cur.lastrowid, row[7]),
                )
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise storage_error(e, f"writing the keyword index {self.path}") from e
        for follower in self.followers:
            follower.wrote(written)
        self._checkpointer.wrote()

    def delete(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        self._forget(ids)
        try:
            self._db.execute("BEGIN")
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found = self._db.execute(f"SELECT fts FROM rowids WHERE id IN ({marks})", chunk)
                gone = [r for (r,) in found]
                self._db.execute(
                    f"DELETE FROM memories WHERE rowid IN (SELECT fts FROM rowids WHERE id IN ({marks}))",
                    chunk,
                )
                self._db.execute(f"DELETE FROM rowids WHERE id IN ({marks})", chunk)
                with self._user_rows.lock:
                    self._user_rows.deleted(gone)
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise storage_error(e, f"deleting from the keyword index {self.path}") from e
        self._checkpointer.wrote()

    def scrub(self) -> None:
        """Merge the FTS segments and vacuum so deleted text leaves the file."""
        self._clear()
        with self._user_rows.lock:
            self._user_rows.clear()
        try:
            self._db.execute("INSERT INTO memories(memories) VALUES('optimize')")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as e:
            raise storage_error(e, f"scrubbing {self.path}") from e

    def ids(self) -> set[str]:
        try:
            return {row[0] for row in self._db.execute("SELECT id FROM rowids")}
        except sqlite3.Error as e:
            raise StorageError(f"cannot read keyword index {self.path}: {e}") from e

    def rows(self, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, str | int | float | bool]]]:
        """``{id: (text, stored fields)}`` for those of ``ids`` whose row keeps its fields."""
        out: dict[str, tuple[str, dict[str, str | int | float | bool]]] = {}
        try:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for memory_id, content, stored in self._db.execute(
                    f"SELECT r.id, m.c0, r.stored FROM rowids r JOIN {_CONTENT} m ON m.id = r.fts "
                    f"WHERE r.id IN ({marks}) AND r.stored IS NOT NULL",
                    chunk,
                ):
                    out[memory_id] = (content, json.loads(stored))
        except (sqlite3.Error, json.JSONDecodeError) as e:
            raise StorageError(f"cannot read rows from keyword index {self.path}: {e}") from e
        return out

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: text}`` for those of ``ids`` whose row keeps its fields (as :meth:`rows`,
        without decoding the fields); those read before come from :attr:`text_cache`."""
        out = self.text_cache.get(ids)
        missing = [i for i in ids if i not in out] if out else list(ids)
        if not missing:
            return out
        token = self.text_cache.token()
        read: dict[str, str] = {}
        try:
            for start in range(0, len(missing), 500):
                chunk = missing[start : start + 500]
                marks = ",".join("?" * len(chunk))
                read.update(
                    self._db.execute(
                        f"SELECT r.id, m.c0 FROM rowids r JOIN {_CONTENT} m ON m.id = r.fts "
                        f"WHERE r.id IN ({marks}) AND r.stored IS NOT NULL",
                        chunk,
                    )
                )
        except sqlite3.Error as e:
            raise StorageError(f"cannot read texts from keyword index {self.path}: {e}") from e
        self.text_cache.put(read, token)
        out.update(read)
        return out

    def search(
        self,
        query: str,
        n: int,
        *,
        user_id: str | bool | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        memory_types: Sequence[str] = (),
        time_range: tuple[float, float] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[KeywordHit]:
        """Best ``n`` BM25 matches of ``query``'s keywords. ``user_id=False`` searches every user."""
        expr = match_query(query)
        if expr is None or n <= 0 or user_id is True:  # ``True`` names no user
            return []
        found = search_filters(
            "?",
            lambda column, values: (f"{column} IN ({','.join('?' * len(values))})", list(values)),
            user_id=False,  # the user's rows: :attr:`_user_rows` (a matched row's user is not read)
            agent_id=agent_id,
            session_id=session_id,
            memory_types=memory_types,
            time_range=time_range,
            ids=ids,
        )
        if found is None:
            return []
        sql = ["SELECT id, bm25(memories) FROM memories WHERE memories MATCH ?", *found[0]]
        args: list[object] = [expr, *found[1]]
        if user_id is not False:
            sql.append("AND ucma_owned(rowid)")
            owner = user_id or ""
        sql.append("ORDER BY bm25(memories) LIMIT ?")
        args.append(n)
        try:
            with self._user_rows.lock:
                if user_id is not False:
                    self._know(owner)
                    self._user_rows.choose(owner)
                rows = self._db.execute(" ".join(sql), args).fetchall()
        except sqlite3.Error as e:
            raise StorageError(f"keyword search failed: {e}") from e
        return [KeywordHit(memory_id, -float(score)) for memory_id, score in rows]

    def _know(self, user: str) -> None:
        """Hold ``user``'s current rows in :attr:`_user_rows` (the caller holds its lock)."""
        version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        self._user_rows.current(version)
        if not self._user_rows.known(user):
            found = self._db.execute(f"SELECT id FROM {_CONTENT} WHERE c2 = ?", (user,))
            self._user_rows.load(user, (r for (r,) in found), version=version)

    def owned(self, user: str) -> list[str]:
        """The memory ids of ``user``'s rows (``""``: the memories stored without a user), in
        row id order (the order they were added, but for a row id a deletion freed). One scan
        of the index's user column, which also holds the user's rows for their keyword
        searches (a search after it reads no more).

        The index holds a row for every memory Chroma holds and every one waiting for its
        Chroma write (:meth:`add` is part of each store of a memory), so this lists what a
        Chroma filter on ``user_id`` admits, without asking Chroma (see
        :attr:`~ucma_core.storage.vectors.VectorStore.owned_by`)."""
        try:
            with self._user_rows.lock:
                version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
                rows = self._db.execute(
                    f"SELECT id, c1 FROM {_CONTENT} WHERE c2 = ? ORDER BY id", (user,)
                ).fetchall()
                self._user_rows.current(version)
                if not self._user_rows.known(user):
                    self._user_rows.load(user, (rowid for rowid, _ in rows), version=version)
        except sqlite3.Error as e:
            raise StorageError(f"cannot read keyword index {self.path}: {e}") from e
        return [memory_id for _, memory_id in rows]

    def rewrite_stored(
        self,
        rewrite: Callable[[str, str, dict[str, Any]], dict[str, str | int | float | bool]],
        meta: dict[str, str],
    ) -> int:
        """Replace every row's stored fields with ``rewrite(id, text, fields)`` and set the
        ``meta`` values, all in one transaction; returns how many rows were rewritten."""
        self._clear()
        try:
            found = self._db.execute(
                "SELECT r.id, m.content, r.stored FROM rowids r JOIN memories m ON m.rowid = r.fts "
                "WHERE r.stored IS NOT NULL"
            ).fetchall()
            changed = [
                (json.dumps(rewrite(i, content, json.loads(stored)), ensure_ascii=False, allow_nan=False), i)
                for i, content, stored in found
            ]
            self._db.execute("BEGIN")
            self._db.executemany("UPDATE rowids SET stored = ? WHERE id = ?", changed)
            self._db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", meta.items())
            self._db.execute("COMMIT")
        except (sqlite3.Error, json.JSONDecodeError) as e:
            self._rollback()
            raise storage_error(e, f"rewriting the keyword index {self.path}") from e
        return len(changed)

    def _forget(self, ids: Sequence[str]) -> None:
        """Drop what :attr:`text_cache` and the :attr:`followers` hold of ``ids``."""
        self.text_cache.forget(ids)
        for follower in self.followers:
            follower.forget(ids)

    def _clear(self) -> None:
        """Drop everything :attr:`text_cache` and the :attr:`followers` hold."""
        self.text_cache.clear()
        for follower in self.followers:
            follower.clear()

    def _rollback(self) -> None:
        self._clear()
        with self._user_rows.lock:
            self._user_rows.clear()
        with contextlib.suppress(sqlite3.Error):  # nothing was open
            self._db.execute("ROLLBACK")

    def close(self) -> None:
        self._checkpointer.close()
        self._db.close()
