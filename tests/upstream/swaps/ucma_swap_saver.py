"""Swap LangGraph's SQLite savers (``SqliteSaver``, ``AsyncSqliteSaver``) for UCMACheckpointer.

Each saver the tests open is a :class:`~ucma_langchain.langgraph.UCMACheckpointer` on a
new temporary memory, for an app without users (``user_id=None``: the tests' configs
name no user). The connection string is not used: the threads live in the memory folder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import ucma_swap_common as common

from ucma_langchain.langgraph import UCMACheckpointer


class SqliteSaver(UCMACheckpointer):
    """UCMACheckpointer built as the tests build ``SqliteSaver``."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, **_: Any) -> Iterator[UCMACheckpointer]:
        common.reached()
        with UCMACheckpointer(common.memory(), user_id=None) as saver:
            yield saver


class AsyncSqliteSaver(UCMACheckpointer):
    """UCMACheckpointer built as the tests build ``AsyncSqliteSaver``."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **_: Any) -> AsyncIterator[UCMACheckpointer]:
        common.reached()
        async with UCMACheckpointer(common.memory(), user_id=None) as saver:
            yield saver


common.plan(
    swaps={
        "langgraph.checkpoint.sqlite:SqliteSaver": SqliteSaver,
        "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver": AsyncSqliteSaver,
    },
    xfail={
        "test_sqlite.py::TestSqliteSaver::test_informative_async_errors": "one class for sync and async "
        "code: UCMACheckpointer's async methods work (SqliteSaver refuses them, naming AsyncSqliteSaver)",
    },
    not_applicable={
        "test_conformance_delta.py::test_delta_channel_conformance": "needs a langgraph-checkpoint-"
        "conformance with the delta_channel_history capability (the installed one has none; the test "
        "fails the same way with AsyncSqliteSaver)",
        "test_delta_parent_walk.py::test_walk_step_looks_up_the_parent_by_primary_key": "reads "
        "SqliteSaver's SQL query plan through saver.conn",
        "test_writes_task_path_migration.py::*": "SqliteSaver's table migrations, through saver.conn "
        "and setup() (UCMACheckpointer sets its tables up when it opens)",
    },
)
