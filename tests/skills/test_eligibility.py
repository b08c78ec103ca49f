"""Eligibility: each requirement met and unmet, the openclaw form, settings, hiding."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from skillkit.skills.diagnostics import Findings
from skillkit.skills.eligibility import (
    Environment,
    Requirements,
    current_platform,
    parse_requirements,
    unmet_requirements,
)
from skillkit.skills.registry import SkillRegistry


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("present", "also-present"):
        tool = folder / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return folder


def env_for(bin_dir: Path, **kwargs: Any) -> Environment:
    kwargs.setdefault("environ", {"SET_VAR": "1", "EMPTY_VAR": ""})
    kwargs.setdefault("platform", "linux")
    return Environment(path=str(bin_dir), **kwargs)


def parse(metadata: dict[str, Any]) -> Requirements:
    findings = Findings("SKILL.md", strict=True)
    requirements = parse_requirements(metadata, findings)
    assert findings.items == []
    return requirements


CASES = [
    ({"os": ["linux"]}, []),
    ({"os": ["darwin", "win32"]}, ["needs operating system darwin or win32 (this is linux)"]),
    ({"bins": ["present", "also-present"]}, []),
    ({"bins": ["present", "missing-tool"]}, ["needs executable 'missing-tool' on PATH"]),
    ({"any-bins": ["missing-tool", "present"]}, []),
    ({"any-bins": ["nope1", "nope2"]}, ["needs one of the executables 'nope1', 'nope2' on PATH"]),
    ({"env": ["SET_VAR"]}, []),
    (
        {"env": ["EMPTY_VAR", "UNSET_VAR"]},
        [
            "needs environment variable EMPTY_VAR",
            "needs environment variable UNSET_VAR",
        ],
    ),
    ({"config": ["github.enabled"]}, []),
    (
        {"config": ["github.token", "slack.enabled"]},
        [
            "needs configuration key 'github.token' to be set",
            "needs configuration key 'slack.enabled' to be set",
        ],
    ),
    ({"python": ["json", "yaml"]}, []),
    ({"python": ["surely_not_installed_pkg"]}, ["needs Python package 'surely_not_installed_pkg'"]),
]


@pytest.mark.parametrize(("requires", "unmet"), CASES)
def test_each_requirement_met_and_unmet(
    bin_dir: Path, requires: dict[str, Any], unmet: list[str]
) -> None:
    env = env_for(bin_dir, config={"github": {"enabled": True, "token": ""}})
    requirements = parse({"skillkit": {"requires": requires}})
    assert unmet_requirements(requirements, env) == unmet


def test_always_skips_every_check_but_the_operating_system(bin_dir: Path) -> None:
    env = env_for(bin_dir)
    skip = parse({"skillkit": {"always": True, "requires": {"bins": ["nope"], "env": ["NOPE"]}}})
    assert unmet_requirements(skip, env) == []
    wrong_os = parse({"skillkit": {"always": True, "requires": {"os": ["darwin"]}}})
    assert unmet_requirements(wrong_os, env) == ["needs operating system darwin (this is linux)"]


def test_os_aliases_and_single_strings() -> None:
    assert parse({"skillkit": {"requires": {"os": "macOS"}}}).os == ("darwin",)
    assert parse({"skillkit": {"requires": {"os": ["Windows", "linux"]}}}).os == ("win32", "linux")


def test_current_platform_is_a_known_name() -> None:
    assert current_platform() in ("linux", "darwin", "win32") or current_platform()


@pytest.mark.parametrize("key", ["openclaw", "clawdbot", "moltbot", "clawdis"])
def test_openclaw_metadata_gates_the_same_way(bin_dir: Path, key: str) -> None:
    requirements = parse(
        {
            key: {
                "os": ["linux"],
                "requires": {"bins": ["present"], "anyBins": ["x", "y"], "env": ["TOKEN"]},
                "primaryEnv": "TOKEN",
                "emoji": "*",
            }
        }
    )
    assert requirements.source == key
    assert unmet_requirements(requirements, env_for(bin_dir)) == [
        "needs one of the executables 'x', 'y' on PATH",
        "needs environment variable TOKEN",
    ]


def test_skillkit_requirements_win_over_openclaw_ones() -> None:
    requirements = parse(
        {"skillkit": {"requires": {"bins": ["a"]}}, "openclaw": {"requires": {"bins": ["b"]}}}
    )
    assert (requirements.source, requirements.bins) == ("skillkit", ("a",))


def test_a_skillkit_block_with_only_actions_leaves_openclaw_gating_in_force() -> None:
    requirements = parse({"skillkit": {"actions": {}}, "openclaw": {"requires": {"bins": ["b"]}}})
    assert (requirements.source, requirements.bins) == ("openclaw", ("b",))


def test_malformed_requirements_are_findings() -> None:
    findings = Findings("SKILL.md", strict=False)
    requirements = parse_requirements(
        {"skillkit": {"requires": {"bins": 5, "gpu": ["x"], "env": ["OK", ""]}, "always": "yes"}},
        findings,
    )
    assert requirements.env == ("OK",)
    assert [str(d) for d in findings.items] == [
        "SKILL.md: metadata.skillkit.requires.bins: must be a list of names; ignored",
        "SKILL.md: metadata.skillkit.requires.gpu: unknown requirement "
        "(known: os, bins, any-bins, env, config, python)",
        "SKILL.md: metadata.skillkit.requires.env: "
        "must hold only non-empty names (got ''); skipped",
        "SKILL.md: metadata.skillkit.always: must be true or false; ignored",
    ]
    assert all(d.severity == "warning" for d in findings.items)


# --------------------------------------------------------------------------- in the registry


def gated(root: Path, make_skill: Any, name: str, metadata: str) -> None:
    make_skill(root, name, f"name: {name}\ndescription: The {name} skill.\nmetadata:\n{metadata}")


def test_registry_offers_only_eligible_skills_and_lists_the_others(
    project: Path, home: Path, make_skill: Any, bin_dir: Path
) -> None:
    root = project / ".agents/skills"
    gated(root, make_skill, "ready", "  skillkit:\n    requires:\n      bins: [present]")
    gated(root, make_skill, "blocked", "  openclaw:\n    requires:\n      bins: [missing-tool]")
    reg = SkillRegistry(cwd=project, home=home, environment=env_for(bin_dir))
    reg.load()
    assert [(e.skill.name, e.status, e.unmet) for e in reg.entries()] == [
        ("ready", "eligible", ()),
        ("blocked", "ineligible", ("needs executable 'missing-tool' on PATH",)),
    ]
    section = reg.prompt_section()
    assert section is not None and "<name>ready</name>" in section and "blocked" not in section
    with pytest.raises(LookupError, match="blocked' is ineligible: needs executable"):
        reg.activation_message("blocked")


def test_skills_switched_off_in_settings(project: Path, home: Path, make_skill: Any) -> None:
    root = project / ".agents/skills"
    make_skill(root, "one")
    make_skill(root, "two")
    make_skill(root, "three")
    reg = SkillRegistry(
        cwd=project, home=home, disabled=["one"], config={"skills": {"disabled": ["two"]}}
    )
    reg.load()
    assert {e.skill.name: e.status for e in reg.entries()} == {
        "three": "eligible",
        "one": "disabled",
        "two": "disabled",
    }
    reg.set_disabled("one", False)
    assert reg.entry("one").eligible  # type: ignore[union-attr]
    assert [t.name for t in reg.tools()] == ["skill"]


def test_disable_model_invocation_hides_from_the_model_but_not_the_user(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "manual", "name: manual\ndescription: M.\ndisable-model-invocation: true")
    reg = SkillRegistry(cwd=project, home=home)
    reg.load()
    assert reg.prompt_section() is None
    assert reg.tools() == []
    assert '<skill_content name="manual"' in reg.activation_message("manual")


def test_requirements_are_checked_again_on_reload(
    project: Path, home: Path, make_skill: Any, tmp_path: Path
) -> None:
    gated(
        project / ".agents/skills",
        make_skill,
        "later",
        "  skillkit:\n    requires:\n      bins: [late-tool]",
    )
    folder = tmp_path / "late-bin"
    folder.mkdir()
    old_path = os.environ.get("PATH", "")
    reg = SkillRegistry(cwd=project, home=home)
    os.environ["PATH"] = f"{folder}{os.pathsep}{old_path}"
    try:
        reg.load()
        assert reg.entry("later").status == "ineligible"  # type: ignore[union-attr]
        tool = folder / "late-tool"
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
        reg.reload()
        assert reg.entry("later").status == "eligible"  # type: ignore[union-attr]
    finally:
        os.environ["PATH"] = old_path
