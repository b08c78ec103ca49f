"""The ``skillkit`` command and plugins: project plugins only in a trusted project (print
mode never asks, and says what it skipped), a broken plugin as one line on stderr, a
failing hook reported once, and the ``skillkit plugins`` subcommand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SKILLKIT = Path(sys.executable).with_name("skillkit")

pytestmark = pytest.mark.timeout(60)

EXTRA_TOOL = '''
from skillkit import tool
from skillkit.extensions import hookimpl


@tool
def extra_tool(text: str) -> str:
    """Say it back."""
    return f"extra: {text}"


@hookimpl
def skillkit_register_tools(registry):
    registry.register(extra_tool)
'''

FAILING_EVENTS = """
from skillkit.extensions import hookimpl


@hookimpl
def skillkit_on_event(event):
    raise RuntimeError("cannot watch")
"""

CALL_EXTRA = """\
replies:
  - tool_calls:
      - {name: extra_tool, arguments: {text: hi}}
  - text: Done.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one plugin file and a script calling its tool; $HOME beside it."""
    (tmp_path / "home").mkdir()
    root = tmp_path / "project"
    plugins = root / ".skillkit" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "extra.py").write_text(EXTRA_TOOL)
    (tmp_path / "model.yaml").write_text(CALL_EXTRA)
    return root


def skillkit(
    project: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    environment.update({"HOME": str(project.parent / "home"), **(env or {})})
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=project,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def run_extra(project: Path, *args: str, **kw: dict[str, str]) -> subprocess.CompletedProcess[str]:
    model = f"scripted:{project.parent / 'model.yaml'}"
    return skillkit(project, "-p", "go", "--model", model, "--allow", "extra_tool", *args, **kw)


def test_print_mode_skips_an_untrusted_projects_plugins_and_says_so(project: Path) -> None:
    result = run_extra(project, "--mode", "json")

    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    # the --allow rule names the left-out plugin's tool, which nothing offers now
    assert lines[0].startswith(
        "skillkit: warning: permission rule 'allow extra_tool' (from flag) names no known tool;"
    )
    assert lines[1] == (
        "skillkit: project plugins not loaded (extra.py): the project is not trusted "
        "(run `skillkit plugins trust` to allow it)"
    )
    assert "Unknown tool 'extra_tool'" in result.stdout


def test_print_mode_runs_them_with_the_environment_variable(project: Path) -> None:
    result = run_extra(project, "--mode", "json", env={"SKILLKIT_TRUST_PROJECT": "1"})

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '{"type":"text","text":"extra: hi"}' in result.stdout


def test_skillkit_plugins_trust_lets_them_run_from_then_on(project: Path) -> None:
    listed = skillkit(project, "plugins")
    assert listed.returncode == 0, listed.stderr
    assert "builtin 0.1.0 (built-in: skillkit.extensions.builtin)" in listed.stdout
    assert "project plugins not loaded (extra.py)" in listed.stdout

    trusted = skillkit(project, "plugins", "trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout.startswith("trusted ")

    result = run_extra(project, "--mode", "json")
    assert result.returncode == 0 and result.stderr == ""
    assert '{"type":"text","text":"extra: hi"}' in result.stdout
    assert "project:extra (project: " in skillkit(project, "plugins").stdout

    assert skillkit(project, "plugins", "untrust").returncode == 0
    assert "not loaded" in run_extra(project).stderr


def test_a_broken_plugin_is_one_line_on_stderr_and_the_run_goes_on(project: Path) -> None:
    (project / ".skillkit" / "plugins" / "broken.py").write_text("raise SystemExit(3)\n")

    result = run_extra(project, env={"SKILLKIT_TRUST_PROJECT": "1"})

    assert result.returncode == 0
    assert result.stdout == "Done.\n"
    assert result.stderr.splitlines() == [
        "skillkit: warning: plugin 'project:broken' failed to load: SystemExit: 3"
    ]


def test_a_failing_hook_is_reported_once_and_the_run_goes_on(project: Path) -> None:
    (project / ".skillkit" / "plugins" / "watcher.py").write_text(FAILING_EVENTS)

    result = run_extra(project, env={"SKILLKIT_TRUST_PROJECT": "1"})

    assert result.returncode == 0
    assert result.stdout == "Done.\n"
    assert result.stderr.splitlines() == [
        "skillkit: warning: plugin 'project:watcher' failed in skillkit_on_event: "
        "RuntimeError: cannot watch"
    ]


SESSION_FACE = """
from skillkit.extensions import FrontendFactory, hookimpl


class Shout:
    def __init__(self, *, prompt, out, err, **options):
        self.prompt, self.out = prompt, out

    async def run(self, session):
        response = await session.run(self.prompt)
        listed = await session.handle({"type": "get_commands"})
        names = [c["name"] for c in listed["data"]["commands"]]
        self.out.write(f"{response.text.upper()} ({len(names)} commands)\\n")
        return 0


@hookimpl
def skillkit_register_frontends(registry):
    registry.register(FrontendFactory("print", Shout), replace=True)
"""

LEGACY_FACE = """
from skillkit.extensions import FrontendFactory, hookimpl


class Old:
    def __init__(self, *, prompt, out, err, **options):
        self.prompt, self.out = prompt, out

    async def run(self, runner, commands):
        response = await runner.chat(self.prompt)
        self.out.write(f"old face: {response.text} ({'help' in commands})\\n")
        return 0


@hookimpl
def skillkit_register_frontends(registry):
    registry.register(FrontendFactory("print", Old), replace=True)
"""


@pytest.mark.parametrize(
    ("plugin", "expected"),
    [(SESSION_FACE, "DONE. ("), (LEGACY_FACE, "old face: Done. (True)")],
)
def test_a_plugins_frontend_is_handed_the_session_and_an_old_one_the_runner(
    project: Path, plugin: str, expected: str
) -> None:
    (project / ".skillkit" / "plugins" / "face.py").write_text(plugin)
    result = run_extra(project, env={"SKILLKIT_TRUST_PROJECT": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(expected), result.stdout
