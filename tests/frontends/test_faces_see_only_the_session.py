"""Faces see only `AgentSession`: no face module imports the runner, and every face
reaches the same commands through the session's one table."""

from __future__ import annotations

import ast
import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.commands import Argument, Command, CommandContext
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.builtin import JsonFrontend, PrintFrontend
from skillkit.frontends.commands import TerminalCommands
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.permissions import PermissionGate, install
from tests.frontends.faces import session_of

SRC = Path(__file__).resolve().parents[2] / "src" / "skillkit"
ASSEMBLY_AND_SESSION = {
    SRC / "frontends" / "setup.py",  # the assembly: builds the runner
    SRC / "frontends" / "setup_parts.py",  # the assembly's parts, attached to that runner
    SRC / "frontends" / "handoff_setup.py",  # ... its handoff targets, built beside it
    SRC / "frontends" / "agent_session.py",  # the session: the one that holds it
    SRC / "frontends" / "session_build.py",  # ... how it is made (from_agent, from_runner)
    SRC / "frontends" / "session_runs.py",  # ... its runs, paused runs and budget
    SRC / "frontends" / "session_history.py",  # ... compact, fork, checkpoints
}
pytestmark = pytest.mark.timeout(30)


def face_modules() -> list[Path]:
    faces = [
        *(SRC / "frontends").glob("*.py"),
        *(SRC / "rpc").glob("*.py"),
        *(SRC / "serve").glob("*.py"),
        SRC / "cli.py",
    ]
    return sorted(p for p in faces if p not in ASSEMBLY_AND_SESSION)


