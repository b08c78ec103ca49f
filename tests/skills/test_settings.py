"""Skill settings from the settings files: ``requires.config`` met from settings,
``skills.disabled``, the catalog budget — and what an untrusted project may do with
them. ``skillkit skills list`` and a session see the same skills, plugins' included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillkit.skills.registry import SkillRegistry
from skillkit.skills.settings import load_skill_settings

SKILLKIT = Path(sys.executable).with_name("skillkit")
ROOT = Path(__file__).resolve().parents[2]

GATED = "metadata:\n  skillkit:\n    requires:\n      config: [{key}]"


def _settings(folder: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(data))


def _setup(project: Path, home: Path, make_skill: Any) -> None:
    make_skill(
        home / ".skillkit" / "skills",
        "user-gated",
        "name: user-gated\ndescription: U.\n" + GATED.format(key="deploy.enabled"),
    )
    make_skill(
        project / ".skillkit" / "skills",
        "project-gated",
        "name: project-gated\ndescription: P.\n" + GATED.format(key="deploy.enabled"),
    )
    make_skill(
        home / ".skillkit" / "skills",
        "github",
        "name: github\ndescription: G.\n" + GATED.format(key="github.enabled"),
    )
    make_skill(home / ".skillkit" / "skills", "noisy")
    _settings(home / ".skillkit", {"github": {"enabled": True}})
    _settings(
        project / ".skillkit",
        {"deploy": {"enabled": True}, "skills": {"disabled": ["noisy"]}},
    )


def _status(project: Path, home: Path, *, trusted: bool) -> dict[str, str]:
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    registry.configure(load_skill_settings(project, home=home, trusted=trusted))
    return {e.skill.name: e.status for e in registry.entries()}


def test_config_requirements_are_met_from_the_user_settings(
    project: Path, home: Path, make_skill: Any
) -> None:
    _setup(project, home, make_skill)
    assert _status(project, home, trusted=False)["github"] == "eligible"


def test_an_untrusted_project_meets_only_its_own_skills_requirements(
    project: Path, home: Path, make_skill: Any
) -> None:
    _setup(project, home, make_skill)
    status = _status(project, home, trusted=False)
    assert status["project-gated"] == "eligible"  # it could drop the requirement anyway
    assert status["user-gated"] == "ineligible"  # the user's own gate stays closed
    assert status["noisy"] == "disabled"  # switching off only narrows: always honoured


def test_a_trusted_project_meets_every_skills_requirements(
    project: Path, home: Path, make_skill: Any
) -> None:
    _setup(project, home, make_skill)
    status = _status(project, home, trusted=True)
    assert status["user-gated"] == status["project-gated"] == "eligible"
    assert status["noisy"] == "disabled"


def test_an_untrusted_project_may_lower_the_catalog_budget_but_not_raise_it(
    project: Path, home: Path
) -> None:
    _settings(home / ".skillkit", {"skills": {"catalog": {"max_chars": 20_000}}})
    _settings(project / ".skillkit", {"skills": {"catalog": {"max_chars": 900_000}}})
    raised = load_skill_settings(project, home=home, trusted=False)
    assert raised.budget is not None and raised.budget.max_chars == 20_000
    assert any("max_chars" in line for line in raised.ignored)
    honoured = load_skill_settings(project, home=home, trusted=True).budget
    assert honoured is not None and honoured.max_chars == 900_000
    _settings(project / ".skillkit", {"skills": {"catalog": {"max_chars": 5_000, "share": 0.01}}})
    lowered = load_skill_settings(project, home=home, trusted=False)
    assert lowered.budget is not None
    assert (lowered.budget.max_chars, lowered.budget.share) == (5_000, 0.01)


def test_broken_settings_are_problems_not_crashes(project: Path, home: Path) -> None:
    (home / ".skillkit").mkdir(parents=True)
    (home / ".skillkit" / "settings.json").write_text("{not json")
    _settings(project / ".skillkit", {"skills": {"disabled": "noisy", "catalog": {"share": 7}}})
    settings = load_skill_settings(project, home=home, trusted=True)
    assert len(settings.problems) == 3
    assert settings.disabled == frozenset() and settings.budget is None


def _cli(project: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env={**os.environ, "HOME": str(home), "SKILLKIT_TRUST_PROJECT": "", **env},
    )


@pytest.mark.timeout(120)
def test_skills_list_applies_the_settings_files(project: Path, home: Path, make_skill: Any) -> None:
    _setup(project, home, make_skill)
    result = _cli(project, home, "skills", "list", "--json")
    assert result.returncode == 0, result.stderr
    status = {s["name"]: s["status"] for s in json.loads(result.stdout)["skills"]}
    assert status == {
        "github": "eligible",
        "project-gated": "eligible",
        "user-gated": "ineligible",
        "noisy": "disabled",
    }
    trusted = _cli(project, home, "skills", "list", "--json", SKILLKIT_TRUST_PROJECT="1")
    status = {s["name"]: s["status"] for s in json.loads(trusted.stdout)["skills"]}
    assert status["user-gated"] == "eligible"


PLUGIN = """
from pathlib import Path
from skillkit.extensions import hookimpl

@hookimpl
def skillkit_register_skills(registry):
    registry.add_source(Path(__file__).parent / "skills", scope="plugin")
"""


@pytest.mark.timeout(120)
def test_skills_list_sees_the_skills_a_trusted_project_plugin_adds(
    project: Path, home: Path, make_skill: Any
) -> None:
    plugins = project / ".skillkit" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "bundle.py").write_text(PLUGIN)
    make_skill(plugins / "skills", "from-plugin")

    untrusted = _cli(project, home, "skills", "list", "--json")
    assert untrusted.returncode == 0, untrusted.stderr
    assert json.loads(untrusted.stdout)["skills"] == []
    trusted = _cli(project, home, "skills", "list", "--json", SKILLKIT_TRUST_PROJECT="1")
    assert trusted.returncode == 0, trusted.stderr
    skills = json.loads(trusted.stdout)["skills"]
    assert [(s["name"], s["scope"]) for s in skills] == [("from-plugin", "plugin")]


def test_a_session_applies_the_settings_files(project: Path, home: Path, make_skill: Any) -> None:
    from skillkit.frontends.setup import AgentOptions, build_agent

    _setup(project, home, make_skill)
    script = ROOT / "examples" / "scripts" / "hello.yaml"
    agent = build_agent(
        AgentOptions(model=f"scripted:{script}", workspace=project, home=home, trust_project=False)
    )
    assert agent.skills is not None
    status = {e.skill.name: e.status for e in agent.skills.entries()}
    assert status["github"] == "eligible"
    assert status["user-gated"] == "ineligible"
    assert status["noisy"] == "disabled"
