"""Skills as found in public collections: hidden folders, other agents' roots, other
clients' metadata, YAML 1.1 scalars, ``allowed-tools`` forms, comma-separated
requirements, and ``/reload`` reporting only what changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillkit.skills.diagnostics import SkillError
from skillkit.skills.eligibility import Environment, unmet_requirements
from skillkit.skills.loader import parse_skill, validate_skill
from skillkit.skills.registry import SkillRegistry

SKILLKIT = Path(sys.executable).with_name("skillkit")


def _file(root: Path, folder: str, frontmatter: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\nBody\n")
    return path


def _run(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "HOME": str(home), "SKILLKIT_TRUST_PROJECT": ""},
    )


# --------------------------------------------------------------------------- hidden folders


def test_validate_finds_skills_kept_in_hidden_folders(tmp_path: Path, home: Path) -> None:
    repo = tmp_path / "openai-skills"
    for folder in ("skills/.curated/pdf", "skills/.system/setup", "skills/.experimental/beta"):
        name = folder.rsplit("/", 1)[-1]
        _file(repo, folder, f"name: {name}\ndescription: The {name} skill.")
    _file(repo, ".git/hooks/nope", "name: nope\ndescription: Not a skill.")

    result = _run("skills", "validate", str(repo / "skills"), "--json", cwd=tmp_path, home=home)
    assert result.returncode == 0, result.stdout
    checked = sorted(Path(f["path"]).parent.name for f in json.loads(result.stdout)["files"])
    assert checked == ["beta", "pdf", "setup"]
    whole = _run("skills", "validate", str(repo), "--json", cwd=tmp_path, home=home)
    assert len(json.loads(whole.stdout)["files"]) == 3  # .git is never searched


def test_other_agents_roots_are_read_after_skillkits_own(
    project: Path, home: Path, make_skill: Any
) -> None:
    make_skill(project / ".claude" / "skills", "shared", "name: shared\ndescription: Claude's.")
    make_skill(project / ".skillkit" / "skills", "shared", "name: shared\ndescription: Ours.")
    make_skill(project / ".claude" / "skills", "claude-only")
    make_skill(home / ".claude" / "skills", "user-claude")
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()

    shared = registry.get("shared")
    assert shared is not None and shared.description == "Ours."
    assert [s.winner for s in registry.shadowed] == [shared.location]
    assert registry.entry("claude-only") is not None
    user = registry.entry("user-claude")
    assert user is not None and user.source.scope == "user"


# --------------------------------------------------------------------------- namespaces


def test_other_clients_metadata_is_a_warning_even_in_strict_mode(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "gmail",
        "name: gmail\ndescription: Mail.\nmetadata:\n  openclaw:\n    requires:\n"
        "      skills: [gws-shared]\n      bins: [gws]\n    emoji: x\n  vendor:\n    anything: 1",
    )
    skill = parse_skill(path, strict=True)
    assert skill.requirements is not None and skill.requirements.bins == ("gws",)
    assert [(d.field, d.severity) for d in skill.warnings] == [
        ("metadata.openclaw.requires.skills", "warning")
    ]


def test_skillkits_own_namespace_stays_strict(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "own",
        "name: own\ndescription: Own.\nmetadata:\n  skillkit:\n    requires:\n"
        "      skills: [x]\n    colour: blue",
    )
    with pytest.raises(SkillError) as caught:
        parse_skill(path, strict=True)
    assert sorted(e.field for e in caught.value.errors) == [
        "metadata.skillkit.colour",
        "metadata.skillkit.requires.skills",
    ]
    lenient = parse_skill(path)
    assert sorted(w.field for w in lenient.warnings) == [
        "metadata.skillkit.colour",
        "metadata.skillkit.requires.skills",
    ]


# --------------------------------------------------------------------------- YAML 1.1 scalars


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "Yes", "NO", "On"])
def test_yaml_1_1_boolean_words_are_text_as_written(tmp_path: Path, word: str) -> None:
    name = word.lower()
    path = _file(tmp_path, name, f"name: {name}\ndescription: {word}")
    for strict in (False, True):
        skill = parse_skill(path, strict=strict)
        assert (skill.name, skill.description) == (name, word)
        assert skill.warnings == ()


@pytest.mark.parametrize(
    ("written", "kind"), [("true", "a boolean"), ("1.10", "a number"), ("2024-01-02", "a date")]
)
def test_other_typed_scalars_keep_their_text_and_are_reported(
    tmp_path: Path, written: str, kind: str
) -> None:
    path = _file(tmp_path, "typed", f"name: typed\ndescription: {written}  # a comment")
    skill = parse_skill(path)
    assert skill.description == written  # as written: not 'True', not '1.1'
    assert [(w.field, w.message) for w in skill.warnings] == [
        ("description", f"must be text (got {kind} {written}; quote it)")
    ]
    assert [e.field for e in validate_skill(path, strict=True)] == ["description"]


# --------------------------------------------------------------------------- allowed-tools


@pytest.mark.parametrize(
    ("value", "tools", "strict_fields"),
    [
        ("Read Bash(git add:*)", ("Read", "Bash(git add:*)"), []),
        ('"Read, Grep"', ("Read", "Grep"), []),
        ("\n  - Read\n  - Bash(jq:*)", ("Read", "Bash(jq:*)"), ["allowed-tools"]),
        ("[Read, Write]", ("Read", "Write"), ["allowed-tools"]),
        ("{Read: yes}", (), ["allowed-tools"]),
    ],
)
def test_allowed_tools_forms(
    tmp_path: Path, value: str, tools: tuple[str, ...], strict_fields: list[str]
) -> None:
    path = _file(tmp_path, "tools", f"name: tools\ndescription: T.\nallowed-tools: {value}")
    assert parse_skill(path).allowed_tools == tools  # lenient: read whenever it can be
    assert [d.field for d in validate_skill(path, strict=True)] == strict_fields


# --------------------------------------------------------------------------- requirements


@pytest.mark.parametrize("key", ["skillkit", "openclaw"])
def test_comma_separated_executables_are_several(tmp_path: Path, key: str) -> None:
    path = _file(
        tmp_path,
        "multi",
        f"name: multi\ndescription: M.\nmetadata:\n  {key}:\n    requires:\n"
        '      bins: "git,jq"\n      anyBins: ["rg, grep"]',
    )
    requirements = parse_skill(path).requirements
    assert requirements is not None
    assert requirements.bins == ("git", "jq")
    assert requirements.any_bins == ("rg", "grep")
    env = Environment(which=lambda name: "/bin/git" if name == "git" else None)
    assert unmet_requirements(requirements, env) == [
        "needs executable 'jq' on PATH",
        "needs one of the executables 'rg', 'grep' on PATH",
    ]


# --------------------------------------------------------------------------- /reload


def test_reload_reports_only_what_changed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    paths = {n: _file(root, n, f"name: {n}\ndescription: The {n} skill.") for n in "abcd"}
    registry = SkillRegistry(cwd=tmp_path, home=tmp_path, default_sources=False)
    registry.add_source(root)
    registry.load()
    heard: list[tuple[str, str]] = []
    registry.subscribe(lambda u: heard.append((u.op, u.id)))

    assert registry.reload() == []  # nothing changed: nothing to say
    os.utime(paths["a"], (1, 1))  # a new time, the same bytes
    assert registry.reload() == []
    assert registry.reload(changed=[paths["a"]]) == []

    paths["b"].write_text(paths["b"].read_text().replace("The b skill", "Better b"))
    paths["c"].unlink()
    _file(root, "e", "name: e\ndescription: New.")
    updates = registry.reload()
    assert sorted((u.op, u.id) for u in updates) == [
        ("create", "e"),
        ("delete", "c"),
        ("update", "b"),
    ]
    assert sorted(heard) == sorted((u.op, u.id) for u in updates)
    assert registry.reload() == []


def test_reload_command_in_a_session_is_quiet_when_nothing_changed(
    project: Path, home: Path, make_skill: Any
) -> None:
    from skillkit.extensions.manager import PluginManager

    make_skill(project / ".skillkit" / "skills", "one")
    manager = PluginManager.for_project(project, entry_points=False, tools=False, home=home)
    assert not [line for line in manager.reload() if line.startswith("skills:")]
    make_skill(project / ".skillkit" / "skills", "two")
    assert "skills: 1 change(s)" in manager.reload()
