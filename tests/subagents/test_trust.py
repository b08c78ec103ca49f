"""A project's own agent definitions load only once the project is trusted.

An agent file chooses a model, tools and a prompt: a cloned repository must not bring
its own before the user trusts it (the decision of `skillkit.trust` that also covers its
plugins and settings). Until then one diagnostic line says they were left out; the
user's own agents load either way.
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from skillkit.subagents import AgentRegistry
from skillkit.subagents import cli as agents_cli
from skillkit.subagents.registry import UNTRUSTED_FIELD
from skillkit.trust import TRUST_ENV, TrustStore


def agent(folder: Path, name: str, model: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    line = f"model: {model}\n" if model else ""
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: The {name} agent.\n{line}---\nHelp.\n"
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    folder = tmp_path / "project"
    agent(folder / ".skillkit" / "agents", "planted", model="openai:gpt-4o")
    agent(tmp_path / "home" / ".skillkit" / "agents", "mine")
    return folder


def test_an_untrusted_projects_agents_are_left_out_with_one_line(
    project: Path, tmp_path: Path
) -> None:
    registry = AgentRegistry(cwd=project, home=tmp_path / "home")

    assert "planted" not in registry and "mine" in registry
    notices = [d for d in registry.diagnostics if d.field == UNTRUSTED_FIELD]
    assert len(notices) == 1
    assert "not trusted" in str(notices[0]) and "\n" not in str(notices[0])
    assert notices[0].path == str(project / ".skillkit" / "agents")


def test_trust_by_store_environment_or_caller_loads_them(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    assert "planted" in AgentRegistry(cwd=project, home=home, trusted=True)

    monkeypatch.setenv(TRUST_ENV, "1")
    assert "planted" in AgentRegistry(cwd=project, home=home)
    monkeypatch.setenv(TRUST_ENV, "0")
    assert "planted" not in AgentRegistry(cwd=project, home=home)

    monkeypatch.delenv(TRUST_ENV)
    TrustStore(home / ".skillkit" / "trusted-projects.json").trust(project)
    trusted = AgentRegistry(cwd=project, home=home)
    assert "planted" in trusted
    assert not [d for d in trusted.diagnostics if d.field == UNTRUSTED_FIELD]


def test_no_notice_without_project_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRUST_ENV, raising=False)
    (tmp_path / "empty").mkdir()
    registry = AgentRegistry(cwd=tmp_path / "empty", home=tmp_path / "home")
    assert registry.diagnostics == []


def test_agents_list_says_so_without_failing(project: Path, tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    arguments = argparse.Namespace(
        json=True,
        cwd=str(project),
        make_agent_registry=lambda cwd: AgentRegistry(cwd=cwd, home=tmp_path / "home"),
    )
    code = agents_cli.main(arguments, out, err)

    assert code == 0
    names = [a["name"] for a in json.loads(out.getvalue())["agents"]]
    assert "planted" not in names and "mine" in names
    assert err.getvalue().count("\n") == 1 and "not trusted" in err.getvalue()
