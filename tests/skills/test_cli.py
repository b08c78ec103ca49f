"""``skillkit skills ...``: list, validate, show, run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from skillkit.skills.cli import main, register

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_register_adds_a_skills_command_with_handlers() -> None:
    parser = argparse.ArgumentParser(prog="skillkit")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["skills", "list", "--json"])
    assert callable(args.handler) and args.json


def test_examples_pass_strict_validation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "validate", "--strict", str(EXAMPLES))
    assert code == 0
    assert "3 skill file(s) checked (strict): 0 error(s), 0 warning(s)" in out


def test_validate_exits_1_with_one_line_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_skill: Any
) -> None:
    bad = make_skill(tmp_path, "bad-skill", "name: Bad_Skill\ndescription: B.")
    code, out, err = run_cli(capsys, "validate", str(bad.parent))
    assert code == 0  # lenient: warnings only
    assert f"warning: {bad}: name: may contain only lowercase letters" in out
    code, out, err = run_cli(capsys, "validate", "--strict", str(bad.parent))
    assert code == 1
    assert f"error: {bad}: name: must equal the folder name 'bad-skill' (got 'Bad_Skill')" in err
    assert "2 error(s)" in out


def test_validate_reports_paths_without_skills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "validate", str(tmp_path / "nothing"))
    assert code == 1 and "no SKILL.md found here" in err


def test_validate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], make_skill: Any) -> None:
    make_skill(tmp_path, "fine")
    make_skill(tmp_path, "broken", "name: broken")
    code, out, _ = run_cli(capsys, "validate", "--json", str(tmp_path))
    data = json.loads(out)
    assert code == 1 and data["errors"] == 1
    assert {Path(f["path"]).parent.name: f["ok"] for f in data["files"]} == {
        "broken": False,
        "fine": True,
    }


def test_list_shows_eligible_first_then_reasons_then_shadowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_skill: Any, project: Path
) -> None:
    make_skill(project / ".agents/skills", "git-summary", "name: git-summary\ndescription: Mine.")
    make_skill(project / ".agents/skills", "broken", "name: broken")
    code, out, _ = run_cli(
        capsys, "list", "--all", "--cwd", str(project), "--source", str(EXAMPLES)
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("  git-summary") and "project" in lines[0]
    assert any(
        line.startswith("- release-notes") and "needs executable 'gh'" in line for line in lines
    )
    assert any(line.startswith("= git-summary") and "winner:" in line for line in lines)
    assert any(line.startswith("! ") and "description: is missing" in line for line in lines)
    eligible_rows = [i for i, line in enumerate(lines) if line.startswith("  ")]
    other_rows = [i for i, line in enumerate(lines) if line.startswith("- ")]
    assert max(eligible_rows) < min(other_rows)


def test_list_json(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run_cli(
        capsys, "list", "--json", "--cwd", str(project), "--source", str(EXAMPLES)
    )
    assert code == 0
    skills = {s["name"]: s for s in json.loads(out)["skills"]}
    assert skills["word-stats"]["actions"] == ["count"]
    assert skills["release-notes"]["model_visible"] is False


def test_show_prints_the_skill(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out, _ = run_cli(
        capsys, "show", "git-summary", "--cwd", str(project), "--source", str(EXAMPLES)
    )
    assert code == 0
    assert "action recent-commits: List the most recent commits" in out
    assert "count: integer (default 10) How many commits to list" in out
    assert "# Git summary" in out
    code, _, err = run_cli(capsys, "show", "nope", "--cwd", str(project))
    assert code == 2 and "no skill named 'nope'" in err


def test_run_passes_arguments_and_returns_the_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    (project / "doc.txt").write_text("the cat and the hat\nthe end\n")
    code, out, _ = run_cli(
        capsys,
        "run",
        "word-stats",
        "count",
        "doc.txt",
        "--arg",
        "top=1",
        "--cwd",
        str(project),
        "--source",
        str(EXAMPLES),
    )
    assert code == 0
    assert json.loads(out) == {"lines": 2, "words": 7, "top": [["the", 3]]}
    code, _, err = run_cli(
        capsys,
        "run",
        "word-stats",
        "count",
        "missing.txt",
        "--cwd",
        str(project),
        "--source",
        str(EXAMPLES),
    )
    assert code == 1 and "cannot read missing.txt" in err


def test_run_json_and_usage_errors(
    capsys: pytest.CaptureFixture[str], project: Path, make_skill: Any
) -> None:
    py = json.dumps(sys.executable)
    make_skill(
        project / ".agents/skills",
        "echoer",
        "name: echoer\ndescription: E.\nmetadata:\n  skillkit:\n    actions:\n      say:\n"
        f"        description: Say\n        params: {{word: string}}\n"
        f"        command: [{py}, -c, 'import sys; print(sys.argv[1])']",
    )
    code, out, _ = run_cli(
        capsys, "run", "echoer", "say", "word=$(id); ls", "--json", "--cwd", str(project)
    )
    assert code == 0 and json.loads(out)["stdout"] == "$(id); ls\n"
    code, _, err = run_cli(capsys, "run", "echoer", "say", "--cwd", str(project))
    assert code == 2 and "word: Field required" in err
    code, _, err = run_cli(capsys, "run", "echoer", "shout", "--cwd", str(project))
    assert code == 2 and "has no action 'shout' (actions: say)" in err


def test_show_on_a_terminal_shows_escapes_instead_of_obeying_them(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess

    skill = tmp_path / "skills" / "sneaky"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: sneaky\ndescription: Looks harmless.\n---\n"
        "Body \x1b]52;c;cm0gLXJmIH4=\x07 then \x1b[2J cleared \x1b[8mhidden\x1b[0m\n"
    )
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [
                str(Path(sys.executable).parent / "skillkit"),
                "skills",
                "show",
                "sneaky",
                "--cwd",
                str(tmp_path),
                "--source",
                str(tmp_path / "skills"),
            ],
            stdout=terminal,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
    shown = b"".join(chunks).decode()
    assert process.returncode == 0, process.stderr
    assert "\x1b" not in shown and "\x07" not in shown
    assert "␛]52;c;cm0gLXJmIH4=␇" in shown and "hidden" in shown
