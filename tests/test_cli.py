"""The ``skillkit`` command, run as a real process: print mode, JSON mode, exit codes and
one-line errors; plus the parser's subcommand seam, in process."""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
HELLO_PATH = ROOT / "examples" / "scripts" / "hello.yaml"
TOOL_CALL = "scripted:examples/scripts/tool_call.yaml"
ERROR = "scripted:examples/scripts/error.yaml"
SLOW = "scripted:examples/scripts/slow.yaml"

pytestmark = pytest.mark.timeout(60)


def skillkit(
    *args: str,
    stdin: str | None = None,
    cwd: Path = ROOT,
    home: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    if home is not None or env is not None:
        env = {**os.environ, **(env or {}), **({"HOME": str(home)} if home is not None else {})}
    return subprocess.run(
        [str(SKILLKIT), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
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


def test_without_a_model_the_local_model_runs_with_a_notice(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    env = {"SKILLKIT_MODEL": "", "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    result = skillkit(
        "-p", "Say hello in one short sentence.", "--no-tools", cwd=tmp_path, env=env, timeout=120
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    # the model's notice once (the local profile's own notice about what it shortened
    # is another line)
    notice = [line for line in result.stderr.splitlines() if "no model configured" in line]
    assert len(notice) == 1
    assert "SmolLM2" in notice[0] and "--model" in notice[0]


def test_default_model_is_the_local_model_unless_skillkit_model_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SKILLKIT_MODEL", raising=False)
    assert default_model().model == "local"
    monkeypatch.setenv("SKILLKIT_MODEL", f"scripted:{HELLO_PATH}")
    assert default_model() == (f"scripted:{HELLO_PATH}", "")


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
    for option in (
        "-p PROMPT, --print PROMPT",
        "--model MODEL",
        "--mode {text,json,rpc}",
        "--version",
        "--permission-mode {default,accept_edits,plan}",
        "--dangerously-bypass-permissions",
        "--allow RULE",
        "--deny RULE",
        "--no-tools",
    ):
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
        "heavy = ('rich', 'prompt_toolkit', 'pydantic', 'yaml', 'msgspec', 'skillkit.agent',"
        " 'pluggy')\n"
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
    header, *lines = result.stdout.splitlines()
    assert json.loads(header)["type"] == "header"  # then the events (docs/faces.md)
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


# --------------------------------------------------------------------------- tools and permissions


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty project directory; the command runs there with $HOME in a sibling."""
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    return project


def run_script(work: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``skillkit -p go --mode json`` in ``work`` with ``script`` as the model."""
    model = work.parent / "model.yaml"
    model.write_text(script)
    return skillkit(
        "-p", "go", "--mode", "json", "--model", f"scripted:{model}", *args,
        cwd=work, home=work.parent / "home",
    )  # fmt: skip


def tool_results(result: subprocess.CompletedProcess[str]) -> dict[str, tuple[bool, str]]:
    """Each tool's (is_error, text) from a JSON-mode run."""
    ends = [Event.from_json(line) for line in result.stdout.splitlines()[1:]]  # after the header
    return {
        e.tool_name: (e.result.is_error, e.result.output)
        for e in ends
        if e.type == "tool_execution_end"
    }


WRITE = """\
replies:
  - tool_calls:
      - {name: write, arguments: {path: hello.txt, content: "hello\\n"}}
  - text: Done.
"""

READ = """\
replies:
  - tool_calls:
      - {name: read, arguments: {path: notes.txt}}
  - text: Done.
"""


def test_print_mode_denies_a_write_without_an_allow_rule_and_says_so(work: Path) -> None:
    result = run_script(work, WRITE)

    assert result.returncode == 0, result.stderr
    assert not (work / "hello.txt").exists()
    is_error, text = tool_results(result)["write"]
    assert is_error and "no user is available to approve this write call" in text
    assert result.stderr == (
        "skillkit: denied write: hello.txt: no user to approve it; "
        "to allow it: --allow 'write(hello.txt)'\n"
    )
    approval = next(
        Event.from_json(line) for line in result.stdout.splitlines() if '"approval_needed"' in line
    )
    assert approval.tool_name == "write"


def test_print_mode_runs_a_write_an_allow_rule_matches(work: Path) -> None:
    result = run_script(work, WRITE, "--allow", "write(*)")

    assert result.returncode == 0, result.stderr
    assert (work / "hello.txt").read_text() == "hello\n"
    assert tool_results(result)["write"] == (False, "Created hello.txt (6 bytes)")
    assert result.stderr == ""


def test_print_mode_text_output_stays_clean_when_a_call_is_denied(work: Path) -> None:
    model = work.parent / "model.yaml"
    model.write_text(WRITE)

    result = skillkit(
        "-p", "go", "--model", f"scripted:{model}", cwd=work, home=work.parent / "home"
    )

    assert result.returncode == 0
    assert result.stdout == "Done.\n"
    assert result.stderr.startswith("skillkit: denied write: hello.txt")


def test_read_runs_without_asking(work: Path) -> None:
    (work / "notes.txt").write_text("remember the milk\n")

    result = run_script(work, READ)

    assert result.returncode == 0, result.stderr
    assert tool_results(result)["read"] == (False, "remember the milk")
    assert '"approval_needed"' not in result.stdout
    assert result.stderr == ""


def test_a_deny_rule_refuses_even_a_read(work: Path) -> None:
    (work / "notes.txt").write_text("secret\n")

    result = run_script(work, READ, "--deny", "read(notes.txt)")

    is_error, text = tool_results(result)["read"]
    assert is_error and "Permission denied by rule `deny read(notes.txt)`" in text
    assert "secret" not in result.stdout


def test_plan_mode_refuses_a_write_even_with_an_allow_rule(work: Path) -> None:
    result = run_script(work, WRITE, "--permission-mode", "plan", "--allow", "write(*)")

    assert result.returncode == 0, result.stderr
    assert not (work / "hello.txt").exists()
    is_error, text = tool_results(result)["write"]
    assert is_error and text.startswith("Plan mode is active, so write was not run")


def test_bypass_runs_a_shell_command_without_asking(work: Path) -> None:
    script = """\
replies:
  - tool_calls:
      - {name: bash, arguments: {command: "echo made > made.txt && cat made.txt"}}
  - text: Done.
"""
    result = run_script(work, script, "--dangerously-bypass-permissions")

    assert result.returncode == 0, result.stderr
    assert (work / "made.txt").read_text() == "made\n"
    assert tool_results(result)["bash"] == (False, "made")


def test_no_tools_offers_no_built_in_tools(work: Path) -> None:
    (work / "notes.txt").write_text("remember the milk\n")

    result = run_script(work, READ, "--no-tools")

    is_error, text = tool_results(result)["read"]
    assert is_error and text.startswith("Unknown tool 'read'. Available tools: ask_user.")


def test_ask_user_in_print_mode_answers_that_no_user_is_available(work: Path) -> None:
    script = """\
replies:
  - tool_calls:
      - name: ask_user
        arguments: {questions: [{question: "Which colour?", options: [{label: red}]}]}
  - text: Done.
"""
    result = run_script(work, script)

    assert result.returncode == 0, result.stderr
    is_error, text = tool_results(result)["ask_user"]
    assert not is_error and "No user is available to answer questions" in text


def test_a_malformed_rule_flag_is_a_one_line_usage_error(work: Path) -> None:
    line = assert_one_line_error(run_script(work, WRITE, "--allow", "write(("), 2)

    assert "invalid permission rule 'write(('" in line


def test_bypass_and_a_permission_mode_together_are_a_usage_error(work: Path) -> None:
    result = run_script(
        work, WRITE, "--permission-mode", "plan", "--dangerously-bypass-permissions"
    )

    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_broken_settings_file_is_a_warning_and_its_rules_are_skipped(work: Path) -> None:
    (work / ".skillkit").mkdir()
    (work / ".skillkit" / "settings.json").write_text("{not json")

    result = run_script(work, WRITE)

    assert result.returncode == 0
    assert result.stderr.splitlines()[0].startswith("skillkit: warning: permission settings: ")
    assert "settings.json: not valid JSON" in result.stderr


def test_project_settings_rules_apply_in_print_mode_once_trusted(work: Path) -> None:
    from skillkit.trust import TrustStore

    (work / ".skillkit").mkdir()
    settings = {"permissions": {"allow": ["write(hello.txt)"]}}
    (work / ".skillkit" / "settings.json").write_text(json.dumps(settings))
    TrustStore(work.parent / "home" / ".skillkit" / "trusted-projects.json").trust(work)

    result = run_script(work, WRITE)

    assert result.returncode == 0, result.stderr
    assert (work / "hello.txt").read_text() == "hello\n"


# --------------------------------------------------------------------------- skills


@pytest.fixture
def skill_project(work: Path) -> Path:
    """``work`` with the example skill word-stats in ``.skillkit/skills``."""
    shutil.copytree(ROOT / "examples/skills/word-stats", work / ".skillkit/skills/word-stats")
    (work / "notes.txt").write_text("the cat and the hat\n")
    return work


def test_the_skills_subcommand_lists_project_skills(skill_project: Path) -> None:
    result = skillkit("skills", "list", cwd=skill_project, home=skill_project.parent / "home")

    assert result.returncode == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if "word-stats" in ln)
    assert "project" in line and "[1 action]" in line


def test_the_skills_subcommand_shows_validates_and_runs(skill_project: Path) -> None:
    home = skill_project.parent / "home"

    shown = skillkit("skills", "show", "word-stats", cwd=skill_project, home=home)
    assert shown.returncode == 0, shown.stderr
    assert "action count:" in shown.stdout

    checked = skillkit("skills", "validate", ".skillkit/skills", cwd=skill_project, home=home)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 skill file(s) checked" in checked.stdout

    ran = skillkit(
        "skills", "run", "word-stats", "count", "notes.txt", "--json",
        cwd=skill_project, home=home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    output = json.loads(json.loads(ran.stdout)["stdout"])
    assert output["words"] == 5 and output["top"][0] == ["the", 2]


def test_the_model_is_offered_the_project_skills(skill_project: Path) -> None:
    script = """\
replies:
  - tool_calls:
      - {name: skill, arguments: {name: word-stats}}
  - text: Done.
"""
    result = run_script(skill_project, script)

    assert result.returncode == 0, result.stderr
    is_error, text = tool_results(result)["skill"]
    assert not is_error and '<skill_content name="word-stats"' in text


def test_the_write_file_example_script_behaves_as_documented(work: Path) -> None:
    model = f"scripted:{ROOT / 'examples/scripts/write_file.yaml'}"
    home = work.parent / "home"

    denied = skillkit("-p", "Create hello.txt", "--model", model, cwd=work, home=home)
    assert denied.returncode == 0
    assert "--allow 'write(hello.txt)'" in denied.stderr
    assert not (work / "hello.txt").exists()

    allowed = skillkit(
        "-p", "Create hello.txt", "--model", model, "--allow", "write(*.txt)", cwd=work, home=home
    )
    assert allowed.returncode == 0 and allowed.stderr == ""
    assert (work / "hello.txt").read_text() == "Hello from SkillKit\n"
