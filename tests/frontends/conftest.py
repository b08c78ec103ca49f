"""Fixtures of the frontend tests."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extensions.conftest import isolated_home  # noqa: F401 (a shared fixture)
from tests.frontends.tmux_terminal import Terminal


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    # A short socket path: unix socket paths are limited to ~100 bytes.
    socket_dir = Path(tempfile.mkdtemp(prefix="skt-"))
    home = tmp_path / "home"
    home.mkdir()
    term = Terminal(socket_dir / "sock", tmp_path / "exit-code", home)
    try:
        yield term
    finally:
        subprocess.run(
            ["tmux", "-S", str(term.socket), "kill-server"], capture_output=True, timeout=10
        )
        shutil.rmtree(socket_dir, ignore_errors=True)
