"""The ``skillkit`` command, run as a real process: print mode, JSON mode, exit codes and
one-line errors; plus the parser's subcommand seam, in process."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillkit import Event
from skillkit.cli import build_parser, default_model, main

ROOT = Path(__file__).resolve().parents[1]
SKILLKIT = Path(sys.executable).with_name("skillkit")
HELLO = "scripted:examples/scripts/hello.yaml"
TOOL_CALL = "scripted:examples/scripts/tool_call.yaml"
ERROR = "scripted:examples/scripts/error.yaml"
SLOW = "scripted:examples/scripts/slow.yaml"

pytestmark = pytest.mark.timeout(60)


def skillkit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=ROOT,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("skillkit: error: ")
    return lines[0]


# --------------------------------------------------------------------------- print mode


def test_print_mode_prints_the_answer() -> None:
    result = skillkit("-p", "hello", "--model", HELLO)

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Hello! I am SkillKit running on a scripted model. "
        "Configure a real provider to chat for real.\n"
    )
    assert result.stderr == ""


def test_print_mode_prints_the_answer_after_a_tool_call() -> None:
    result = skillkit("--print", "Weather in Paris?", "--model", TOOL_CALL)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "I could not check the weather: no get_weather tool is available.\n"


def test_a_run_that_ends_in_error_exits_1_with_the_message_on_stderr() -> None:
    line = assert_one_line_error(skillkit("-p", "hello", "--model", ERROR), 1)

    assert line == "skillkit: error: the scripted provider went away mid-reply"


def test_prompt_dash_reads_the_prompt_from_stdin() -> None:
    result = skillkit("-p", "-", "--model", HELLO, stdin="hello from a pipe\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello! I am SkillKit")


def test_without_a_model_the_scripted_demo_runs_with_a_notice() -> None:
    result = skillkit("-p", "hello")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello! This is SkillKit's scripted demo model")
    notice = result.stderr.splitlines()
    assert len(notice) == 1
    assert "scripted demo" in notice[0] and "--model" in notice[0]


def test_default_model_is_the_bundled_demo_script() -> None:
    choice = default_model()

    assert choice.model.startswith("scripted:")
    assert Path(choice.model.removeprefix("scripted:")).is_file()


# --------------------------------------------------------------------------- usage errors


def test_unknown_model_is_a_one_line_usage_error() -> None:
    line = assert_one_line_error(skillkit("-p", "hello", "--model", "no-such-model"), 2)

    assert "unknown model 'no-such-model'" in line


def test_missing_script_file_is_a_one_line_usage_error() -> None:
    line = assert_one_line_error(skillkit("-p", "hi", "--model", "scripted:nowhere/x.yaml"), 2)

    assert "script file not found: nowhere/x.yaml" in line


def test_broken_script_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("replies:\n  - text: [unclosed\n")

    line = assert_one_line_error(skillkit("-p", "hi", "--model", f"scripted:{script}"), 2)

    assert "not valid YAML/JSON" in line


def test_script_with_an_unknown_field_is_a_one_line_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("replies:\n  - txet: hello\n")

    assert_one_line_error(skillkit("-p", "hi", "--model", f"scripted:{script}"), 2)


def test_empty_prompt_is_a_usage_error() -> None:
    line = assert_one_line_error(skillkit("-p", "  ", "--model", HELLO), 2)

    assert "empty" in line


def test_json_mode_without_a_prompt_is_a_usage_error() -> None:
    line = assert_one_line_error(skillkit("--mode", "json", "--model", HELLO), 2)

    assert "-p PROMPT" in line


def test_interactive_mode_without_a_terminal_is_a_usage_error() -> None:
    line = assert_one_line_error(skillkit("--model", HELLO), 2)

    assert "needs a terminal" in line


def test_bad_option_exits_2_without_a_traceback() -> None:
    result = skillkit("--mode", "xml")

    assert result.returncode == 2
    assert "invalid choice: 'xml'" in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- version and help


def test_version() -> None:
    result = skillkit("--version")

    assert result.returncode == 0
    assert result.stdout.strip() == f"skillkit {_project_version()}"


def test_help_lists_the_options() -> None:
    result = skillkit("--help")

    assert result.returncode == 0
    for option in ("-p PROMPT, --print PROMPT", "--model MODEL", "--mode {text,json}", "--version"):
        assert option in result.stdout


def test_help_and_version_import_neither_the_agent_nor_the_terminal_libraries() -> None:
    code = (
        "import sys\n"
        "from skillkit.cli import main\n"
        "for flag in ('--version', '--help'):\n"
        "    try:\n"
        "        main([flag])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('rich', 'prompt_toolkit', 'pydantic', 'yaml', 'msgspec', 'skillkit.agent')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )

    assert result.stdout.splitlines()[-1] == "[]"


def _project_version() -> str:
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    version: str = data["project"]["version"]
    return version


# --------------------------------------------------------------------------- json mode


def test_json_mode_prints_every_event_of_the_run_as_a_json_line() -> None:
    result = skillkit("-p", "Weather in Paris?", "--mode", "json", "--model", TOOL_CALL)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    events = [Event.from_json(line) for line in lines]
    types = [event.type for event in events]
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert types.count("agent_start") == types.count("agent_end") == 1
    assert [t for t in types if t.startswith("turn_")] == ["turn_start", "turn_end"] * 2
    tool_end = next(e for e in events if e.type == "tool_execution_end")
    assert tool_end.result.is_error
    assert events[-1].text == "I could not check the weather: no get_weather tool is available."
    assert all(json.loads(line)["agent_id"] == "main" for line in lines)


def test_json_mode_run_that_fails_exits_1() -> None:
    result = skillkit("-p", "hi", "--mode", "json", "--model", ERROR)

    assert result.returncode == 1
    last = Event.from_json(result.stdout.splitlines()[-1])
    assert (last.type, last.stop_reason) == ("agent_end", "error")
    assert result.stderr == "skillkit: error: the scripted provider went away mid-reply\n"


def test_ctrl_c_aborts_a_print_mode_run_with_exit_130() -> None:
    proc = subprocess.Popen(
        [str(SKILLKIT), "-p", "count", "--mode", "json", "--model", SLOW],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first_delta = ""
        while '"text_delta"' not in first_delta:  # the run is streaming
            first_delta = proc.stdout.readline()
            assert first_delta, "the run ended before it streamed"
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    last = Event.from_json(rest.splitlines()[-1])
    assert proc.returncode == 130
    assert (last.type, last.stop_reason) == ("agent_end", "aborted")
    assert stderr == "skillkit: aborted\n"


# --------------------------------------------------------------------------- the parser


def test_subcommands_registered_by_other_modules_get_their_own_handler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        greet = subparsers.add_parser("greet", help="say hello")
        greet.add_argument("name")
        greet.set_defaults(handler=lambda args: print(f"hello {args.name}") or 3)

    parser = build_parser([register])
    args = parser.parse_args(["greet", "Ada"])
    assert args.handler(args) == 3
    assert capsys.readouterr().out == "hello Ada\n"
    assert "greet" in parser.format_help()

    plain = parser.parse_args(["-p", "hi", "--model", HELLO])
    assert (plain.prompt, plain.model, plain.mode) == ("hi", HELLO, "text")
    assert plain.handler is build_parser([]).parse_args([]).handler


def test_the_models_subcommand_is_wired_in() -> None:
    result = skillkit("models", "--json", "sonnet 4.5")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["provider"] == "anthropic"


def test_main_returns_the_exit_code_without_exiting(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["-p", "hi", "--model", "no-such-model"])

    assert code == 2
    assert capsys.readouterr().err.count("\n") == 1


@given(st.text(min_size=1).filter(lambda s: s.strip() and "\x00" not in s))
def test_any_prompt_text_survives_argument_parsing(prompt: str) -> None:
    parser = build_parser([])

    assert parser.parse_args([f"--print={prompt}"]).prompt == prompt
    if not prompt.startswith("-"):
        assert parser.parse_args(["-p", prompt]).prompt == prompt
