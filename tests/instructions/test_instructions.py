"""Project instructions: which AGENTS.md / CLAUDE.md files are found, in what order,
how they are capped and made safe, and that an edit reaches the next model call."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.events import StoreUpdate
from skillkit.instructions import (
    ProjectInstructions,
    instruction_files,
    read_instruction_file,
    repository_root,
)
from skillkit.instructions.files import Candidate

DAY = datetime.date(2026, 3, 4)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, repository root, working directory two folders below the root)."""
    home = tmp_path / "home"
    (home / ".skillkit").mkdir(parents=True)
    repo = home / "code" / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    return home, repo, cwd


def contributor(cwd: Path, home: Path, **settings: object) -> ProjectInstructions:
    return ProjectInstructions(cwd, home=home, today=lambda: DAY, **settings)  # type: ignore[arg-type]


def test_files_are_read_from_the_user_then_root_down_to_the_working_directory(
    layout: tuple[Path, Path, Path],
) -> None:
    home, repo, cwd = layout
    (home / ".skillkit" / "AGENTS.md").write_text("user rule")
    (repo / "AGENTS.md").write_text("root rule")
    (repo / "CLAUDE.md").write_text("root claude rule")
    (repo / "pkg" / "AGENTS.md").write_text("pkg rule")
    (cwd / "CLAUDE.md").write_text("sub rule")
    (home / "code" / "AGENTS.md").write_text("outside the repository")

    prompt = contributor(cwd, home).system_prompt()

    assert prompt is not None
    order = ["user rule", "root rule", "root claude rule", "pkg rule", "sub rule"]
    positions = [prompt.index(text) for text in order]
    assert positions == sorted(positions)
    assert "outside the repository" not in prompt
    assert "## ~/.skillkit/AGENTS.md" in prompt
    assert f"## {repo / 'AGENTS.md'}" in prompt
    assert "## CLAUDE.md" in prompt


def test_environment_lines_come_first(layout: tuple[Path, Path, Path]) -> None:
    home, _, cwd = layout
    prompt = contributor(cwd, home).system_prompt()
    assert prompt is not None
    lines = prompt.splitlines()
    assert lines[0] == "# Environment"
    assert lines[1] == f"Working directory: {cwd}"
    assert lines[2].startswith("Platform: ")
    assert lines[3] == "Date: 2026-03-04"
    assert "# Project instructions" not in prompt  # no files, no section


def test_outside_a_repository_only_the_working_directory_is_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    parent = tmp_path / "downloads"
    cwd = parent / "thing"
    cwd.mkdir(parents=True)
    (parent / "AGENTS.md").write_text("a stranger's rules")
    (cwd / "AGENTS.md").write_text("own rules")

    assert repository_root(cwd, home) is None
    prompt = contributor(cwd, home).system_prompt() or ""
    assert "own rules" in prompt and "a stranger's rules" not in prompt


