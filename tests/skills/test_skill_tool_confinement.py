"""The ``skill`` tool reads a companion file only inside the real folder of its skill,
and the permission gate judges the file it really reads.

A skill folder can be a symbolic link — to the workspace, to the home folder, or out of
the workspace — and a companion path can hold ``..`` after a link. Reads are resolved
the way the kernel resolves them and confined there; a folder that resolves to the home
or working folder (or a parent, or ``/``) is no skill's own folder and is not read.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from skillkit.permissions import GateAction, PermissionGate
from skillkit.skills.loader import parse_skill
from skillkit.skills.skill_tool import SkillTool
from skillkit.tools.base import ToolError
from tests.skills.conftest import write_skill


def tool_for(*skill_files: Path) -> SkillTool:
    skills = {s.name: s for s in (parse_skill(path) for path in skill_files)}
    return SkillTool(list(skills), skills.get, lambda skill: skill.body)


def read(tool: SkillTool, name: str, path: str) -> str:
    args = tool.args_model(name=name, path=path)
    result = asyncio.run(tool.execute(args, None))  # type: ignore[arg-type]
    return "".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / ".env").write_text("DOTENV_SECRET=1\n")
    monkeypatch.chdir(ws)
    return ws


def test_a_companion_file_of_a_real_skill_folder_is_read(workspace: Path) -> None:
    skill = write_skill(workspace / ".skillkit" / "skills", "guide")
    (skill.parent / "ref.md").write_text("reference\n")
    assert read(tool_for(skill), "guide", "ref.md") == "reference\n"


def test_a_skill_folder_linked_to_the_workspace_reads_nothing(workspace: Path) -> None:
    write_skill(workspace, ".", "name: rooted\ndescription: Poses as a skill.")
    skills = workspace / ".skillkit" / "skills"
    skills.mkdir(parents=True)
    (skills / "rooted").symlink_to(workspace)
    tool = tool_for(skills / "rooted" / "SKILL.md")

    with pytest.raises(ToolError, match="working folder"):
        read(tool, "rooted", ".env")


def test_a_skill_folder_linked_to_the_home_folder_reads_nothing(
    workspace: Path, home: Path
) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    write_skill(home, ".", "name: homely\ndescription: Poses as a skill.")
    (workspace / "homely").symlink_to(home)
    tool = tool_for(workspace / "homely" / "SKILL.md")

    with pytest.raises(ToolError, match="home folder"):
        read(tool, "homely", ".ssh/id_rsa")


def test_dotdot_after_a_link_inside_the_skill_is_judged_where_it_lands(
    workspace: Path, tmp_path: Path
) -> None:
    skill = write_skill(workspace / ".skillkit" / "skills", "guide")
    outside = tmp_path / "outside" / "inner"
    outside.mkdir(parents=True)
    (tmp_path / "outside" / "leak.txt").write_text("OUTSIDE\n")
    (skill.parent / "link").symlink_to(outside)
    tool = tool_for(skill)

    with pytest.raises(ToolError, match="not inside the folder"):
        read(tool, "guide", "link/../leak.txt")
    with pytest.raises(ToolError, match="not inside the folder"):
        read(tool, "guide", "/etc/hostname")


def test_the_gate_applies_file_rules_to_the_file_the_skill_tool_reads(
    workspace: Path, home: Path
) -> None:
    skill = write_skill(workspace / "shared" / "skills", "guide")
    (skill.parent / ".env").write_text("SKILL_ENV=1\n")
    (skill.parent / "ref.md").write_text("ok\n")
    tool = tool_for(skill)
    gate = PermissionGate(workspace=workspace, home=home)
    gate.rules.add("read(.env)", "deny")
    target = tool.target_path({"name": "guide", "path": "sub/../.env"})

    assert target == os.path.realpath(skill.parent / ".env")
    call: dict[str, Any] = {"name": "guide", "path": ".env"}
    assert gate.decide("skill", call, tool).action is GateAction.REFUSE
    ok: dict[str, Any] = {"name": "guide", "path": "ref.md"}
    assert gate.decide("skill", ok, tool).action is GateAction.RUN
    assert gate.decide("skill", {"name": "guide"}, tool).action is GateAction.RUN
