"""Helpers to write skill folders on disk."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_skill(
    root: Path,
    folder: str,
    frontmatter: str | None = None,
    body: str = "# Instructions\nDo the thing.\n",
    *,
    file_name: str = "SKILL.md",
) -> Path:
    """Write ``root/folder/SKILL.md``; the frontmatter defaults to a valid one."""
    if frontmatter is None:
        frontmatter = f"name: {folder.rsplit('/', 1)[-1]}\ndescription: The {folder} skill."
    path = root / folder / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(autouse=True)
def _isolated_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the real user's skills."""
    monkeypatch.setenv("HOME", str(home))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return path


@pytest.fixture
def make_skill():  # type: ignore[no-untyped-def]
    return write_skill
