"""Deterministic actions: declarations, exact argument passing, timeouts, abort, tools."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from skillkit.abort import AbortSignal
from skillkit.runtime.sandbox import Bubblewrap, Sandbox, find_bubblewrap
from skillkit.skills.actions import ActionError, parse_command_arguments
from skillkit.skills.diagnostics import SkillError
from skillkit.skills.loader import Skill, parse_skill
from skillkit.skills.registry import SkillRegistry
from skillkit.skills.runner import ActionTool, action_tool_name, run_action
from skillkit.tools.base import ToolContext, ToolError
from tests.conftest import host_folder_outside_tmp
from tests.runtime.escapes import (
    escaping_command,
    processes_running,
    reaping,
    unique_seconds,
    wait_until_gone,
    wait_until_running,
)

FOUND = find_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)

ECHO_ARGS = "import json, sys; print(json.dumps(sys.argv[1:]))"


def action_skill(tmp_path: Path, actions: str, name: str = "kit", strict: bool = True) -> Skill:
    text = (
        f"---\nname: {name}\ndescription: Test kit.\nmetadata:\n  skillkit:\n    actions:\n"
        + "\n".join("      " + line for line in actions.strip("\n").splitlines())
        + "\n---\nBody\n"
    )
    path = tmp_path / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return parse_skill(path, strict=strict)


def echo_skill(tmp_path: Path) -> Skill:
    py = json.dumps(sys.executable)
    return action_skill(
        tmp_path,
        f"""
echo:
  description: Print the arguments as JSON
  params:
    text: {{type: string, description: Any text}}
    count: {{type: integer, default: 1, flag: --count}}
    loud: {{type: boolean, default: false, flag: --loud}}
    tags: {{type: array, required: false}}
    mode: {{type: string, enum: [fast, slow], default: fast}}
  command: [{py}, -c, {json.dumps(ECHO_ARGS)}, "--mode={{mode}}", "{{text}}"]