def test_the_search_never_reaches_home_or_above(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository in the home folder
    (home / "AGENTS.md").write_text("home rules")
    cwd = home / "project"
    cwd.mkdir()
    assert repository_root(cwd, home) is None
    paths = [c.path for c in instruction_files(cwd, home)]
    assert home / "AGENTS.md" not in paths


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "wt"
    (root / "a").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /elsewhere\n")
    assert repository_root(root / "a", home) == root


def test_identical_agents_and_claude_files_are_included_once(
    layout: tuple[Path, Path, Path],
) -> None:
    home, repo, cwd = layout
    (repo / "AGENTS.md").write_text("shared rules")
    os.symlink("AGENTS.md", repo / "CLAUDE.md")
    prompt = contributor(cwd, home).system_prompt() or ""
    assert prompt.count("shared rules") == 1


def test_a_symlink_out_of_the_project_is_not_read(layout: tuple[Path, Path, Path]) -> None:
    home, repo, cwd = layout
    secret = home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY")
    os.symlink(secret, repo / "AGENTS.md")
    os.mkfifo(cwd / "CLAUDE.md")  # not a regular file: never opened (would block)

    instructions = contributor(cwd, home)
    prompt = instructions.system_prompt() or ""

    assert "PRIVATE KEY" not in prompt
    assert instructions.files == []


def test_files_are_capped_and_terminal_escapes_neutralised(
    layout: tuple[Path, Path, Path],
) -> None:
    home, repo, cwd = layout
    (repo / "AGENTS.md").write_text("\x1b]0;pwned\x07\x1b[2Jclear" + "x" * 5000)
    instructions = contributor(cwd, home, max_file_bytes=1000)

    prompt = instructions.system_prompt() or ""

    assert "\x1b" not in prompt and "\x07" not in prompt
    assert "␛" in prompt  # shown, not obeyed
    (file,) = instructions.files
    assert file.truncated and len(file.text) <= 1000 + 10
    assert "cut at the size limit" in prompt


def test_the_total_budget_goes_to_the_most_specific_files(
    layout: tuple[Path, Path, Path],
) -> None:
    home, _, cwd = layout
    (home / ".skillkit" / "AGENTS.md").write_text("general " * 200)
    (cwd / "AGENTS.md").write_text("specific " * 100)
    instructions = contributor(cwd, home, max_total_bytes=1000)

    files = instructions.files

    assert files[-1].path == cwd / "AGENTS.md" and not files[-1].truncated
    assert sum(len(f.text.encode()) for f in files) <= 1000 + 16


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000))
def test_any_bytes_become_safe_capped_text(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(data)
    file = read_instruction_file(Candidate(path, "project", tmp_path), 1000)
    assert file is not None
    assert all(ch in "\n\t" or ord(ch) >= 0x20 for ch in file.text)
    assert not any(0x80 <= ord(ch) <= 0x9F for ch in file.text)
    assert file.truncated == (len(data) > 1000)


def test_append_text_comes_last(layout: tuple[Path, Path, Path]) -> None:
    home, repo, cwd = layout
    (repo / "AGENTS.md").write_text("root rule")
    prompt = contributor(cwd, home, append="Answer in French.").system_prompt() or ""
    assert prompt.endswith("Answer in French.")
    assert prompt.index("root rule") < prompt.index("Answer in French.")


def test_project_false_reads_only_the_users_files(layout: tuple[Path, Path, Path]) -> None:
    home, repo, cwd = layout
    (home / ".skillkit" / "CLAUDE.md").write_text("user rule")
    (repo / "AGENTS.md").write_text("root rule")
    prompt = contributor(cwd, home, project=False).system_prompt() or ""
    assert "user rule" in prompt and "root rule" not in prompt


async def test_an_edit_reaches_the_next_model_call(layout: tuple[Path, Path, Path]) -> None:
    home, repo, cwd = layout
    (repo / "AGENTS.md").write_text("Use tabs.")
    adapter = ScriptedAdapter([Reply(text="ok")], cycle=True)
    instructions = contributor(cwd, home)
    runner = AgentRunner(
        AgentConfig(model="scripted", system_prompt="Base."),
        adapter=adapter,
        contributors=[instructions],
    )
    updates: list[StoreUpdate] = []
    runner.events.on("store_update", lambda event: updates.append(event.payload))

    await runner.chat("one")
    (repo / "AGENTS.md").write_text("Use spaces, four of them.")  # size changes too
    (cwd / "AGENTS.md").write_text("New file in the working directory.")
    await runner.chat("two")
    await runner.chat("three")

    first, second, third = (request.system_prompt for request in adapter.requests)
    assert first.startswith("Base.\n\n# Environment")
    assert "Use tabs." in first
    assert "Use spaces, four of them." in second and "Use tabs." not in second
    assert "New file in the working directory." in second
    assert third == second
    assert instructions.reloads == 1
    assert [(u.domain, u.op) for u in updates] == [("instructions", "reload")]
    await runner.aclose()


def test_the_date_is_refreshed_when_the_day_changes(layout: tuple[Path, Path, Path]) -> None:
    home, _, cwd = layout
    days = [DAY]
    instructions = ProjectInstructions(cwd, home=home, today=lambda: days[-1])
    assert "Date: 2026-03-04" in (instructions.system_prompt() or "")
    days.append(DAY + datetime.timedelta(days=1))
    assert "Date: 2026-03-05" in (instructions.system_prompt() or "")


def test_the_users_own_file_may_be_a_symlink_to_a_dotfiles_repository(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    dotfiles.mkdir(parents=True)
    (dotfiles / "AGENTS.md").write_text("my personal rules")
    (home / ".skillkit").mkdir()
    os.symlink(dotfiles / "AGENTS.md", home / ".skillkit" / "AGENTS.md")
    cwd = tmp_path / "work"
    cwd.mkdir()
    assert "my personal rules" in (contributor(cwd, home).system_prompt() or "")
