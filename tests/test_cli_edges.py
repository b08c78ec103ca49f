"""The ``skillkit`` command at its edges, run as a real process: every subcommand with its
output closed early, bad input of every kind as one ``skillkit: error:`` line with the
documented exit code, permission rules spelled as other agents spell them, and
``skillkit models`` in a pipe and on a narrow terminal."""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, build_parser
from skillkit.model_registry import default_registry

ROOT = Path(__file__).resolve().parents[1]
SKILLKIT = Path(sys.executable).with_name("skillkit")
HELLO = f"scripted:{ROOT / 'examples/scripts/hello.yaml'}"
WRITE_FILE = f"scripted:{ROOT / 'examples/scripts/write_file.yaml'}"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with the example skill word-stats and a notes file; $HOME is a sibling."""
    (tmp_path / "home").mkdir()
    work = tmp_path / "project"
    shutil.copytree(ROOT / "examples/skills/word-stats", work / ".skillkit/skills/word-stats")
    (work / "notes.txt").write_text("the cat and the hat\n")
    return work


def environment(project: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(project.parent / "home")}
    env.pop("SKILLKIT_DEBUG", None)
    env.pop("SKILLKIT_MODEL", None)
    return env


def run(project: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=project,
        env=environment(project),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_with_stdout_closed(project: Path, *args: str) -> tuple[int, str]:
    """Run with stdout a pipe whose reader is gone before the command starts (what
    ``| head -1`` does a little later): every write to stdout fails. Returns the exit
    code and stderr."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = subprocess.run(
            [str(SKILLKIT), *args],
            cwd=project,
            env=environment(project),
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=90,
        )
    finally:
        os.close(writer)
    return result.returncode, result.stderr


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("skillkit: error: "), lines[0]
    return lines[0]


# --------------------------------------------------------------------------- closed output


