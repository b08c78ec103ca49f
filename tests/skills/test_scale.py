"""Skills at scale: a generated corpus of 10,000 skills, flat and nested, is found whole
by the registry (``skills list``) and by ``skills validate`` alike; what is left out is
reported, in the output and the exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillkit.skills.discovery import MAX_DEPTH, discover
from skillkit.skills.registry import SkillRegistry, find_skill_files

SKILLKIT = Path(sys.executable).with_name("skillkit")
COUNT = 10_000


def _write(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Skill {name} for the corpus.\n---\nBody\n"
    )


def _corpus(root: Path, layout: str) -> set[str]:
    """``COUNT`` skills under ``root``; returns their names. ``flat``: one folder per
    skill in a few groups. ``nested``: deep category paths (past the old limit of six
    levels), hidden folders, and skills inside other skills' folders."""
    names: set[str] = set()
    for i in range(COUNT):
        name = f"s{i:05d}"
        if layout == "flat":
            folder = root / f"group-{i % 4}" / name
        elif i % 100 == 1:  # inside the previous skill's folder
            folder = root / f"s{i - 1:05d}" / "examples" / name
        else:
            depth = i % 12
            parts = [
                f".hidden-{d}" if d == 3 else f"level-{d}-{(i >> d) % 2}" for d in range(depth)
            ]
            folder = root.joinpath(*parts, name)
        _write(folder, name)
        names.add(name)
    (root / ".git" / "objects").mkdir(parents=True)
    _write(root / ".git" / "objects" / "never", "never")
    _write(root / "node_modules" / "pkg" / "never-either", "never-either")
    return names


@pytest.fixture(scope="module", params=["flat", "nested"])
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, set[str]]:
    root = tmp_path_factory.mktemp(f"corpus-{request.param}")
    return root, _corpus(root, request.param)


@pytest.mark.timeout(120)
def test_every_skill_of_a_large_corpus_is_found_and_loaded(
    corpus: tuple[Path, set[str]], tmp_path: Path
) -> None:
    root, names = corpus
    registry = SkillRegistry(cwd=tmp_path, home=tmp_path, default_sources=False)
    registry.add_source(root)
    registry.load()

    assert {entry.skill.name for entry in registry.entries()} == names
    assert registry.left_out == []
    located = {str(entry.skill.location) for entry in registry.entries()}
    assert set(find_skill_files(root)) == located  # what validate checks is what list loads


@pytest.mark.timeout(180)
def test_list_and_validate_agree_on_the_nested_corpus(
    corpus: tuple[Path, set[str]], tmp_path: Path
) -> None:
    root, names = corpus
    if "nested" not in root.name:
        pytest.skip("the command-line check runs on the nested corpus")
    env = {**os.environ, "HOME": str(tmp_path)}
    listed = subprocess.run(
        [str(SKILLKIT), "skills", "list", "--json", "--source", str(root), "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    data = json.loads(listed.stdout)
    assert {s["name"] for s in data["skills"]} == names
    assert data["left_out"] == []

    checked = subprocess.run(
        [str(SKILLKIT), "skills", "validate", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert checked.returncode == 0, checked.stdout[-2000:]
    report = json.loads(checked.stdout)
    assert {Path(f["path"]).parent.name for f in report["files"]} == names
    assert report["errors"] == 0


def test_folders_past_the_depth_bound_are_reported_not_dropped_silently(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    shallow = root / "ok"
    _write(shallow, "ok")
    deep = root.joinpath(*[f"d{i}" for i in range(MAX_DEPTH + 2)], "too-deep")
    _write(deep, "too-deep")

    found = discover(root)
    assert [Path(p).parent.name for p in found.locations] == ["ok"]
    assert len(found.left_out) == 1
    assert "more than 32 levels deep" in found.left_out[0].message

    env = {**os.environ, "HOME": str(tmp_path)}
    checked = subprocess.run(
        [str(SKILLKIT), "skills", "validate", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert checked.returncode == 1
    assert "more than 32 levels deep" in checked.stderr
    listed = subprocess.run(
        [str(SKILLKIT), "skills", "list", "--source", str(root), "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert listed.returncode == 1
    assert "ok" in listed.stdout
    assert "warning:" in listed.stderr and "more than 32 levels deep" in listed.stderr


def test_an_unreadable_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "skills"
    _write(root / "fine", "fine")
    locked = root / "locked"
    _write(locked / "inside", "inside")
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if str(path) == str(locked):  # as a folder without read permission answers
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover(root)
    assert [Path(p).parent.name for p in found.locations] == ["fine"]
    assert [(d.path, d.message) for d in found.left_out] == [
        (str(locked), "not searched (Permission denied)")
    ]


def test_a_symlink_loop_is_walked_once(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / "a" / "one", "one")
    (root / "a" / "back").symlink_to(root, target_is_directory=True)
    found = discover(root)
    assert [Path(p).parent.name for p in found.locations] == ["one"]
    assert found.left_out == []
