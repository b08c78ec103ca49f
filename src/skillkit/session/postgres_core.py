"""What the PostgreSQL session stores do in the database, written once and without I/O.

`PostgresSessionStore` (synchronous) and `AsyncPostgresSessionStore` (on an event loop)
do the same work: the same SQL, in the same transactions, under the same locks, with
the same errors. Each piece of that work is an *operation* here: a generator that
yields the statements to run — `Query`, `Copy`, and `Block` for statements that run
together in one transaction (or one pipeline) — receives each statement's rows, and
returns its result. A statement's error is thrown into the operation where it yielded
the statement, so the operation decides what becomes of it (a taken id becomes
`SessionExistsError`, a row that cannot be written is only logged) exactly as the
code around a ``db.execute`` would. `run` drives an operation on a psycopg
``Connection``, `run_async` on an ``AsyncConnection``: the two small executors are the
only places that know whether they wait or ``await``.

```python
def ids_like(pattern: str) -> Operation[list[str]]:
    rows = yield Query("SELECT id FROM t WHERE id LIKE %s", (pattern,), rows="all")
    return [str(row[0]) for row in rows]

run(connection, ids_like("ab%"))                    # synchronous
await run_async(async_connection, ids_like("ab%"))  # on an event loop
```
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias, TypeVar, overload

if TYPE_CHECKING:
    import psycopg

__all__ = ["Block", "Copy", "Operation", "Query", "Step", "run", "run_async"]

R = TypeVar("R")


# ----- statements (tuples: one is made for every statement, an append's too)


class Query(NamedTuple):
    """One statement and what the operation receives back: nothing (``"none"``), the
    first row or None (``"one"``), or the list of rows (``"all"``). ``prepare`` and
    ``binary`` as for psycopg's ``execute`` (``binary``: a binary cursor)."""

    sql: str
    params: Sequence[object] | None = None
    rows: Literal["none", "one", "all"] = "none"
    prepare: bool | None = None
    binary: bool = False


class Copy(NamedTuple):
    """``COPY … FROM STDIN`` of ``rows``; the operation receives None."""

    sql: str
    rows: Sequence[Sequence[object]]


class Block(NamedTuple):
    """The statements of ``operation`` run in one transaction (rolled back when the
    operation raises) or in one pipeline (one round trip, each statement its own
    transaction on an autocommit connection); the operation receives its result."""

    operation: Operation[Any]
    kind: Literal["transaction", "pipeline"] = "transaction"


Step: TypeAlias = Query | Copy | Block
Operation: TypeAlias = Generator[Step, Any, R]
"""An operation that returns an ``R``: it yields `Step` values and receives each one's
result (a row, a list of rows, or None), or the statement's error thrown in. An
operation of one statement that only hands back what it receives may be given as its
`Query` alone (an append: no generator to make and drive for it)."""


# ----- the two executors


@overload
def run(db: psycopg.Connection[Any], operation: Query) -> Any: ...
@overload
def run(db: psycopg.Connection[Any], operation: Operation[R]) -> R: ...
def run(db: psycopg.Connection[Any], operation: Operation[R] | Query) -> Any:
    """Drive ``operation`` on ``db`` (a synchronous connection); its result."""
    if isinstance(operation, Query):
        return _execute(db, operation)
    reply: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = operation.send(reply) if error is None else operation.throw(error)
            except StopIteration as done:
                return done.value
            reply = error = None
            try:
                reply = _execute(db, step)
            except Exception as exc:  # thrown into the operation, which may catch it
                error = exc
    finally:
        operation.close()


def _execute(db: psycopg.Connection[Any], step: Step) -> Any:
    if isinstance(step, Query):
        if step.binary:
            with db.cursor(binary=True) as cursor:
                cursor.execute(step.sql, step.params, prepare=step.prepare)
                return _rows(cursor, step.rows)
        return _rows(db.execute(step.sql, step.params, prepare=step.prepare), step.rows)
    if isinstance(step, Copy):
        with db.cursor() as cursor, cursor.copy(step.sql) as copy:
            for row in step.rows:
                copy.write_row(row)
        return None
    with db.transaction() if step.kind == "transaction" else db.pipeline():
        return run(db, step.operation)


def _rows(cursor: psycopg.Cursor[Any], rows: str) -> Any:
    if rows == "one":
        return cursor.fetchone()
    return cursor.fetchall() if rows == "all" else None


@overload
async def run_async(db: psycopg.AsyncConnection[Any], operation: Query) -> Any: ...
@overload
async def run_async(db: psycopg.AsyncConnection[Any], operation: Operation[R]) -> R: ...
async def run_async(db: psycopg.AsyncConnection[Any], operation: Operation[R] | Query) -> Any:
    """Drive ``operation`` on ``db`` (an async connection); its result."""
    if isinstance(operation, Query):
        return await _execute_async(db, operation)
    reply: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = operation.send(reply) if error is None else operation.throw(error)
            except StopIteration as done:
                return done.value
            reply = error = None
            try:
                reply = await _execute_async(db, step)
            except Exception as exc:  # thrown into the operation, which may catch it
                error = exc
    finally:
        operation.close()


async def _execute_async(db: psycopg.AsyncConnection[Any], step: Step) -> Any:
    if isinstance(step, Query):
        if step.binary:
            async with db.cursor(binary=True) as cursor:
                await cursor.execute(step.sql, step.params, prepare=step.prepare)
                return await _rows_async(cursor, step.rows)
        cursor = await db.execute(step.sql, step.params, prepare=step.prepare)
        return await _rows_async(cursor, step.rows)
    if isinstance(step, Copy):
        async with db.cursor() as cursor, cursor.copy(step.sql) as copy:
            for row in step.rows:
                await copy.write_row(row)
        return None
    if step.kind == "transaction":
        async with db.transaction():
            return await run_async(db, step.operation)
    async with db.pipeline():
        return await run_async(db, step.operation)


async def _rows_async(cursor: psycopg.AsyncCursor[Any], rows: str) -> Any:
    if rows == "one":
        return await cursor.fetchone()
    return await cursor.fetchall() if rows == "all" else None