""",
    )


async def run(skill: Skill, action: str, values: dict[str, Any], **kw: Any) -> Any:
    spec = skill.action(action)
    assert spec is not None
    return await run_action(skill.name, spec, values, project_dir=skill.base_dir, **kw)


HOSTILE = [
    "; rm -rf ~",
    "$(touch /tmp/skillkit-pwned)",
    "`id`",
    "a'b\"c",
    "line one\nline two",
    "$HOME && echo hi | cat > x",
    "*",
    "--help",
    " spaced  ",
    "",
]


@pytest.mark.parametrize("value", HOSTILE)
async def test_hostile_values_are_passed_literally_as_one_argument(
    tmp_path: Path, value: str
) -> None:
    result = await run(echo_skill(tmp_path), "echo", {"text": value})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == ["--mode=fast", value, "--count", "1"]
    assert not _exists("/tmp/skillkit-pwned")


def _exists(path: str) -> bool:
    return Path(path).exists()


async def test_flags_lists_and_booleans(tmp_path: Path) -> None:
    result = await run(
        echo_skill(tmp_path),
        "echo",
        {"text": "t", "count": "3", "loud": True, "tags": ["a b", "c"], "mode": "slow"},
    )
    assert json.loads(result.stdout) == ["--mode=slow", "t", "--count", "3", "--loud", "a b", "c"]
    assert result.argv[-7:] == ("--mode=slow", "t", "--count", "3", "--loud", "a b", "c")


async def test_invalid_arguments_are_refused_before_anything_runs(tmp_path: Path) -> None:
    skill = echo_skill(tmp_path)
    with pytest.raises(ActionError, match=r"action 'echo': text: Field required"):
        await run(skill, "echo", {})
    with pytest.raises(ActionError, match=r"count: Input should be a valid integer"):
        await run(skill, "echo", {"text": "x", "count": "many"})
    with pytest.raises(ActionError, match=r"mode: Input should be 'fast' or 'slow'"):
        await run(skill, "echo", {"text": "x", "mode": "medium"})
    with pytest.raises(ActionError, match=r"extra: Extra inputs are not permitted"):
        await run(skill, "echo", {"text": "x", "extra": 1})
    with pytest.raises(ActionError, match=r"text: Value error, must not contain a NUL"):
        await run(skill, "echo", {"text": "a\x00b"})


async def test_exit_code_and_stderr_are_returned(tmp_path: Path) -> None:
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    skill = action_skill(
        tmp_path,
        f"fail:\n  description: Fail\n"
        f"  command: [{json.dumps(sys.executable)}, -c, {json.dumps(code)}]",
    )
    result = await run(skill, "fail", {})
    assert (result.exit_code, result.stdout, result.stderr, result.ok) == (
        3,
        "out\n",
        "err\n",
        False,
    )
    assert "kit/fail: exit code 3" in result.to_text()


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    # A shell prints "started" at once, on a busy machine too (a Python child may not
    # have started within the timeout there); its background sleep is the grandchild.
    script = f"sleep 60 & echo $! > '{marker}'; echo started; sleep 60"
    skill = action_skill(
        tmp_path,
        f"hang:\n  description: Hang\n  timeout: 2\n  command: [/bin/sh, -c, {json.dumps(script)}]",
    )
    # Unconfined: the test follows a printed pid (inside the sandbox it is a namespace pid).
    result = await asyncio.wait_for(run(skill, "hang", {}, sandbox=Sandbox.disabled()), 20)
    assert result.timed_out and result.exit_code is None and not result.ok
    assert result.stdout == "started\n"
    grandchild = int(marker.read_text())
    async with asyncio.timeout(10):  # killed with its group; gone once the kernel says so
        while _alive(grandchild):  # noqa: ASYNC110
            await asyncio.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie awaiting its parent's reaping is dead for our purpose
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return True


async def test_abort_stops_the_action(tmp_path: Path) -> None:
    skill = action_skill(
        tmp_path,
        f"sleep:\n  description: Sleep\n"
        f"  command: [{json.dumps(sys.executable)}, -c, 'import time; time.sleep(60)']",
    )
    abort = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, abort.abort)
    result = await asyncio.wait_for(run(skill, "sleep", {}, abort=abort), timeout=20)
    assert result.aborted and result.summary() == "aborted (process group killed)"


async def test_output_streams_to_the_callback(tmp_path: Path) -> None:
    seen: list[str] = []
    result = await run(echo_skill(tmp_path), "echo", {"text": "hello"}, on_output=seen.append)
    assert "".join(seen) == result.stdout


async def test_a_script_in_the_skill_folder_runs_with_its_interpreter(tmp_path: Path) -> None:
    folder = tmp_path / "kit" / "scripts"
    folder.mkdir(parents=True)
    (folder / "show.py").write_text(
        "import json, os, sys\n"
        "print(json.dumps([os.getcwd(), os.environ['SKILLKIT_SKILL_DIR'], sys.argv[1:]]))\n"
    )
    skill = action_skill(
        tmp_path,
        "show:\n  description: Show\n  script: scripts/show.py\n  cwd: skill\n"
        "  params:\n    word: string",
    )
    result = await run(skill, "show", {"word": "$(x)"})
    cwd, skill_dir, argv = json.loads(result.stdout)
    assert Path(cwd) == skill.base_dir and Path(skill_dir) == skill.base_dir
    assert argv == ["$(x)"]


async def test_a_missing_command_is_an_action_error(tmp_path: Path) -> None:
    skill = action_skill(
        tmp_path, "ghost:\n  description: G\n  command: [surely-not-a-command-xyz]"
    )
    with pytest.raises(ActionError, match="command not found: surely-not-a-command-xyz"):
        await run(skill, "ghost", {})


# --------------------------------------------------------------------------- declarations

BAD_DECLARATIONS = [
    ("x:\n  description: X\n  command: 'rm -rf /'", "command: must be an argument list"),
    ("x:\n  description: X", "needs exactly one of 'command' (an argument list) or 'script'"),
    ("x:\n  command: [ls]", "x.description: is required text"),
    (
        "x:\n  description: X\n  command: [ls, '{nope}']",
        "placeholder '{nope}' does not name a declared parameter",
    ),
    (
        "x:\n  description: X\n  command: ['{p}']\n  params: {p: string}",
        "the program itself cannot be a placeholder",
    ),
    ("x:\n  description: X\n  script: ../outside.py", "script: must stay inside the skill folder"),
    ("x:\n  description: X\n  script: missing.py", "script: file not found: missing.py"),
    (
        "x:\n  description: X\n  command: [ls]\n  timeout: -1",
        "timeout: must be a number of seconds",
    ),
    (
        "x:\n  description: X\n  command: [ls]\n  cwd: /etc",
        "cwd: must stay inside the skill folder",
    ),
    (
        "x:\n  description: X\n  command: [ls]\n  params: {p: {type: dict}}",
        "p.type: must be one of string",
    ),
    (
        "x:\n  description: X\n  command: [ls]\n  params: {_p: string}",
        "parameter names start with a letter",
    ),
    ("Bad Name:\n  description: X\n  command: [ls]", "action names use lowercase letters"),
    ("x:\n  description: X\n  command: [ls]\n  shell: true", "x.shell: unknown key"),
    (
        "x:\n  description: X\n  command: [ls, '-a={p}']\n  params: {p: {type: array}}",
        "is a list or a flag and must stand alone",
    ),
]


@pytest.mark.parametrize(("declaration", "message"), BAD_DECLARATIONS)
def test_bad_declarations_are_errors_when_strict_and_skipped_when_lenient(
    tmp_path: Path, declaration: str, message: str
) -> None:
    with pytest.raises(SkillError) as info:
        action_skill(tmp_path, declaration)
    assert any(
        message in str(e) and "metadata.skillkit.actions." in str(e) for e in info.value.errors
    ), info.value
    skill = action_skill(tmp_path, declaration, strict=False)
    assert skill.actions == ()
    assert any("action skipped" in str(w) for w in skill.warnings)


def test_command_line_arguments(tmp_path: Path) -> None:
    spec = echo_skill(tmp_path).action("echo")
    assert spec is not None
    assert parse_command_arguments(spec, ["hello", "count=2", "tags=a", "tags=b"]) == {
        "text": "hello",
        "count": "2",
        "tags": ["a", "b"],
    }
    assert spec.validate(parse_command_arguments(spec, ["text=x=y", "loud=true"])) == {
        "text": "x=y",
        "count": 1,
        "loud": True,
        "tags": None,
        "mode": "fast",
    }
    with pytest.raises(ActionError, match="argument 'text' given twice"):
        parse_command_arguments(spec, ["text=a", "text=b"])


def test_tool_names_are_safe_for_every_provider() -> None:
    assert action_tool_name("git-helper", "log") == "git-helper__log"
    long = action_tool_name("s" * 64, "a" * 64)
    assert len(long) == 64 and long.startswith("s" * 55)
    assert action_tool_name("données", "go").startswith("donn_es__go_")


async def test_action_tool_returns_a_result_the_model_can_read(tmp_path: Path) -> None:
    skill = echo_skill(tmp_path)
    spec = skill.action("echo")
    assert spec is not None
    tool = ActionTool(skill.name, spec, tmp_path)
    schema = tool.args_model.model_json_schema()
    assert schema["required"] == ["text"]
    assert schema["properties"]["mode"]["enum"] == ["fast", "slow"]
    args = tool.args_model.model_validate({"text": "; ls"})
    result = await tool.execute(args, ToolContext("call_1", tool.name))
    assert not result.is_error
    assert result.details["argv"][-4:] == ["--mode=fast", "; ls", "--count", "1"]
    assert result.output.startswith("kit/echo: exit code 0\n--- stdout ---\n")


async def test_action_tool_turns_start_failures_into_tool_errors(tmp_path: Path) -> None:
    skill = action_skill(
        tmp_path, "ghost:\n  description: G\n  command: [surely-not-a-command-xyz]"
    )
    tool = ActionTool(skill.name, skill.actions[0], tmp_path)
    with pytest.raises(ToolError, match="command not found"):
        await tool.execute(tool.args_model.model_validate({}), ToolContext("c", tool.name))


async def test_registry_runs_actions_without_a_model(project: Path, home: Path) -> None:
    echo_skill(project / ".agents/skills")
    reg = SkillRegistry(cwd=project, home=home)
    reg.load()
    result = await reg.run_action("kit", "echo", {"text": "x"})
    assert json.loads(result.stdout) == ["--mode=fast", "x", "--count", "1"]
    with pytest.raises(LookupError, match=r"skill 'kit' has no action 'nope' \(actions: echo\)"):
        await reg.run_action("kit", "nope")


# --------------------------------------------------------------------------- confinement

SANDBOXES = [
    pytest.param("off", id="unconfined"),
    pytest.param("bwrap", id="bubblewrap", marks=needs_bwrap),
]


def make_sandbox(kind: str, project: Path) -> Sandbox:
    return Sandbox.disabled() if kind == "off" else Sandbox(mode="on", workspace=project)


def bash_skill(tmp_path: Path, script: str, timeout: float = 60) -> Skill:
    return action_skill(
        tmp_path,
        f"go:\n  description: Run\n  timeout: {timeout}\n"
        f"  command: [bash, -c, {json.dumps(script)}]",
    )


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_setsid_child_holding_the_pipes_does_not_stretch_the_timeout(
    tmp_path: Path, kind: str
) -> None:
    seconds = unique_seconds()
    # long enough for a busy machine to start the sandbox and print "spawned" first
    skill = bash_skill(tmp_path, escaping_command(seconds) + "; sleep 300", timeout=3)
    with reaping(seconds):
        result = await asyncio.wait_for(
            run(skill, "go", {}, sandbox=make_sandbox(kind, skill.base_dir)), 20
        )
        assert result.timed_out and result.exit_code is None
        assert result.stdout == "spawned\n"
        assert await wait_until_gone(seconds) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_an_action_leaves_no_process_behind(tmp_path: Path, kind: str) -> None:
    seconds = unique_seconds()
    skill = bash_skill(tmp_path, escaping_command(seconds))
    with reaping(seconds):
        result = await asyncio.wait_for(
            run(skill, "go", {}, sandbox=make_sandbox(kind, skill.base_dir)), 20
        )
        assert result.ok and result.stdout == "spawned\n"
        assert processes_running(seconds) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_abort_reaches_an_escaped_child_of_an_action(tmp_path: Path, kind: str) -> None:
    seconds = unique_seconds()
    skill = bash_skill(tmp_path, escaping_command(seconds) + "; sleep 300")
    abort = AbortSignal()
    with reaping(seconds):
        call = asyncio.create_task(
            run(skill, "go", {}, sandbox=make_sandbox(kind, skill.base_dir), abort=abort)
        )
        await wait_until_running(seconds)
        abort.abort()
        result = await asyncio.wait_for(call, 20)
        assert result.aborted
        assert await wait_until_gone(seconds) == []


@needs_bwrap
async def test_a_sandboxed_action_writes_only_in_the_project(tmp_path: Path) -> None:
    outside = host_folder_outside_tmp() / f".skillkit-action-probe-{os.getpid()}"
    skill = bash_skill(tmp_path, f"echo in > made.txt; echo out > {outside}")
    try:
        result = await run(skill, "go", {}, sandbox=Sandbox(mode="on", workspace=skill.base_dir))
    finally:
        leaked = outside.exists()
        outside.unlink(missing_ok=True)
    assert (skill.base_dir / "made.txt").read_text() == "in\n"
    assert not leaked and "Read-only file system" in result.stderr


async def test_sandbox_on_without_bubblewrap_is_an_action_error(tmp_path: Path) -> None:
    empty = tmp_path / "no-bwrap"
    empty.mkdir()
    skill = bash_skill(tmp_path, "touch ran")
    sandbox = Sandbox(mode="on", workspace=skill.base_dir, bwrap_path=str(empty))
    with pytest.raises(ActionError, match="sandbox is on but unavailable: bwrap not found"):
        await run(skill, "go", {}, sandbox=sandbox)
    assert not (skill.base_dir / "ran").exists()