def runner_imports(path: Path) -> list[str]:
    """Each import of the runner in ``path`` (type-checking imports too), as text."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {alias.name for alias in node.names}
            if module == "skillkit.agent.runner" or "AgentRunner" in names:
                found.append(f"{path.name}:{node.lineno}: from {module} import {names}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "skillkit.agent.runner":
                    found.append(f"{path.name}:{node.lineno}: import {alias.name}")
    return found


def test_no_face_module_imports_the_runner() -> None:
    modules = face_modules()
    assert len(modules) > 15 and SRC / "cli.py" in modules
    offenders = [line for path in modules for line in runner_imports(path)]
    assert offenders == []


def test_the_guard_finds_a_face_that_imports_the_runner(tmp_path: Path) -> None:
    face = tmp_path / "face.py"
    face.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from skillkit.agent.runner import AgentRunner\n"
        "from skillkit import AgentRunner, tool\n"
    )
    assert len(runner_imports(face)) == 2


def _runner(*replies: Reply) -> AgentRunner:
    return AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter(list(replies)))


async def test_a_plugin_command_is_one_entry_every_face_reaches(tmp_path: Path) -> None:
    calls: list[object] = []

    def shout(ctx: CommandContext, values: dict[str, object]) -> dict[str, object]:
        calls.append(values)
        text = str(values["text"])
        times = values.get("times", 1)
        assert isinstance(times, int)
        return {"said": " ".join([text.upper()] * times)}

    session = session_of(_runner())
    session.commands.register(
        Command(
            "shout",
            "say it loud",
            shout,
            arguments=(
                Argument("times", kind="integer"),
                Argument("text", required=True, rest=True),
            ),
        ),
        source="plugin:loud",
    )
    typed = await session.run_command("/shout 2 hello there")
    assert typed is not None and typed.data == {"said": "HELLO THERE HELLO THERE"}
    sent = await session.handle({"type": "shout", "id": "1", "text": "hi"})
    assert sent == {
        "type": "response",
        "id": "1",
        "command": "shout",
        "success": True,
        "data": {"said": "HI"},
    }
    bad = await session.handle({"type": "shout", "text": "hi", "times": "two"})
    assert bad["success"] is False and "'times' must be a whole number" in str(bad["error"])
    listed = await session.handle({"type": "get_commands"})
    entries = {c["name"]: c for c in listed["data"]["commands"]}  # type: ignore[index]
    assert entries["shout"]["source"] == "plugin:loud"
    assert [a["name"] for a in entries["shout"]["arguments"]] == ["times", "text"]
    assert {"prompt", "set_mode", "compact", "fork", "help"} <= set(entries)
    shown = await session.run_command("/help")
    assert shown is not None and "/shout [TIMES] TEXT" in shown.output
    assert calls == [{"times": 2, "text": "hello there"}, {"text": "hi"}]
    await session.aclose()


async def test_set_mode_is_the_same_entry_in_the_terminal_and_over_json(tmp_path: Path) -> None:
    runner = _runner()
    permissions = install(runner, PermissionGate(workspace=tmp_path, home=tmp_path / "home"))
    session = AgentSession(runner, permissions=permissions, owns_agent=False)
    typed = await session.run_command("/set_mode plan")
    assert typed is not None and typed.data == {"mode": "plan", "previous": "default"}
    sent = await session.handle({"type": "set_mode", "mode": "accept_edits"})
    assert sent["data"] == {"mode": "accept_edits", "previous": "plan"}
    state = await session.handle({"type": "get_state"})
    assert state["data"]["mode"] == "accept_edits"  # type: ignore[index]
    await session.aclose()
    assert "set_mode" not in session.commands  # the session's entries leave with it


async def test_compact_is_written_once_and_served_to_every_face(tmp_path: Path) -> None:
    chats = [Reply(text="word " * 200) for _ in range(3)]
    replies = [*chats, Reply(text="Summary."), *chats, Reply(text="Summary.")]
    session = session_of(_runner(*replies))
    for index in range(3):
        await session.run(f"message {index} " * 50)
    compact = session.commands.get("compact")
    assert compact is not None and session.commands.source_of("compact") == "builtin"
    over_json = await session.handle({"type": "compact", "instructions": "keep numbers"})
    assert over_json["success"] is True, over_json
    assert set(over_json["data"]) == {"tokens_before", "tokens_after"}  # type: ignore[arg-type]
    for index in range(3):
        await session.run(f"again {index} " * 50)
    typed = await session.run_command("/compact")
    assert typed is not None and typed.output.startswith("compacted"), typed
    await session.aclose()


async def test_the_terminal_draws_from_the_session_stream_and_its_commands_join_the_table(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=100))
    session = session_of(_runner(Reply(text="Hello from the stream.")))
    stop = session.listen(renderer.emit)
    uninstall = TerminalCommands(renderer, session).install()
    assert session.commands.source_of("help") == "frontend:interactive"
    await session.run("hi")
    assert "Hello from the stream." in out.getvalue()
    helped = await session.run_command("/help")
    assert helped is not None and "Keys:" in helped.output
    uninstall()
    stop()
    assert session.commands.source_of("help") == "builtin"
    await session.aclose()


async def test_a_listener_that_raises_is_removed_and_the_run_goes_on() -> None:
    session = session_of(_runner(Reply(text="fine")))
    seen: list[str] = []
    session.listen(lambda event: (_ for _ in ()).throw(RuntimeError("boom")))
    session.listen(lambda event: seen.append(event.type))
    errors = session.subscribe()
    response = await session.run("go")
    assert response.text == "fine" and "agent_end" in seen
    records = [r async for r in _drain(errors)]
    assert any(r["type"] == "error" and r["payload"]["stage"] == "listener" for r in records)  # type: ignore[index]
    await session.aclose()


async def _drain(subscription):  # type: ignore[no-untyped-def]
    subscription.close()
    async for record in subscription:
        yield record


async def test_print_and_json_faces_are_handed_the_session(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    session = session_of(_runner(Reply(text="printed")))
    assert await PrintFrontend(prompt="q", out=out, err=err).run(session) == 0
    assert out.getvalue() == "printed\n"
    raw = io.BytesIO()
    session_json = session_of(_runner(Reply(text="as json")))
    assert await JsonFrontend(prompt="q", out=raw, err=err).run(session_json) == 0
    kinds = [line.split(b'"type":"')[1].split(b'"')[0] for line in raw.getvalue().splitlines()]
    assert kinds[0] == b"header" and kinds[1] == b"agent_start" and kinds[-1] == b"agent_end"
    await asyncio.gather(session.aclose(), session_json.aclose())


async def test_a_plugins_registered_command_lands_in_the_same_table(tmp_path: Path) -> None:
    from skillkit.extensions import PluginManager, Registries, hookimpl

    class Greeter:
        @hookimpl
        def skillkit_register_commands(self, registry: object) -> None:
            greet = Command("greet", "greet", lambda ctx, args: f"hello {args or 'you'}")
            registry.register(greet)  # type: ignore[attr-defined]

    manager = PluginManager(Registries())
    manager.register(Greeter(), "greeter")
    session = session_of(_runner(), manager=manager)
    assert session.commands is manager.registries.commands
    typed = await session.run_command("/greet terminal")
    assert typed is not None and typed.output == "hello terminal"
    sent = await session.handle({"type": "greet", "args": "rpc"})
    assert sent["data"] == {"output": "hello rpc"}
    listed = await session.handle({"type": "get_commands"})
    sources = {c["name"]: c["source"] for c in listed["data"]["commands"]}  # type: ignore[index]
    assert sources["greet"] == "greeter" and sources["set_mode"] == "session"
    await session.aclose()


async def test_the_never_drop_reader_keeps_what_a_bounded_one_drops() -> None:
    session = session_of(_runner(Reply(text="word " * 40)))
    bounded = session.subscribe(maxsize=3)
    unbounded = session.subscribe(maxsize=None)
    await session.run("go")
    bounded.close()
    unbounded.close()
    kept = [record["type"] async for record in unbounded]
    cut = [record["type"] async for record in bounded]
    assert "agent_start" in kept and "agent_end" in kept and "events_dropped" not in kept
    assert "events_dropped" in cut and len(cut) < len(kept)
    assert bounded.dropped > 0 and unbounded.dropped == 0
    await session.aclose()
