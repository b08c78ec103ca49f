"""The agent the ``skillkit`` command builds: MCP servers from the settings files as a
contributor, the project's only when it is trusted, and ``/mcp`` registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillkit.frontends.setup import AgentOptions, build_agent
from skillkit.mcp import McpServers
from tests.mcp.conftest import entry, started

pytestmark = pytest.mark.timeout(30)


def options(tmp_path: Path, project: Path, **overrides: object) -> AgentOptions:
    script = tmp_path / "model.yaml"
    script.write_text("replies:\n  - text: Done.\n")
    values: dict[str, object] = {
        "workspace": project,
        "home": tmp_path / "home",
        "model": f"scripted:{script}",
    }
    values.update(overrides)
    return AgentOptions(**values)  # type: ignore[arg-type]


@pytest.fixture
def project(tmp_path: Path, marks: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": entry(marks)}}))
    return path


def mcp_of(agent: object) -> McpServers | None:
    runner = agent.runner  # type: ignore[attr-defined]
    return next((c for c in runner.contributors if isinstance(c, McpServers)), None)


async def test_an_untrusted_projects_servers_are_left_out_with_a_notice(
    tmp_path: Path, project: Path, marks: Path
) -> None:
    agent = build_agent(options(tmp_path, project, trust_project=False))
    try:
        assert mcp_of(agent) is None
        lines = [n for n in agent.notices if "MCP servers from the project (demo)" in n]
        assert len(lines) == 1
        assert "mcp" in agent.manager.registries.commands
        await agent.runner.chat("hi")
        assert started(marks) == []
    finally:
        await agent.aclose()


async def test_a_trusted_projects_servers_are_contributed_and_not_started_yet(
    tmp_path: Path, project: Path, marks: Path
) -> None:
    agent = build_agent(options(tmp_path, project, trust_project=True))
    try:
        servers = mcp_of(agent)
        assert servers is not None and list(servers.connections) == ["demo"]
        assert servers.connections["demo"].status == "idle"
        assert not any("MCP servers" in n for n in agent.notices)
        await agent.runner.chat("hi")
        assert servers.connections["demo"].status == "connected"
        assert "mcp__demo__echo" in {t.name for t in agent.runner.offered_tools()}
    finally:
        await agent.aclose()
    assert servers.connections["demo"].status == "closed"


async def test_a_malformed_entry_is_a_warning(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "home" / ".skillkit"
    home.mkdir(parents=True)
    (home / "settings.json").write_text(json.dumps({"mcpServers": {"x": {"url": 3}}}))
    agent = build_agent(options(tmp_path, project, trust_project=False))
    try:
        (line,) = [w for w in agent.warnings if w.startswith("MCP settings:")]
        assert "mcpServers.x" in line and "'url' must be a non-empty string" in line
    finally:
        await agent.aclose()
