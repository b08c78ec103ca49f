"""Which parent folders give project skills: only the root of the user's own git
repository — not any folder that happens to hold a ``.git``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from skillkit.skills.registry import SkillRegistry, project_folders


def _repository(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    return folder


def _names(cwd: Path, home: Path) -> set[str]:
    registry = SkillRegistry(cwd=cwd, home=home)
    registry.load()
    return {entry.skill.name for entry in registry.entries()}


def test_a_real_repository_root_gives_skills_to_its_sub_folders(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    root = _repository(tmp_path / "repo")
    cwd = root / "packages" / "app"
    cwd.mkdir(parents=True)
    make_skill(root / ".skillkit" / "skills", "from-root")
    make_skill(cwd / ".skillkit" / "skills", "from-cwd")

    assert project_folders(cwd, home) == [cwd, root / "packages", root]
    assert _names(cwd, home) == {"from-root", "from-cwd"}


def test_an_empty_dot_git_folder_in_a_parent_gives_no_skills(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    parent = tmp_path / "downloads"
    (parent / ".git").mkdir(parents=True)
    make_skill(parent / ".skillkit" / "skills", "planted")
    cwd = parent / "project"
    cwd.mkdir()

    assert project_folders(cwd, home) == [cwd]
    assert "planted" not in _names(cwd, home)


def test_a_dot_git_file_that_is_no_gitdir_link_gives_no_skills(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    (parent / ".git").write_text("not a repository\n")
    make_skill(parent / ".agents" / "skills", "planted")
    cwd = parent / "work"
    cwd.mkdir()
    assert project_folders(cwd, home) == [cwd]


def test_a_worktree_gitdir_file_marks_a_repository(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "worktree"
    root.mkdir()
    (root / ".git").write_text("gitdir: /elsewhere/.git/worktrees/w\n")
    cwd = root / "src"
    cwd.mkdir()
    assert project_folders(cwd, home) == [cwd, root]


def test_a_repository_in_a_folder_others_may_write_gives_no_skills(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    shared = _repository(tmp_path / "shared")
    shared.chmod(0o777)  # like /tmp: anyone could have put the .git there
    make_skill(shared / ".skillkit" / "skills", "planted")
    cwd = shared / "mine"
    cwd.mkdir()

    assert project_folders(cwd, home) == [cwd]
    assert "planted" not in _names(cwd, home)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing owners needs root"
)
def test_a_repository_owned_by_another_user_gives_no_skills(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    foreign = _repository(tmp_path / "foreign")
    make_skill(foreign / ".skillkit" / "skills", "planted")
    cwd = foreign / "mine"
    cwd.mkdir()
    os.chown(foreign / ".git", 65534, 65534)

    assert project_folders(cwd, home) == [cwd]
    assert "planted" not in _names(cwd, home)


def test_the_search_stops_at_home_and_never_uses_it(
    tmp_path: Path, home: Path, make_skill: Any
) -> None:
    _repository(home)  # a dotfiles repository
    make_skill(home / ".skillkit" / "skills", "user-skill")
    cwd = home / "notes"
    cwd.mkdir()
    assert project_folders(cwd, home) == [cwd]
    assert project_folders(home, home) == []
    registry = SkillRegistry(cwd=cwd, home=home)
    registry.load()
    entry = registry.entry("user-skill")
    assert entry is not None and entry.source.scope == "user"


def test_the_working_directory_is_always_a_project_folder(tmp_path: Path, home: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    assert project_folders(loose, home) == [loose]
