"""``terminal/*``: the bash tool's commands run in the editor's terminal, still sandboxed."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from skillkit.acp.terminals import ClientTerminals, sandboxed_argv
from skillkit.runtime.bash import BashRuntime
from skillkit.runtime.process import TAG_VARIABLE
from skillkit.runtime.sandbox import Sandbox, find_bubblewrap
from skillkit.tools.base import tool_schema
from skillkit.tools.builtin.bash import BashTool
from skillkit.tools.builtin.workspace import Workspace
from tests.acp.conftest import TerminalEditor, allow, running

pytestmark = pytest.mark.timeout(90)

needs_bwrap = pytest.mark.skipif(
    isinstance(find_bubblewrap(), str), reason="no usable bubblewrap here"
)


def shell(*commands: str) -> str:
    replies = [{"tool_calls": [{"name": "bash", "arguments": {"command": c}}]} for c in commands]
    return json.dumps({"replies": [*replies, {"text": "Done."}]})


def without_polls(editor: TerminalEditor) -> list[str]:
    """The ``terminal/*`` methods called, less the reads of the output made while the
    command ran (the one read for the result, just before the release, is kept)."""
    methods = [m for m, _ in editor.calls]
    return [m for i, m in enumerate(methods) if m != "output" or methods[i + 1 :] == ["release"]]


def ended(editor: TerminalEditor) -> list[object]:
    return [u for u in editor.of("tool_call_update") if u.status in ("completed", "failed")]


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder the user may write, outside the workspace and outside the host's /tmp
    (which a sandboxed command sees replaced by a private one)."""
    folder = Path(tempfile.mkdtemp(prefix="skillkit-acp-outside-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_bwrap
async def test_the_editor_runs_the_sandboxed_command_line(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # secrets in the editor's environment and (inherited) in SkillKit's
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-secret-1")
    monkeypatch.setenv("DEPLOY_TOKEN", "secret-2")
    editor = TerminalEditor(answer=allow("allow"))
    script = shell("echo made-in-the-terminal > note.txt && cat note.txt && env")
    async with running(work, script, "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    [(command, args, cwd)] = editor.created
    assert Path(command).name == "bwrap"
    assert "--unshare-pid" in args and "--clearenv" in args
    end = args.index("--")
    assert args[end + 2 :] == ["-c", "echo made-in-the-terminal > note.txt && cat note.txt && env"]
    assert cwd == str(work)
    # the secrets of SkillKit's environment are not set inside the sandbox
    settings = [args[i + 1] for i, a in enumerate(args[:end]) if a == "--setenv"]
    assert "HOME" in settings
    assert "SOME_SERVICE_API_KEY" not in settings and "DEPLOY_TOKEN" not in settings
    assert "secret-" not in " ".join(args)
    # the editor really ran it: the file is in the workspace
    assert (work / "note.txt").read_text() == "made-in-the-terminal\n"
    [done] = ended(editor)
    assert done.status == "completed"
    assert [c.type for c in done.content] == ["terminal"]
    assert done.content[0].terminal_id == "term-1"
    assert "made-in-the-terminal" in done.raw_output["output"]
    # the editor's own environment (which has them) did not reach the command
    assert "secret-" not in done.raw_output["output"]
    assert "HOME=" in done.raw_output["output"]
    embedded = [
        u
        for u in editor.of("tool_call_update")
        if u.content and u.content[0].type == "terminal" and u.status is None
    ]
    assert embedded and embedded[0].tool_call_id == done.tool_call_id
    [started] = editor.of("tool_call")
    assert editor.updates.index(started) < editor.updates.index(embedded[0])
    assert without_polls(editor) == ["create", "wait_for_exit", "output", "release"]
    # bubblewrap itself carries the call's process tag (nothing else is asked for)
    [asked] = editor.environments
    assert list(asked) == [TAG_VARIABLE] and asked[TAG_VARIABLE] in " ".join(args)


@needs_bwrap
async def test_a_write_outside_the_workspace_is_still_refused(work: Path, outside: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    target = outside / "escaped.txt"
    script = shell(f"echo out > {target}")
    async with running(work, script, "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert editor.permissions  # the gate asked first, as it does without terminals
    assert next(m for m, _ in editor.calls) == "create"
    assert not target.exists()
    [done] = ended(editor)
    assert done.status == "failed"
    assert "Read-only file system" in done.raw_output["output"]


@needs_bwrap
async def test_a_failing_command_reports_its_exit_code(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    async with running(
        work, shell("echo bad >&2; exit 3"), "--sandbox", "auto", editor=editor
    ) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    [done] = ended(editor)
    assert done.status == "failed"
    assert "bad" in done.raw_output["output"] and "[exit code 3]" in done.raw_output["output"]


@needs_bwrap
async def test_cancel_kills_the_terminal(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    async with running(work, shell("sleep 60"), "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        prompt = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
        )
        async with asyncio.timeout(30):
            await editor.started.wait()
        await agent.conn.cancel(session_id=sid)
        answer = await asyncio.wait_for(prompt, 30)
    assert answer.stop_reason == "cancelled"
    methods = [m for m, _ in editor.calls]
    assert "kill" in methods and methods[-1] == "release"
    assert editor.running() == []


@needs_bwrap
async def test_the_tools_timeout_kills_the_terminal(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    script = json.dumps(
        {
            "replies": [
                {
                    "tool_calls": [
                        {"name": "bash", "arguments": {"command": "sleep 60", "timeout": 1}}
                    ]
                },
                {"text": "Done."},
            ]
        }
    )
    async with running(work, script, "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    [done] = ended(editor)
    assert done.status == "failed" and "timed out after 1s" in done.raw_output["output"]
    assert without_polls(editor) == ["create", "wait_for_exit", "kill", "output", "release"]
    methods = [m for m, _ in editor.calls]
    assert methods[methods.index("kill") :] == ["kill", "output", "release"]  # no poll after
    assert editor.running() == []


async def test_without_the_capability_no_terminal_is_asked_for(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    async with running(
        work, shell("echo from-skillkit"), "--sandbox", "auto", editor=editor
    ) as agent:
        sid = await agent.session(terminal=False)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert editor.calls == []
    [done] = ended(editor)
    assert "from-skillkit" in done.raw_output["output"]


async def test_without_a_sandbox_the_command_stays_in_skillkit(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    async with running(work, shell("echo unsandboxed"), "--sandbox", "off", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert editor.calls == []
    [done] = ended(editor)
    assert "unsandboxed" in done.raw_output["output"]
    assert (
        "not the editor's terminal: no sandbox is in force"
        in (work.parent / "stderr.log").read_text()
    )


async def test_without_bwrap_the_command_stays_in_skillkit(work: Path) -> None:
    empty = work.parent / "bin"  # a PATH with what the session needs, but no bwrap
    empty.mkdir()
    for program in ("git", "bash"):
        found = shutil.which(program)
        assert found is not None
        (empty / program).symlink_to(found)
    editor = TerminalEditor(answer=allow("allow"))
    script = shell("echo no-bwrap-here")
    environ = {"PATH": str(empty)}
    async with running(work, script, "--sandbox", "auto", editor=editor, environ=environ) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert editor.calls == []
    [done] = ended(editor)
    assert "no-bwrap-here" in done.raw_output["output"]
    assert "bwrap not found" in (work.parent / "stderr.log").read_text()


@needs_bwrap
async def test_background_commands_stay_in_skillkit(work: Path) -> None:
    editor = TerminalEditor(answer=allow("allow"))
    script = json.dumps(
        {
            "replies": [
                {
                    "tool_calls": [
                        {
                            "name": "bash",
                            "arguments": {"command": "echo bg", "run_in_background": True},
                        }
                    ]
                },
                {"text": "Done."},
            ]
        }
    )
    async with running(work, script, "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    assert editor.calls == []
    [done] = ended(editor)
    assert "background task" in done.raw_output["output"]


class _FailingEditor(TerminalEditor):
    async def create_terminal(self, session_id: str, command: str, **kw: object) -> Any:
        self.calls.append(("create", ""))
        raise RuntimeError("no terminal for you")


@needs_bwrap
async def test_an_editor_that_cannot_start_a_terminal_fails_the_call(work: Path) -> None:
    editor = _FailingEditor(answer=allow("allow"))
    async with running(work, shell("touch made.txt"), "--sandbox", "auto", editor=editor) as agent:
        sid = await agent.session(terminal=True)
        await agent.conn.prompt(session_id=sid, prompt=[text_block("run it")])
    [done] = ended(editor)
    assert done.status == "failed"
    assert "the editor could not start a terminal" in done.raw_output["output"]
    assert not (work / "made.txt").exists()  # no silent run outside the editor


class _Wrapping(Sandbox):
    """A sandbox in force whose wrap adds ``extra`` options."""

    def __init__(self, extra: list[str]) -> None:
        super().__init__(mode="auto")
        self.extra = extra

    @property
    def active(self) -> bool:
        return True

    def wrap(self, argv: Any, **kw: Any) -> list[str]:
        return ["/usr/bin/bwrap", "--unshare-pid", *self.extra, "--chdir", "/w", "--", *argv]


def test_the_environment_is_set_inside_the_sandbox_only() -> None:
    argv = sandboxed_argv(
        _Wrapping([]), "bash", "ls", cwd="/w", confinement=None, environ={"A": "1", "B": "2"}
    )
    assert argv == [
        "/usr/bin/bwrap",
        "--clearenv",
        "--setenv",
        "A",
        "1",
        "--setenv",
        "B",
        "2",
        "--unshare-pid",
        "--chdir",
        "/w",
        "--",
        "bash",
        "-c",
        "ls",
    ]


@pytest.mark.parametrize("option", ["--sync-fd", "--args", "--seccomp", "--info-fd"])
def test_a_command_line_with_file_descriptors_is_not_handed_over(option: str) -> None:
    reason = sandboxed_argv(
        _Wrapping([option, "3"]), "bash", "ls", cwd="/w", confinement=None, environ={}
    )
    assert isinstance(reason, str) and option in reason


def test_without_a_sandbox_in_force_nothing_is_handed_over() -> None:
    reason = sandboxed_argv(
        Sandbox.disabled(), "bash", "ls", cwd="/w", confinement=None, environ={}
    )
    assert reason == "no sandbox is in force (none (off))"


def test_the_model_is_shown_the_same_bash_tool(tmp_path: Path) -> None:
    local = BashTool(Workspace(tmp_path), BashRuntime(sandbox=Sandbox.disabled()))
    [offered] = ClientTerminals(local, _Unused(), lambda call, terminal: None).tools()
    assert offered is not local and offered.name == "bash"
    assert tool_schema(offered) == tool_schema(local)
    assert getattr(offered, "workspace", None) is local.workspace


def test_a_bash_tool_of_another_runtime_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    class Other:
        name = "bash"

    assert ClientTerminals(Other(), _Unused(), lambda call, terminal: None).tools() == []  # type: ignore[arg-type]
    assert "not run them through SkillKit's shell runtime" in caplog.text


class _Unused:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"terminal/{name} was called")
