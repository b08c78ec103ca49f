"""The interactive session in process, typing through a prompt_toolkit pipe: what the
model receives for /skill:NAME, and answers given through the permissions API."""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.frontends.interactive import InteractiveSession
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.models import ToolResultMessage, UserMessage
from skillkit.permissions import PermissionGate, install
from skillkit.skills.registry import SkillRegistry
from skillkit.tools.builtin import builtin_tools
from tests.frontends.faces import manager_over, session_of

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(30)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll ``condition`` until it holds; fail after ``seconds``."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def test_slash_skill_sends_the_activation_message_as_the_user_message(
    tmp_path: Path,
) -> None:
    shutil.copytree(ROOT / "examples/skills/word-stats", tmp_path / ".skillkit/skills/word-stats")
    registry = SkillRegistry(cwd=tmp_path, home=tmp_path / "home")
    registry.load()
    adapter = ScriptedAdapter([Reply(text="Counted.")])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter, contributors=[registry])
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=100))
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = InteractiveSession(
            session_of(runner, manager=manager_over(registry)), renderer, watch_skills=False
        )
        task = asyncio.ensure_future(session.run())
        pipe.send_text("/skill:word-stats notes.txt\r")
        await until(lambda: bool(adapter.requests))
        pipe.send_text("/quit\r")
        assert await asyncio.wait_for(task, 10) == 0

    sent = adapter.requests[0].messages[-1]
    assert isinstance(sent, UserMessage)
    assert sent.content == registry.activation_message("word-stats", "notes.txt")
    assert '<skill_content name="word-stats"' in sent.content
    assert "using skill word-stats" in out.getvalue()
    assert "Counted." in out.getvalue()


async def test_a_denial_typed_at_the_approval_prompt_reaches_the_model(tmp_path: Path) -> None:
    adapter = ScriptedAdapter(
        [
            Reply(tool_calls=[("bash", {"command": "echo hi > out.txt"})]),
            Reply(text="Understood."),
        ]
    )
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=100))
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = InteractiveSession(session_of(runner, permissions=permissions), renderer)
        task = asyncio.ensure_future(session.run())
        pipe.send_text("write it\r")
        await until(lambda: bool(permissions.approvals.pending()))
        pipe.send_text("n")
        pipe.send_text("use python instead\r")
        await until(lambda: len(adapter.requests) == 2)
        pipe.send_text("/quit\r")
        assert await asyncio.wait_for(task, 10) == 0

    result = adapter.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert result.text == (
        "The user denied this bash call; it was not run. Their message: use python instead"
    )
    assert not (tmp_path / "out.txt").exists()
    assert "approval needed bash" in out.getvalue()


async def test_shift_tab_cycles_the_mode_through_the_permissions_api(tmp_path: Path) -> None:
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]))
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    changes: list[tuple[str, str]] = []
    runner.events.on("mode_changed", lambda e: changes.append((e.prev_mode, e.mode)))
    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = InteractiveSession(
            session_of(runner, permissions=permissions),
            TerminalRenderer(Console(file=out, width=100)),
        )
        task = asyncio.ensure_future(session.run())
        pipe.send_text("\x1b[Z")  # Shift+Tab
        await until(lambda: len(changes) == 1)
        pipe.send_text("\x1b[Z")
        await until(lambda: len(changes) == 2)
        pipe.send_text("/mode default\r/quit\r")
        assert await asyncio.wait_for(task, 10) == 0

    assert changes == [
        ("default", "accept_edits"),
        ("accept_edits", "plan"),
        ("plan", "default"),
    ]
    assert "⏵ mode plan" in out.getvalue()


async def test_a_request_the_terminal_cannot_ask_about_is_denied_not_left_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillkit.frontends import answers

    async def broken(request: object) -> None:
        raise OSError("the terminal went away")

    monkeypatch.setattr(answers, "ask_approval", broken)
    adapter = ScriptedAdapter(
        [Reply(tool_calls=[("bash", {"command": "touch x"})]), Reply(text="Done.")]
    )
    runner = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = InteractiveSession(
            session_of(runner, permissions=permissions),
            TerminalRenderer(Console(file=out, width=100)),
        )
        task = asyncio.ensure_future(session.run())
        pipe.send_text("go\r")
        await until(lambda: len(adapter.requests) == 2)
        pipe.send_text("/quit\r")
        assert await asyncio.wait_for(task, 10) == 0

    result = adapter.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert result.text == "Not run: the terminal could not ask the user."
    assert "could not ask: OSError('the terminal went away')" in out.getvalue()
    assert not (tmp_path / "x").exists()


async def test_commands_come_from_the_managers_registry_and_other_lines_reach_the_model(
    tmp_path: Path,
) -> None:
    from skillkit.extensions import Command, PluginManager, Registries, hookimpl

    class Greeter:
        @hookimpl
        def skillkit_register_commands(self, registry: object) -> None:
            hello = Command("hello", "greet", lambda ctx, args: f"hello, {args}")
            registry.register(hello)  # type: ignore[attr-defined]

    manager = PluginManager(Registries())
    manager.load_builtin(workspace=tmp_path, tools=False)
    manager.register(Greeter(), "greeter")
    adapter = ScriptedAdapter([Reply(text="Seen.")])
    runner = AgentRunner(AgentConfig(model="scripted"), adapter=adapter)
    manager.attach(runner)
    out = io.StringIO()
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = InteractiveSession(
            session_of(runner, manager=manager), TerminalRenderer(Console(file=out, width=100))
        )
        task = asyncio.ensure_future(session.run())
        pipe.send_text("/hello Ada\r/nope\r/usr/bin/env is a path\r")
        await until(lambda: bool(adapter.requests))
        pipe.send_text("/exit\r")
        assert await asyncio.wait_for(task, 10) == 0

    shown = out.getvalue()
    assert "hello, Ada" in shown
    assert "unknown command /nope" in shown
    sent = adapter.requests[0].messages[-1]
    assert isinstance(sent, UserMessage) and sent.content == "/usr/bin/env is a path"
    assert manager.registries.commands.source_of("help") == "builtin"  # put back on exit
