"""Shell hooks through the real ``skillkit -p``: settings files, trust, the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks.conftest import script

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(90)

MODEL = """\
replies:
  - tool_calls:
      - {name: bash, arguments: {command: "touch forbidden"}}
  - tool_calls:
      - {name: write, arguments: {path: notes.txt, content: "hello"}}
  - text: Done.
  - text: Checked, really done.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    root = tmp_path / "project"
    bin_dir = root / ".claude" / "hooks"
    bin_dir.mkdir(parents=True)
    guard = script(
        bin_dir,
        "guard.sh",
        'if grep -q "touch forbidden"; then echo "no forbidden files here" >&2; exit 2; fi\n',
    )
    post = script(
        bin_dir,
        "post.sh",
        'cat > "$CLAUDE_PROJECT_DIR/post.json"\n'
        'echo \'{"hookSpecificOutput": {"additionalContext": "formatted"}}\'\n',
    )
    stop = script(
        bin_dir,
        "stop.sh",
        "if grep -q '\"stop_hook_active\": true'; then exit 0; fi\n"
        'echo "double-check the notes" >&2\nexit 2\n',
    )
    prompt = script(bin_dir, "prompt.sh", 'echo "the user likes short answers"\n')
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}],
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": post}]}],
        "Stop": [{"hooks": [{"type": "command", "command": stop}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": prompt, "async": True}]}],
    }
    (root / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (tmp_path / "model.yaml").write_text(MODEL)
    return root


def run(project: Path, *args: str, trusted: bool) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    environment["HOME"] = str(project.parent / "home")
    if trusted:
        environment["SKILLKIT_TRUST_PROJECT"] = "1"
    model = f"scripted:{project.parent / 'model.yaml'}"
    return subprocess.run(
        [
            str(SKILLKIT),
            "-p",
            "tidy up",
            "--model",
            model,
            "--allow",
            "bash",
            "--allow",
            "write",
            *args,
        ],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_trusted_projects_claude_code_hooks_work_end_to_end(project: Path) -> None:
    result = run(project, "--mode", "json", trusted=True)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    results = [e for e in events if e.get("type") == "tool_execution_end"]
    texts = json.dumps(results)
    assert not (project / "forbidden").exists()  # the guard blocked it
    assert "no forbidden files here" in texts
    assert (project / "notes.txt").read_text() == "hello"
    assert "formatted" in texts
    assert json.loads((project / "post.json").read_text())["tool_name"] == "Write"
    assert "Checked, really done." in result.stdout  # the Stop hook made it go on
    assert "option 'async' is not supported (ignored)" in result.stderr


def test_an_untrusted_projects_hooks_do_not_run_and_it_says_so(project: Path) -> None:
    result = run(project, trusted=False)
    assert result.returncode == 0, result.stderr
    assert "project hooks not run (the project is not trusted)" in result.stderr
    assert (project / "forbidden").exists()  # nothing guarded it
    assert not (project / "post.json").exists()
