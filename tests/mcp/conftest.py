"""Shared pieces: the SDK-written demo server (tests/mcp/servers/demo_server.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillkit.mcp import McpServerConfig

SERVER = Path(__file__).resolve().parent / "servers" / "demo_server.py"


def demo_config(
    marks: Path, *, name: str = "demo", timeout: float = 30, args: tuple[str, ...] = ()
) -> McpServerConfig:
    """The demo server over stdio, writing its marks under ``marks``."""
    return McpServerConfig(
        name,
        "stdio",
        command=sys.executable,
        args=(str(SERVER), *args),
        env={"MCP_TEST_MARKS": str(marks)},
        timeout=timeout,
    )


def entry(marks: Path, *extra: str) -> dict[str, object]:
    """The demo server as an ``mcpServers`` entry of a settings file."""
    return {
        "command": sys.executable,
        "args": [str(SERVER), *extra],
        "env": {"MCP_TEST_MARKS": str(marks)},
    }


def started(marks: Path) -> list[Path]:
    """The demo server processes that started (one mark file each)."""
    return sorted(marks.glob("started-*"))


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    path = tmp_path / "marks"
    path.mkdir()
    return path
