"""Fixtures of the session tests: a PostgreSQL server for the whole run (started on
first use), and one fresh database per test that asks for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.session.postgres_server import PostgresServer, running_server, why_not


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    reason = why_not()
    if reason is not None:
        pytest.skip(f"PostgreSQL cannot run here: {reason}")
    with running_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the test server."""
    return postgres_server.new_database()
