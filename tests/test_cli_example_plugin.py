"""The example plugin package, installed into a fresh environment, used by the real
``skillkit`` command: in print mode the model calls the plugin's tool (behind the
permission gate) and its guard refuses a ``.env`` read; ``--model echo`` picks the
plugin's adapter; in an interactive session (tmux) its ``/wc`` command runs and
``/help`` and ``/plugins`` list it.

The environment is the one `tests.extensions.test_example_plugin` builds (offline
install, this environment's packages visible through a ``.pth`` file); its ``skillkit``
command is the console script pip would write for SkillKit: ``skillkit.cli:main`` run
by that environment's python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit import Event
from tests.extensions.test_example_plugin import install_example
from tests.frontends.tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(300)

SCRIPT = """\
replies:
  - tool_calls:
      - {name: word_count, arguments: {text: one two three}}
  - tool_calls:
      - {name: read, arguments: {path: .env}}
  - text: all done
"""


@pytest.fixture(scope="module")
def example_skillkit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``skillkit`` of a new environment with the example plugin installed."""
    pytest.importorskip("hatchling", reason="the example plugin builds with hatchling")
    python = install_example(tmp_path_factory.mktemp("example-env") / "env")
    command = python.with_name("skillkit")
    command.write_text(f"#!{python}\nimport sys\nfrom skillkit.cli import main\nsys.exit(main())\n")
    command.chmod(0o755)
    return command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    root = tmp_path / "project"
    root.mkdir()
    (root / ".env").write_text("SECRET=1\n")
    (tmp_path / "model.yaml").write_text(SCRIPT)
    return root


def run(command: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(project.parent / "home"), "PATH": os.environ.get("PATH", "/usr/bin")}
    return subprocess.run(
        [str(command), *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_print_mode_runs_the_plugins_tool_and_guard(example_skillkit: Path, project: Path) -> None:
    model = f"scripted:{project.parent / 'model.yaml'}"

    result = run(
        example_skillkit, project,
        "-p", "count, then peek", "--model", model, "--mode", "json", "--allow", "word_count",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    ends = [Event.from_json(line) for line in result.stdout.splitlines()[1:]]  # after the header
    results = [
        (e.payload.tool_name, e.payload.result.is_error, e.payload.result.output)
        for e in ends
        if e.type == "tool_execution_end"
    ]
    assert results == [
        ("word_count", False, "3 words"),
        ("read", True, "read: .env files are off limits"),
    ]
    assert ends[-1].type == "agent_end"

    denied = run(example_skillkit, project, "-p", "count", "--model", model)
    assert denied.returncode == 0
    assert "denied word_count" in denied.stderr and "--allow 'word_count'" in denied.stderr
    assert denied.stdout == "all done\n"

    echoed = run(example_skillkit, project, "-p", "is anyone there?", "--model", "echo")
    assert echoed.returncode == 0, echoed.stderr
    assert echoed.stdout == "echo: is anyone there?\n"


@pytest.fixture
def terminal(tmp_path: Path, example_skillkit: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket_dir = Path(tempfile.mkdtemp(prefix="skt-"))
    term = Terminal(socket_dir / "sock", tmp_path / "exit-code", tmp_path / "home")
    term.program = example_skillkit
    try:
        yield term
    finally:
        subprocess.run(
            ["tmux", "-S", str(term.socket), "kill-server"], capture_output=True, timeout=10
        )
        shutil.rmtree(socket_dir, ignore_errors=True)


def test_the_plugins_command_in_an_interactive_session(terminal: Terminal, project: Path) -> None:
    terminal.start("--model", f"scripted:{project.parent / 'model.yaml'}", cwd=project)
    terminal.wait_for_prompt_count(1)

    terminal.type("/wc four little words here")
    terminal.wait_for("4 words")
    terminal.wait_for_prompt_count(2)
    terminal.type("/help")
    screen = terminal.wait_for("count the words of TEXT")
    assert "/wc TEXT" in screen
    terminal.wait_for_prompt_count(3)
    terminal.press("C-l")  # a clear screen: /plugins does not fit below /help
    terminal.wait_for(lambda screen: "/wc TEXT" not in screen)
    terminal.type("/plugins")
    screen = terminal.wait_for("frontend:interactive (not a plugin)")
    example = screen.index("example 1.0.0 (entry point: skillkit-example-plugin)")
    assert "commands: wc" in screen[example:] and "hooks: before_tool_call" in screen[example:]
    terminal.wait_for_prompt_count(2)
    terminal.type("/model echo")
    terminal.wait_for("using adapter 'echo' from example")
    terminal.wait_for_prompt_count(3)
    terminal.type("hello there")
    terminal.wait_for("echo: hello there")
    terminal.wait_for_prompt_count(4)
    terminal.type("/quit")
    assert terminal.wait_exit() == 0
