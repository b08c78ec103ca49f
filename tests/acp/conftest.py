"""Drive ``skillkit acp`` in a subprocess with the official SDK's client side."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

PROGRAM = (sys.executable, "-c", "import sys; from skillkit.cli import main; sys.exit(main())")

Answer = Callable[[ToolCallUpdate, list[PermissionOption]], Awaitable[Any]]


def allow(option: str) -> Answer:
    """Answer every permission request with ``option`` (an option id)."""

    async def answer(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option)
        )

    return answer


async def cancelled(tool_call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@dataclass
class Editor:
    """A scripted editor: records updates, answers permissions with ``answer``, keeps
    the files of ``buffers`` (its unsaved buffers) for ``fs/*``."""

    answer: Answer = field(default=cancelled)
    form: Callable[[str, Any], Awaitable[Any]] | None = None
    """How the editor answers a form (elicitation): (message, mode) → the response."""
    forms: list[tuple[str, Any]] = field(default_factory=list)
    buffers: dict[str, str] = field(default_factory=dict)
    updates: list[Any] = field(default_factory=list)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    incoming: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._arrived = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self._arrived.set()

    async def wait_for(self, kind: str) -> list[Any]:
        """The updates of ``kind`` once there is one (30 s at most)."""
        async with asyncio.timeout(30):
            while not self.of(kind):
                self._arrived.clear()
                await self._arrived.wait()
        return self.of(kind)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> Any:
        self.permissions.append((tool_call, options))
        return await self.answer(tool_call, options)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kw: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        lines = self.buffers[path].splitlines(keepends=True)
        first = (line or 1) - 1
        last = first + limit if limit is not None else None
        return ReadTextFileResponse(content="".join(lines[first:last]))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kw: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_elicitation(self, message: str, mode: Any, **kw: Any) -> Any:
        self.forms.append((message, mode))
        assert self.form is not None, "the editor offered no forms"
        return await self.form(message, mode)

    def on_connect(self, conn: Any) -> None:
        pass

    def of(self, kind: str) -> list[Any]:
        """The updates of kind ``kind`` (``agent_message_chunk``, ``tool_call``...)."""
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))


@dataclass
class TerminalEditor(Editor):
    """An editor with terminals: it really runs what ``terminal/create`` asks (the
    command and its arguments, as given, from the given folder) and records every
    ``terminal/*`` call in ``calls`` as (method, terminal id)."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    created: list[tuple[str, list[str], str | None]] = field(default_factory=list)
    environments: list[dict[str, str]] = field(default_factory=list)
    """The variables each ``terminal/create`` asked to set."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._procs: dict[str, asyncio.subprocess.Process] = {}
        self._output: dict[str, bytearray] = {}
        self._readers: dict[str, asyncio.Task[None]] = {}
        self.started = asyncio.Event()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: Any = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> CreateTerminalResponse:
        terminal = f"term-{len(self.created) + 1}"
        self.created.append((command, list(args or []), cwd))
        self.calls.append(("create", terminal))
        environ = dict(os.environ)  # the editor's own, with what was asked for set
        environ.update({variable.name: variable.value for variable in env or []})
        self.environments.append({variable.name: variable.value for variable in env or []})
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=environ,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        self._procs[terminal] = process
        self._output[terminal] = bytearray()
        self._readers[terminal] = asyncio.create_task(self._read(terminal, process))
        self.started.set()
        return CreateTerminalResponse(terminal_id=terminal)

    async def _read(self, terminal: str, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(4096):
            self._output[terminal] += chunk

    def _status(self, terminal: str) -> TerminalExitStatus | None:
        code = self._procs[terminal].returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("wait_for_exit", terminal_id))
        await self._procs[terminal_id].wait()
        await self._readers[terminal_id]
        status = self._status(terminal_id)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("output", terminal_id))
        text = self._output[terminal_id].decode("utf-8", "replace")
        return TerminalOutputResponse(
            output=text, truncated=False, exit_status=self._status(terminal_id)
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.calls.append(("kill", terminal_id))
        process = self._procs[terminal_id]
        if process.returncode is None:
            process.kill()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kw: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("release", terminal_id))
        process = self._procs[terminal_id]
        if process.returncode is None:
            process.kill()
        await process.wait()
        await self._readers[terminal_id]
        return ReleaseTerminalResponse()

    def running(self) -> list[str]:
        """The terminals whose process has not exited."""
        return [t for t, p in self._procs.items() if p.returncode is None]


@dataclass
class Agent:
    conn: ClientSideConnection
    editor: Editor
    process: Any
    work: Path

    async def session(
        self, *, fs: bool = False, forms: bool = False, terminal: bool = False
    ) -> str:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
            terminal=terminal,
            elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
            if forms
            else None,
        )
        await self.conn.initialize(protocol_version=1, client_capabilities=capabilities)
        made = await self.conn.new_session(cwd=str(self.work), mcp_servers=[])
        return made.session_id

    def send_raw(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    return folder


def write_script(work: Path, text: str, name: str = "script.yaml") -> Path:
    path = work.parent / name
    path.write_text(text)
    return path


@asynccontextmanager
async def running(
    work: Path,
    script: str,
    *args: str,
    editor: Editor | None = None,
    environ: dict[str, str] | None = None,
) -> AsyncIterator[Agent]:
    """``skillkit acp --model scripted:SCRIPT ARGS`` with ``work``'s parent as its home
    and ``environ`` added to its environment (stderr to ``stderr.log`` beside it)."""
    path = write_script(work, script)
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(work.parent / "home")
    env.update(environ or {})
    editor = editor or Editor()

    def observe(event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            editor.incoming.append(event.message)

    log = os.open(work.parent / "stderr.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        async with spawn_agent_process(
            editor,
            *PROGRAM,
            "acp",
            "--model",
            f"scripted:{path}",
            "--sandbox",
            "off",
            *args,
            env=env,
            cwd=work,
            transport_kwargs={"stderr": log},
            observers=[observe],
            use_unstable_protocol=True,  # forms (elicitation) are unstable in the SDK
        ) as (conn, process):
            yield Agent(conn, editor, process, work)
    finally:
        os.close(log)
