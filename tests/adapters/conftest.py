"""Fixtures for the provider adapter tests: a scripted wire server per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.adapters.wire_server import WireServer


@pytest.fixture
async def wire() -> AsyncIterator[WireServer]:
    async with WireServer() as server:
        yield server
