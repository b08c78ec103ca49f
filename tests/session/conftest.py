"""Fixtures of the session tests: a PostgreSQL server for the whole run (started on
first use), one fresh database per test that asks for it, and ``store``: a new, empty
store of each kind (JSONL files, SQLite, PostgreSQL), so a test that takes it runs on
every store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.session.store_protocol import SessionStoreProtocol, open_store
from tests.frontends.conftest import terminal  # noqa: F401 (a shared fixture: tmux)
from tests.session.postgres_server import PostgresServer, running_server, why_not

KINDS = ["jsonl", "sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = why_not()
    if reason is not None:
        pytest.skip(f"PostgreSQL cannot run here: {reason}")
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new, empty database on the test server (dropped afterwards)."""
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url)


def store_url(kind: str, where: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty store of ``kind`` (PostgreSQL: a new database on the
    test server; skipped with the reason where no server can run)."""
    if kind == "jsonl":
        return f"file://{where}"
    if kind == "sqlite":
        return f"sqlite://{where}/sessions.db"
    return str(request.getfixturevalue("postgres_url"))


def close_store(store: object) -> None:
    close = getattr(store, "close", None)
    if callable(close):
        close()


@pytest.fixture
def stores() -> Iterator[list[SessionStoreProtocol]]:
    """Stores a test opened, closed when it ends."""
    opened: list[SessionStoreProtocol] = []
    yield opened
    for store in opened:
        close_store(store)


@pytest.fixture(params=KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def url(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty store of each kind."""
    return store_url(store_kind, tmp_path, request)


@pytest.fixture
def store(url: str, stores: list[SessionStoreProtocol]) -> SessionStoreProtocol:
    """A new, empty store of each kind, open for the test."""
    opened = open_store(url)
    stores.append(opened)
    return opened
