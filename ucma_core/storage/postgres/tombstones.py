"""Closing the in-flight race between a dead worker's flush and another worker's delete.

A worker's background flush sends the pending vectors of every worker to Chroma and
then deletes their ``pending`` rows. A worker killed while that request is in flight
leaves the rows (so nothing is lost), but the Chroma server may still apply the
request later. If another worker deletes those very records meanwhile, the late
request would put their vectors back without records.

So a delete of records whose vectors were still pending also writes a *tombstone* per
id (:func:`bury`), valid until the deleting worker's Chroma timeout
(``limits.chroma_timeout_seconds``, which bounds how long a request can be in
flight) has passed. Every flush, of any worker, then :func:`sweep`\\ s the tombstones
whose time has come: the ids that are still not records (nor pending again) are
deleted from Chroma once more, in the transaction that removes their tombstones, so
a failed Chroma call leaves them for the next flush. The deleting worker wakes its own
flush when the time has come; if it dies, the next flush or open of any worker does it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ucma_core.storage.postgres.journal import db_errors

__all__ = ["bury", "sweep"]


def bury(conn: Any, ids: Sequence[str], seconds: float) -> list[str]:
    """Write a tombstone for each of ``ids`` whose vector is still pending (valid for
    ``seconds``); returns those ids."""
    with db_errors("writing tombstones"):
        rows = conn.execute(
            "INSERT INTO tombstones (id, until) SELECT id, clock_timestamp() + make_interval(secs => %s) "
            "FROM pending WHERE id = ANY(%s) ON CONFLICT (id) DO UPDATE SET until = excluded.until "
            "RETURNING id",
            (float(seconds), list(ids)),
        ).fetchall()
    return [r[0] for r in rows]


def sweep(conn: Any, delete: Callable[[list[str]], None]) -> int:
    """Delete from Chroma (``delete``) the ids of the tombstones whose time has come and
    that are neither records nor pending; returns how many."""
    with db_errors("sweeping tombstones"):
        due = conn.execute("SELECT EXISTS (SELECT 1 FROM tombstones WHERE until < clock_timestamp())")
        if not due.fetchone()[0]:  # the usual case: one cheap statement, no transaction
            return 0
    with db_errors("sweeping tombstones"), conn.transaction():
        rows = conn.execute(
            "DELETE FROM tombstones t WHERE until < clock_timestamp() RETURNING id, "
            "EXISTS (SELECT 1 FROM records r WHERE r.id = t.id) OR "
            "EXISTS (SELECT 1 FROM pending p WHERE p.id = t.id)"
        ).fetchall()
        doomed = sorted(r[0] for r in rows if not r[1])
        if doomed:
            delete(doomed)  # raising rolls the tombstones back: the next flush tries again
    return len(doomed)
