"""Fixtures for the embedded local model: one real llama.cpp server per test session.

`local_server` starts the default model once (reproducible: no prompt cache, greedy
sampling, 1 thread, a 2,048-token window so context overflow is cheap to reach). Tests that
need it are skipped when the model's weights are not installed -- except under CI
(``CI`` set), where a missing model fails the run instead of hiding the tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.local import LocalModelError, LocalServer, find_default_gguf

CONTEXT_WINDOW = 2048


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"local model unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"local model unavailable: {reason}")


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
