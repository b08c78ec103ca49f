"""Discovery: sources, precedence, shadowing, symlinks, skipping, reload of the snapshot."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skillkit.events import StoreUpdate
from skillkit.skills.eligibility import Environment
from skillkit.skills.registry import SkillRegistry, UnknownSkillError


def registry(project: Path, home: Path, **kwargs: Any) -> SkillRegistry:
    reg = SkillRegistry(cwd=project, home=home, environment=Environment(environ={}), **kwargs)
    reg.load()
    return reg


def test_default_sources_walk_from_the_working_directory_to_the_repository_root(
    project: Path, home: Path
) -> None:
    cwd = project / "pkg" / "sub"
    cwd.mkdir(parents=True)
    reg = SkillRegistry(cwd=cwd, home=home)
    roots = (".skillkit/skills", ".agents/skills", ".claude/skills")  # SkillKit's own first
    expected = [
        (str(folder / root), "project")
        for folder in (cwd, project / "pkg", project)
        for root in roots
    ]
    expected += [(str(home / root), "user") for root in roots]
    assert [(str(s.path), s.scope) for s in reg.sources] == expected


def test_outside_a_repository_only_the_working_directory_is_a_project_source(
    tmp_path: Path, home: Path
) -> None:
    cwd = tmp_path / "loose" / "dir"
    cwd.mkdir(parents=True)
    reg = SkillRegistry(cwd=cwd, home=home)
    assert [s.path for s in reg.sources if s.scope == "project"] == [
        cwd / ".skillkit/skills",
        cwd / ".agents/skills",
        cwd / ".claude/skills",
    ]


def test_skills_are_found_in_every_source(project: Path, home: Path, make_skill: Any) -> None:
    make_skill(project / ".skillkit/skills", "one")
    make_skill(project / ".agents/skills", "two")
    make_skill(home / ".agents/skills", "three")
    extra = project.parent / "extra"
    make_skill(extra, "four")
    reg = SkillRegistry(cwd=project, home=home)
    reg.add_source(extra, scope="plugin")
    reg.load()
    assert sorted(e.skill.name for e in reg.entries()) == ["four", "one", "three", "two"]
    assert {e.skill.name: e.source.scope for e in reg.entries()}["four"] == "plugin"


def test_project_skill_shadows_user_skill_and_says_so(
    project: Path, home: Path, make_skill: Any
) -> None:
    user = make_skill(home / ".agents/skills", "review", "name: review\ndescription: User one.")
    mine = make_skill(project / ".agents/skills", "review", "name: review\ndescription: Project.")
    reg = registry(project, home)
    assert reg.get("review") is not None
    assert reg.get("review").description == "Project."  # type: ignore[union-attr]
    (shadow,) = reg.shadowed
    assert shadow.skill.location == user and shadow.winner == mine
    assert f"{user}: name: skill 'review' is shadowed by {mine}" in [
        str(d) for d in reg.diagnostics
    ]


def test_within_a_scope_the_first_source_wins(project: Path, home: Path, make_skill: Any) -> None:
    make_skill(project / ".skillkit/skills", "dup", "name: dup\ndescription: SkillKit folder.")
    make_skill(project / ".agents/skills", "dup", "name: dup\ndescription: Agents folder.")
    assert registry(project, home).get("dup").description == "SkillKit folder."  # type: ignore[union-attr]


def test_config_sources_rank_below_user_sources(project: Path, home: Path, make_skill: Any) -> None:
    make_skill(home / ".agents/skills", "dup", "name: dup\ndescription: User.")
    extra = project.parent / "extra"
    make_skill(extra, "dup", "name: dup\ndescription: Config.")
    reg = SkillRegistry(cwd=project, home=home)
    reg.add_source(extra)
    reg.load()
    assert reg.get("dup").description == "User."  # type: ignore[union-attr]


def test_skills_nested_in_groups_and_inside_other_skills_are_all_found(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "group/inner")
    make_skill(root, "outer")
    make_skill(root, "outer/nested")  # inside a skill folder: a skill of its own too
    reg = registry(project, home)
    assert sorted(e.skill.name for e in reg.entries()) == ["inner", "nested", "outer"]
    outer = reg.get("outer")
    assert outer is not None and "nested/SKILL.md" in outer.files


def test_git_and_node_modules_are_skipped_and_hidden_folders_searched(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "node_modules/dep")
    make_skill(root, ".curated/curated")
    make_skill(root, ".git/x")
    make_skill(root, "visible")
    names = [e.skill.name for e in registry(project, home).entries()]
    assert names == ["curated", "visible"]


def test_depth_is_limited(project: Path, home: Path, make_skill: Any) -> None:
    root = project / ".agents/skills"
    make_skill(root, "a/b/deep")
    make_skill(root, "a/b/c/d/e/f/g/too-deep")
    reg = registry(project, home, max_depth=4)
    assert [e.skill.name for e in reg.entries()] == ["deep"]


def test_a_source_may_point_at_a_single_skill(project: Path, home: Path, make_skill: Any) -> None:
    path = make_skill(project.parent, "solo")
    reg = SkillRegistry(cwd=project, home=home, default_sources=False)
    reg.add_source(path.parent)
    reg.load()
    assert [e.skill.name for e in reg.entries()] == ["solo"]


def test_symlinked_duplicates_are_counted_once(project: Path, home: Path, make_skill: Any) -> None:
    real = make_skill(home / ".agents/skills", "shared")
    link_root = project / ".agents/skills"
    link_root.mkdir(parents=True)
    os.symlink(real.parent, link_root / "shared")
    os.symlink(home / ".agents/skills", home / ".skillkit", target_is_directory=True)
    reg = registry(project, home)
    assert [e.skill.name for e in reg.entries()] == ["shared"]
    assert reg.shadowed == []
    assert reg.entries()[0].source.scope == "project"


def test_symlink_loops_do_not_hang(project: Path, home: Path, make_skill: Any) -> None:
    root = project / ".agents/skills"
    make_skill(root, "real")
    os.symlink(root, root / "loop")
    assert [e.skill.name for e in registry(project, home).entries()] == ["real"]


def test_broken_files_are_reported_and_siblings_still_load(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    make_skill(root, "good")
    bad = make_skill(root, "bad", "name: bad")
    reg = registry(project, home)
    assert [e.skill.name for e in reg.entries()] == ["good"]
    assert f"{bad}: description: is missing (required)" in [str(d) for d in reg.diagnostics]


def test_reload_reports_create_update_delete_and_error(
    project: Path, home: Path, make_skill: Any
) -> None:
    root = project / ".agents/skills"
    seen: list[StoreUpdate] = []
    reg = registry(project, home)
    reg.subscribe(seen.append)
    path = make_skill(root, "live")
    reg.reload()
    make_skill(root, "live", "name: live\ndescription: Changed.")
    reg.reload()
    path.write_text("---\nname: live\n---\n")
    reg.reload()
    assert reg.get("live").description == "Changed."  # type: ignore[union-attr]
    path.unlink()
    reg.reload()
    assert [(u.domain, u.op, u.id) for u in seen] == [
        ("skill", "create", "live"),
        ("skill", "update", "live"),
        ("skill", "error", "live"),
        ("skill", "delete", "live"),
    ]
    assert "description: is missing" in seen[2].payload["errors"][0]
    assert reg.get("live") is None


def test_reload_with_nothing_changed_reports_nothing(
    project: Path, home: Path, make_skill: Any
) -> None:
    make_skill(project / ".agents/skills", "calm")
    reg = registry(project, home)
    before = reg.get("calm")
    assert reg.reload(changed=()) == []
    assert reg.get("calm") is before


def test_reload_of_a_companion_file_refreshes_the_listing(
    project: Path, home: Path, make_skill: Any
) -> None:
    path = make_skill(project / ".agents/skills", "kit")
    reg = registry(project, home)
    assert reg.get("kit").files == ()  # type: ignore[union-attr]
    (path.parent / "notes.md").write_text("n")
    reg.reload(changed=[str(path.parent / "notes.md")])
    assert reg.get("kit").files == ("notes.md",)  # type: ignore[union-attr]


def test_unknown_skill_names_list_the_known_ones(
    project: Path, home: Path, make_skill: Any
) -> None:
    make_skill(project / ".agents/skills", "known")
    reg = registry(project, home)
    with pytest.raises(UnknownSkillError, match=r"no skill named 'nope' \(skills: known\)"):
        reg.activation_message("nope")


def test_unknown_scope_is_refused(project: Path, home: Path) -> None:
    with pytest.raises(ValueError, match="unknown skill scope 'team'"):
        SkillRegistry(cwd=project, home=home).add_source(project, scope="team")
