"""The PostgreSQL stores' one core, driven by its two executors against a real server:
an operation gets the same rows and the same errors from the sync and the async
executor, a block is one transaction (rolled back when its operation raises), a
pipeline block keeps every statement, and an operation cut short is closed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from skillkit.models import UserMessage
from skillkit.session import AsyncPostgresSessionStore, PostgresSessionStore, SessionLockedError
from skillkit.session.postgres_core import Block, Copy, Operation, Query, run, run_async
from skillkit.session.postgres_ops import delete_session, list_sessions, load_session, resolve_id

pytestmark = pytest.mark.timeout(120)

Runnable = Operation[Any] | Query


def run_sync(url: str, operation: Runnable) -> Any:
    with psycopg.connect(url, autocommit=True) as db:
        return run(db, operation)


def run_on_a_loop(url: str, operation: Runnable) -> Any:
    async def main() -> Any:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
            return await run_async(db, operation)

    return asyncio.run(main())


EXECUTORS: dict[str, Callable[[str, Runnable], Any]] = {
    "sync": run_sync,
    "async": run_on_a_loop,
}


@pytest.fixture(params=sorted(EXECUTORS))
def execute(request: pytest.FixtureRequest) -> Callable[[str, Runnable], Any]:
    return EXECUTORS[str(request.param)]


def table(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE t (n integer PRIMARY KEY, word text)")


def words(url: str) -> list[tuple[int, str]]:
    with psycopg.connect(url, autocommit=True) as db:
        return [(int(n), str(w)) for n, w in db.execute("SELECT n, word FROM t ORDER BY n")]


def test_an_operation_receives_rows_and_returns_its_result(
    postgres_url: str, execute: Callable[[str, Runnable], Any]
) -> None:
    def operation() -> Operation[tuple[Any, ...]]:
        yield Query("CREATE TABLE t (n integer, word text)")
        yield Copy("COPY t (n, word) FROM STDIN", [(1, "one"), (2, "two")])
        nothing = yield Query("INSERT INTO t VALUES (%s, %s)", (3, "three"))
        first = yield Query("SELECT word FROM t WHERE n = %s", (2,), rows="one")
        missing = yield Query("SELECT word FROM t WHERE n = %s", (9,), rows="one")
        every = yield Query("SELECT n FROM t ORDER BY n", rows="all", binary=True)
        return nothing, first, missing, [n for (n,) in every]

    assert execute(postgres_url, operation()) == (None, ("two",), None, [1, 2, 3])


def test_a_statement_alone_is_an_operation(
    postgres_url: str, execute: Callable[[str, Runnable], Any]
) -> None:
    assert execute(postgres_url, Query("SELECT %s::int + 1", (41,), rows="one")) == (42,)
    assert execute(postgres_url, Query("SELECT 1")) is None
    with pytest.raises(psycopg.errors.UndefinedTable):
        execute(postgres_url, Query("SELECT * FROM no_such_table"))


def test_a_statement_error_is_thrown_into_the_operation_where_it_yielded(
    postgres_url: str, execute: Callable[[str, Runnable], Any]
) -> None:
    def operation() -> Operation[str]:
        try:
            yield Query("SELECT * FROM no_such_table")
        except psycopg.errors.UndefinedTable:
            row = yield Query("SELECT 'went on'", rows="one")  # the connection still works
            return str(row[0])
        return "not thrown"

    assert execute(postgres_url, operation()) == "went on"

    def uncaught() -> Operation[None]:
        yield Query("SELECT * FROM no_such_table")

    with pytest.raises(psycopg.errors.UndefinedTable):
        execute(postgres_url, uncaught())


def test_a_block_is_one_transaction_rolled_back_when_its_operation_raises(
    postgres_url: str, execute: Callable[[str, Runnable], Any]
) -> None:
    table(postgres_url)

    def half(n: int) -> Operation[None]:
        yield Query("INSERT INTO t VALUES (%s, 'kept?')", (n,))
        yield Query("INSERT INTO t VALUES (%s, 'taken')", (n,))  # the same key: refused

    def operation() -> Operation[str]:
        yield Query("INSERT INTO t VALUES (1, 'before')")  # autocommit: kept
        try:
            yield Block(half(2))
        except psycopg.errors.UniqueViolation:
            return "rolled back"
        return "not raised"

    assert execute(postgres_url, operation()) == "rolled back"
    assert words(postgres_url) == [(1, "before")]


def test_a_pipeline_block_keeps_each_statement(
    postgres_url: str, execute: Callable[[str, Runnable], Any]
) -> None:
    table(postgres_url)

    def each() -> Operation[None]:
        for n in range(5):
            yield Query("INSERT INTO t VALUES (%s, %s)", (n, f"w{n}"), prepare=True)

    def operation() -> Operation[None]:
        yield Block(each(), "pipeline")

    execute(postgres_url, operation())
    assert words(postgres_url) == [(n, f"w{n}") for n in range(5)]


async def test_an_operation_cut_short_is_closed(postgres_url: str) -> None:
    closed = asyncio.Event()

    def operation() -> Operation[None]:
        try:
            yield Query("SELECT pg_sleep(30)")
        finally:
            closed.set()

    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as db:
        task = asyncio.create_task(run_async(db, operation()))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert closed.is_set()


def test_the_stores_operations_give_the_same_results_sync_and_async(
    postgres_url: str, tmp_path: Path
) -> None:
    with PostgresSessionStore(postgres_url, home=tmp_path) as store:
        kept = store.create(tmp_path)
        kept.append_message(UserMessage(content="first question"))
        kept.close()
        open_one = store.create(tmp_path)  # a writer whose row is behind its entries
        open_one.append_message(UserMessage(content="still writing"))
        names = (store.url,)
        for operation in (
            lambda: list_sessions(tmp_path, store.url),
            lambda: load_session(kept.id, store.url),
            lambda: resolve_id(kept.id[:5], names),
        ):
            assert run_sync(postgres_url, operation()) == run_on_a_loop(postgres_url, operation())
        for executor in EXECUTORS.values():  # the writer's lock holds for both
            with pytest.raises(SessionLockedError, match=r"\(pid \d+\)"):
                executor(postgres_url, delete_session(open_one.id))
        open_one.close()


async def test_the_async_store_reads_what_the_sync_store_wrote_through_the_same_core(
    postgres_url: str, tmp_path: Path
) -> None:
    with PostgresSessionStore(postgres_url, home=tmp_path) as store:
        session = store.create(tmp_path)
        session.set_name("shared")
        session.append_message(UserMessage(content="from the sync store"))
        session.close()
        listed = store.list(tmp_path)
    async with AsyncPostgresSessionStore(postgres_url, home=tmp_path) as async_store:
        assert await async_store.list(tmp_path) == listed
        again = await async_store.open(session.id, write=False)
        assert [e.id for e in again.entries] == [e.id for e in session.entries]