def command_paths(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command of the parser, the top level and each (nested) subcommand."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from command_paths(child, (*path, name))


# For each command: the arguments of a run that writes to stdout (or, for commands that
# print nothing there, does its normal work), in the `project` fixture.
RUNS: dict[tuple[str, ...], list[list[str]]] = {
    (): [["-p", "hi", "--model", HELLO], ["-p", "hi", "--mode", "json", "--model", HELLO]],
    ("models",): [["models"], ["models", "--json"], ["models", "sonnet"]],
    ("skills",): [["skills"]],
    ("skills", "list"): [["skills", "list"]],
    ("skills", "validate"): [["skills", "validate", ".skillkit/skills"]],
    ("skills", "show"): [["skills", "show", "word-stats"]],
    ("skills", "install"): [["skills", "install", "npm:missing"]],
    ("skills", "run"): [
        ["skills", "run", "word-stats", "count", "notes.txt"],
        ["skills", "run", "word-stats", "count", "notes.txt", "--json"],
    ],
    ("plugins",): [["plugins"], ["plugins", "list"], ["plugins", "trust"], ["plugins", "untrust"]],
    ("local",): [["local"]],
    ("local", "serve"): [
        ["local", "serve", "--port", "0", "--threads", "1", "--context", "256"],
    ],
    ("local", "install"): [["local", "install"]],
    ("local", "add"): [["local", "add", "missing-name", "/nonexistent/model.gguf"]],
    ("local", "list"): [["local", "list"]],
    ("local", "remove"): [["local", "remove", "missing-name"]],
    ("doctor",): [["doctor"]],
    ("agents",): [["agents"]],
    ("agents", "list"): [["agents", "list"], ["agents", "list", "--json"]],
    ("sessions",): [["sessions"]],
    ("sessions", "list"): [["sessions", "list"], ["sessions", "list", "--json"]],
    ("sessions", "show"): [["sessions", "show", "latest-missing"]],
    ("sessions", "export"): [["sessions", "export", "latest-missing"]],
    ("sessions", "rm"): [["sessions", "rm", "latest-missing"]],
    ("sessions", "rewind"): [["sessions", "rewind", "latest-missing"]],
    ("sessions", "import"): [["sessions", "import", "missing-folder"]],
    ("batch",): [
        ["batch", "missing.jsonl", "--prompt", "x", "--out", "out.jsonl"],
        ["batch", "notes.txt", "--prompt", "{x}", "--model", HELLO, "--out", "out.jsonl"],
    ],
    ("eval",): [["eval", "missing.yaml"], ["eval", "compare", "missing-a", "missing-b"]],
    ("skills", "eval"): [["skills", "eval", "word-stats", "--models", HELLO]],
    ("serve",): [["serve", "--port", "0", "--model", HELLO, "--no-session"]],
    ("mcp",): [["mcp"]],
    ("mcp", "list"): [["mcp", "list"], ["mcp", "list", "--json"]],
    ("mcp", "serve"): [
        ["mcp", "serve", "--model", HELLO, "--no-session"],
        ["mcp", "serve", "--http", "--port", "0", "--model", HELLO, "--no-session"],
    ],
    ("acp",): [["acp", "--model", HELLO, "--no-session"]],
    ("install",): [["install", "npm:missing"]],
    ("plugin",): [["plugin", "list"]],
    ("plugin", "install"): [["plugin", "install", "npm:missing"]],
    ("plugin", "list"): [["plugin", "list"]],
    ("plugin", "update"): [["plugin", "update", "missing"]],
    ("plugin", "remove"): [["plugin", "remove", "missing"]],
    ("plugin", "enable"): [["plugin", "enable", "missing"]],
    ("plugin", "disable"): [["plugin", "disable", "missing"]],
    ("plugin", "marketplace"): [["plugin", "marketplace", "list"]],
}


def test_the_runs_below_cover_every_command_of_the_parser() -> None:
    assert set(command_paths(build_parser())) == set(RUNS)


def closed_output_cases() -> Iterator[object]:
    for path, runs in RUNS.items():
        yield pytest.param([*path, "--help"], id=" ".join([*path, "--help"]))
        for args in runs:
            yield pytest.param(args, id=" ".join(args) or "(none)")


@pytest.mark.parametrize("args", list(closed_output_cases()))
def test_every_command_ends_quietly_when_its_output_is_closed(
    project: Path, args: list[str]
) -> None:
    code, stderr = run_with_stdout_closed(project, *args)

    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr
    assert "BrokenPipeError" not in stderr
    assert code in (EXIT_OK, EXIT_ERROR, EXIT_USAGE), (code, stderr)
    for line in stderr.splitlines():
        assert line.startswith(("skillkit: ", "usage:", "  ")), stderr


def test_a_listing_piped_into_head_prints_its_first_line_and_nothing_on_stderr(
    project: Path,
) -> None:
    for command in ("models --json", "skills show word-stats", "models", "doctor"):
        result = subprocess.run(
            f"{SKILLKIT} {command} | head -1",
            shell=True,
            cwd=project,
            env=environment(project),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0
        assert len(result.stdout.splitlines()) == 1, command
        assert result.stderr == "", (command, result.stderr)


# --------------------------------------------------------------------------- bad input


def test_a_script_file_that_is_not_utf8_is_a_one_line_usage_error(project: Path) -> None:
    script = project / "bin.yaml"
    script.write_bytes(b'replies:\n  - text: "\xff\xfe caf\xe9"\n')

    line = assert_one_line_error(run(project, "-p", "hi", "--model", "scripted:bin.yaml"), 2)

    assert "bin.yaml is not UTF-8 text" in line


@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_prompt_that_is_not_utf8_is_a_one_line_usage_error(project: Path, mode: str) -> None:
    argv = [os.fsencode(str(SKILLKIT)), b"-p", b"caf\xe9", b"--mode", mode.encode()]
    argv += [b"--model", HELLO.encode()]
    result = subprocess.run(
        argv, cwd=project, env=environment(project), capture_output=True, text=True, timeout=60
    )
    assert assert_one_line_error(result, EXIT_USAGE) == (
        "skillkit: error: the prompt is not UTF-8 text"
    )

    piped = subprocess.run(
        [str(SKILLKIT), "-p", "-", "--mode", mode, "--model", HELLO],
        cwd=project,
        env=environment(project),
        input=b"caf\xe9",
        capture_output=True,
        timeout=60,
    )
    assert piped.returncode == EXIT_USAGE
    assert piped.stdout == b""
    assert piped.stderr == b"skillkit: error: the prompt on stdin is not UTF-8 text (byte 3)\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--mode", "xml"], "argument --mode: invalid choice: 'xml'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["models", "--provider", "nobody"], "models: unknown provider 'nobody'"),
        (["skills", "show"], "skills show: the following arguments are required: name"),
        (["plugins", "bogus"], "plugins: argument action: invalid choice: 'bogus'"),
        (["plugins", "list", "no-such-folder"], "plugins: not a folder: no-such-folder"),
        (["local"], "local: choose a command: serve, install, add, list or remove"),
        (["local", "serve", "--port", "x"], "local serve: argument --port: invalid int value"),
        (["-p", "hi", "--model", "scripted:missing.yaml"], "script file not found"),
        (["-p", "hi", "--allow", "bash(("], "invalid permission rule"),
        (["-p", "   "], "the prompt is empty"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_bad_input_is_one_error_line_and_exit_code_2(
    project: Path, args: list[str], says: str
) -> None:
    line = assert_one_line_error(run(project, *args), EXIT_USAGE)

    assert says in line


def test_a_failure_nobody_expected_is_one_error_line_and_exit_code_1(project: Path) -> None:
    # A handler that raises what nobody catches: the user sees one line, not a traceback.
    script = project / "boom.py"
    script.write_text(
        "import sys\n"
        "from skillkit import cli\n"
        "def boom(args):\n"
        "    raise RuntimeError('the disk\\nwent away')\n"
        "cli._run_agent = boom\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    env = environment(project)
    result = subprocess.run(
        [sys.executable, str(script), "-p", "hi"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_one_line_error(result, EXIT_ERROR)
    assert result.stderr == (
        "skillkit: error: RuntimeError: the disk went away (SKILLKIT_DEBUG=1 shows the traceback)\n"
    )

    shown = subprocess.run(
        [sys.executable, str(script), "-p", "hi"],
        cwd=project,
        env={**env, "SKILLKIT_DEBUG": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 1
    assert "Traceback" in shown.stderr and "RuntimeError: the disk" in shown.stderr


# --------------------------------------------------------------------------- rule spelling


def test_rules_match_tool_names_in_any_case(project: Path) -> None:
    result = run(
        project, "-p", "Create hello.txt", "--model", WRITE_FILE, "--allow", "Write(*.txt)"
    )

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert (project / "hello.txt").read_text() == "Hello from SkillKit\n"


def test_a_capitalised_deny_rule_refuses_the_call(project: Path) -> None:
    result = run(
        project, "-p", "Create hello.txt", "--model", WRITE_FILE,
        "--allow", "write(*.txt)", "--deny", "WRITE(hello.txt)",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert not (project / "hello.txt").exists()


def test_a_rule_naming_no_known_tool_is_a_warning_line(project: Path) -> None:
    result = run(
        project, "-p", "hi", "--model", HELLO,
        "--allow", "Bash(echo:*)", "--allow", "Shell(echo:*)", "--deny", "mcp__github__push",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "names no known tool" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith(
        "skillkit: warning: permission rule 'allow Shell(echo:*)' (from flag) names no known tool;"
    )
    assert "bash" in warnings[0].split("tools:", 1)[1]


# --------------------------------------------------------------------------- models


def test_models_in_a_pipe_is_plain_text_with_every_id_whole(project: Path) -> None:
    result = run(project, "models")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "provider", "model", "context", "max_out", "input", "output", "cache_r/w", "capabilities"
    ]  # fmt: skip
    assert not any(ch in result.stdout for ch in "│┃━─…")
    listed = [line.split()[1] for line in lines[1:]]
    catalog = [model.id for model in default_registry().find("")]
    assert listed == catalog
    assert max(len(model_id) for model_id in listed) > 20


def read_terminal(fd: int, process: subprocess.Popen[bytes], timeout: float) -> bytes:
    output = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        elif process.poll() is not None:
            break
    return output


def test_models_on_a_narrow_terminal_never_cuts_a_model_id(project: Path) -> None:
    longest = max(default_registry().find(""), key=lambda model: len(model.id))
    leader, follower = pty.openpty()
    env = {**environment(project), "COLUMNS": "60", "LINES": "40", "TERM": "xterm"}
    process = subprocess.Popen(
        [str(SKILLKIT), "models", longest.id],
        cwd=project,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    try:
        output = read_terminal(leader, process, timeout=60)
        assert process.wait(timeout=30) == 0
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()

    text = output.decode("utf-8", "replace")
    assert "┃" in text  # the table, since this is a terminal
    assert longest.id in text
