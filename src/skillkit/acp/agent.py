"""`SkillKitAcpAgent`: the ACP agent side of ``skillkit acp``, on the official SDK.

Each ``session/new`` builds the agent ``skillkit`` itself would build in the session's
folder (`skillkit.frontends.setup.build_agent`: the same settings, skills, plugins,
permission gate, sandbox and session recording) and drives it through an
`AgentSession` wrapped in an `AcpSession`. The MCP servers a client passes are added to
the session's own (a name the session already uses keeps the session's server). When
the client offers ``fs/*``, the session's ``read`` and ``write`` tools go through the
editor (`skillkit.acp.files`); when it offers ``terminal/*``, the ``bash`` tool's
commands run, still sandboxed, in the editor's terminals (`skillkit.acp.terminals`).

Sessions are SkillKit's recorded sessions: ``session/list`` lists the store's sessions
(of one folder when ``cwd`` is given), ``session/load`` and ``session/resume`` reopen one
of the folder given — ``load`` replays its history as updates first. A session keeps
its additional folders (`skillkit.acp.folders`): reopened with none given, it takes
the ones it had that are still folders. No authentication
is needed (the agent runs as the user who started it, with the user's own keys).

Bad input from the client is a JSON-RPC error for that request only: invalid params for
a relative or missing folder, an unknown session, mode, model or config option, or an
empty prompt; the connection goes on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    EnvVariable,
    ForkSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SessionInfo,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from skillkit.acp.content import prompt_message
from skillkit.acp.handshake import initialize_result
from skillkit.acp.session import AcpSession
from skillkit.acp.settings import AcpSettings
from skillkit.frontends.agent_session import AgentSession, SessionCommandError

if TYPE_CHECKING:
    from acp.interfaces import Client

    from skillkit.frontends.setup import CliAgent
    from skillkit.session.session import Session


__all__ = ["PAGE_SIZE", "AcpSettings", "SkillKitAcpAgent"]

log = logging.getLogger("skillkit.acp")

PAGE_SIZE = 50
"""Sessions per ``session/list`` page."""


class SkillKitAcpAgent:
    """The ACP agent: one `AcpSession` per ACP session, all on one connection."""

    def __init__(self, settings: AcpSettings) -> None:
        self.settings = settings
        self.sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None
        self._capabilities = ClientCapabilities()

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    # ----- initialization

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        from skillkit import __version__

        self._capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse.model_validate(initialize_result(protocol_version, __version__))

    def initialized(self, params: dict[str, Any]) -> None:
        """Take the ``initialize`` params answered before the SDK was loaded
        (`skillkit.acp.handshake`): the client's capabilities. Capabilities that do not
        parse count as none (no ``fs``)."""
        try:
            self._capabilities = ClientCapabilities.model_validate(
                params.get("clientCapabilities") or {}
            )
        except ValueError:
            log.warning("the client's capabilities do not parse; none are used")
            self._capabilities = ClientCapabilities()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise _refused("SkillKit needs no authentication")

    # ----- sessions

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        folder = _folder(cwd)
        extra = _folders(additional_directories, folder)
        session = self._open(folder, None, mcp_servers or (), extra)
        session.offer_commands()  # sent after the answer: nothing is awaited before it
        return NewSessionResponse(
            session_id=session.id,
            modes=session.modes(),
            config_options=list(session.config_options()),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        session = await self._reopen(cwd, session_id, mcp_servers or (), additional_directories)
        await session.replay()
        session.offer_commands()
        return LoadSessionResponse(
            modes=session.modes(), config_options=list(session.config_options())
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        session = await self._reopen(cwd, session_id, mcp_servers or (), additional_directories)
        session.offer_commands()
        return ResumeSessionResponse(
            modes=session.modes(), config_options=list(session.config_options())
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        store = self._store()
        infos = store.list(_folder(cwd)) if cwd is not None else store.list()
        start = 0
        if cursor is not None:
            if not cursor.isdigit() or int(cursor) > len(infos):
                raise _refused(f"unknown cursor {cursor!r}")
            start = int(cursor)
        page = infos[start : start + PAGE_SIZE]
        following = start + PAGE_SIZE
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.cwd,
                    additional_directories=self._additional_of(info.id),
                    title=info.title or None,
                    updated_at=datetime.fromtimestamp(info.modified, UTC).isoformat(),
                )
                for info in page
            ],
            next_cursor=str(following) if following < len(infos) else None,
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        folder = _folder(cwd)
        extra = _folders(additional_directories, folder)
        self._saved(folder, session_id)
        source = self.sessions.get(session_id)
        if source is not None and source.agent.is_running:
            raise RequestError(-32600, "cannot fork a session while a prompt runs in it")
        forked = self._store().fork(session_id, cwd=folder)
        forked.close()  # its lock: the new session opens it again
        if not extra:  # none given: the ones the branch holds, if still folders
            extra = self._saved_folders(folder, forked.id)
        session = self._open(folder, forked.id, mcp_servers or (), extra)
        session.offer_commands()
        return ForkSessionResponse(
            session_id=session.id,
            modes=session.modes(),
            config_options=list(session.config_options()),
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise _unknown(session_id)
        await session.aclose()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        try:
            await session.set_mode(mode_id)
        except SessionCommandError as exc:
            raise _refused(str(exc)) from None
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if not isinstance(value, str):
            raise _refused(f"{config_id!r} takes a string value")
        try:
            if config_id == "mode":
                await session.set_mode(value)
            elif config_id == "model":
                await session.set_model(value)
            else:
                raise SessionCommandError(f"unknown config option {config_id!r}")
        except SessionCommandError as exc:
            raise _refused(str(exc)) from None
        return SetSessionConfigOptionResponse(config_options=list(session.config_options()))

    # ----- prompts

    async def prompt(self, session_id: str, prompt: Sequence[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        try:
            message = prompt_message(prompt)
        except ValueError as exc:
            raise _refused(str(exc)) from None
        try:
            stop_reason, usage = await session.run(message)
        except SessionCommandError as exc:
            raise RequestError(-32600, _one_line(exc)) from None
        except RuntimeError as exc:
            raise RequestError(-32603, _one_line(exc)) from None
        return PromptResponse(stop_reason=stop_reason, usage=usage)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def aclose(self) -> None:
        """Close every session (the connection ended)."""
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            try:
                await session.aclose()
            except Exception:
                log.exception("closing session %s failed", session.id)

    # ----- internals

    def _additional_of(self, session_id: str) -> list[str] | None:
        """The additional folders of ``session_id`` while it is open here (the saved
        ones of a closed session are not read for a listing)."""
        session = self.sessions.get(session_id)
        if session is None or not session.additional_directories:
            return None
        return [str(folder) for folder in session.additional_directories]

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise _unknown(session_id)
        return session

    def _store(self) -> Any:
        from skillkit.session import open_store

        options = self.settings.options
        return open_store(options.session_store or None, home=options.home)

    async def _reopen(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[Any],
        additional_directories: Sequence[str] | None,
    ) -> AcpSession:
        folder = _folder(cwd)
        extra = _folders(additional_directories, folder)
        open_now = self.sessions.get(session_id)
        if open_now is not None:
            if open_now.cwd != folder:
                raise _unknown(session_id)
            if extra and open_now.additional_directories != extra:
                raise _refused(
                    f"session {session_id!r} is open with other additional folders "
                    f"({_listed(open_now.additional_directories)}); close it first"
                )
            return open_now
        self._saved(folder, session_id)
        if not extra:  # none given: the ones the session holds, if still folders
            extra = self._saved_folders(folder, session_id)
        return self._open(folder, session_id, mcp_servers, extra)

    def _saved_folders(self, folder: Path, session_id: str) -> tuple[Path, ...]:
        """The additional folders saved in ``session_id`` that still exist (none when
        it cannot be read: the log says why)."""
        from skillkit.acp.folders import saved_folders

        try:
            saved = self._store().open(session_id, write=False)
        except Exception as exc:
            log.warning("session %s: its additional folders are not restored: %s", session_id, exc)
            return ()
        try:
            return saved_folders(saved, folder)
        finally:
            saved.close()

    def _saved(self, folder: Path, session_id: str) -> None:
        """Refuse ``session_id`` unless it is a saved session of ``folder``."""
        if self.settings.options.session == "off":
            raise _refused("sessions are not saved (--no-session)")
        known = {info.id for info in self._store().list(folder)}
        if session_id not in known:
            raise _refused(f"no saved session {session_id!r} in {folder}")

    def _open(
        self,
        folder: Path,
        session_id: str | None,
        mcp_servers: Sequence[Any],
        additional: tuple[Path, ...] = (),
    ) -> AcpSession:
        from skillkit.frontends.setup import SetupError, build_agent

        if self._client is None:
            raise RequestError(-32603, "no client connected")
        options = replace(
            self.settings.options,
            workspace=folder,
            additional_directories=(*self.settings.options.additional_directories, *additional),
        )
        if options.session != "off":
            options = replace(
                options,
                session="open" if session_id is not None else "new",
                session_ref=session_id,
            )
        try:
            built = (self.settings.build or build_agent)(options)
        except SetupError as exc:
            raise _refused(_one_line(exc)) from None
        for line in (*built.warnings, *built.notices):
            log.warning("%s", _one_line(line))
        sid = built.session.id if built.session is not None else session_id or uuid.uuid4().hex
        if built.session is not None:
            _remember_folders(built.session, additional)
        # the assembly's last parts, before the session wraps the agent
        _add_mcp_servers(built, mcp_servers)
        self._route_files(built, folder, sid, additional)
        self._route_terminals(built, sid)
        agent = AgentSession.from_agent(built, ui_timeout=self.settings.ui_timeout)
        elicitation = self._capabilities.elicitation
        session = AcpSession(
            sid,
            agent,
            self._client,
            cwd=folder,
            additional_directories=additional,
            models=self.settings.models,
            ask_questions=elicitation is not None and elicitation.form is not None,
        )
        self.sessions[sid] = session
        return session

    def _route_files(
        self, built: CliAgent, folder: Path, session_id: str, additional: tuple[Path, ...]
    ) -> None:
        fs = self._capabilities.fs
        client = self._client
        if fs is None or client is None or not (fs.read_text_file or fs.write_text_file):
            return
        from skillkit.acp.files import ClientFiles

        async def read_file(path: str, line: int | None, limit: int | None) -> str:
            assert client is not None
            answer = await client.read_text_file(
                session_id=session_id, path=path, line=line, limit=limit
            )
            return str(answer.content)

        async def write_file(path: str, content: str) -> None:
            assert client is not None
            await client.write_text_file(session_id=session_id, path=path, content=content)

        runner = built.runner
        runner.add_contributor(
            ClientFiles(
                folder,
                additional=additional,
                local_read=runner.find_tool("read"),
                local_write=runner.find_tool("write"),
                read_file=read_file if fs.read_text_file else None,
                write_file=write_file if fs.write_text_file else None,
            ),
            first=True,
        )

    def _route_terminals(self, built: CliAgent, session_id: str) -> None:
        client = self._client
        if not self._capabilities.terminal or client is None:
            return
        from skillkit.acp.terminals import ClientTerminals

        def show(call_id: str, terminal_id: str) -> None:
            session = self.sessions.get(session_id)
            if session is not None:
                session.show_terminal(call_id, terminal_id)

        runner = built.runner
        runner.add_contributor(
            ClientTerminals(runner.find_tool("bash"), _Terminals(client, session_id), show),
            first=True,
        )


class _Terminals:
    """The ``terminal/*`` calls of one session (`skillkit.acp.terminals.TerminalClient`)."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def create(
        self,
        command: str,
        args: list[str],
        cwd: str,
        output_byte_limit: int,
        env: dict[str, str],
    ) -> str:
        made = await self.client.create_terminal(
            session_id=self.session_id,
            command=command,
            args=args,
            cwd=cwd,
            output_byte_limit=output_byte_limit,
            env=[EnvVariable(name=name, value=value) for name, value in env.items()],
        )
        return made.terminal_id

    async def wait_for_exit(self, terminal_id: str) -> Any:
        return await self.client.wait_for_terminal_exit(
            session_id=self.session_id, terminal_id=terminal_id
        )

    async def output(self, terminal_id: str) -> Any:
        return await self.client.terminal_output(
            session_id=self.session_id, terminal_id=terminal_id
        )

    async def kill(self, terminal_id: str) -> object:
        return await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)

    async def release(self, terminal_id: str) -> object:
        return await self.client.release_terminal(
            session_id=self.session_id, terminal_id=terminal_id
        )


def _remember_folders(session: Session, folders: tuple[Path, ...]) -> None:
    """Keep the session's additional folders in it (a failure is logged: the session
    works on, its folders must then be given again)."""
    from skillkit.acp.folders import remember_folders

    try:
        remember_folders(session, folders)
    except Exception as exc:
        log.warning("session %s: its additional folders are not saved: %s", session.id, exc)


def _add_mcp_servers(built: CliAgent, servers: Sequence[Any]) -> None:
    """The client's MCP servers beside the session's own (which win a shared name)."""
    if not servers:
        return
    from skillkit.mcp import McpServers
    from skillkit.mcp.config import McpServerConfig

    runner = built.runner
    taken: set[str] = set()
    for contributor in runner.contributors:
        if isinstance(contributor, McpServers):
            taken.update(contributor.connections)
    configs: list[McpServerConfig] = []
    for server in servers:
        if server.name in taken:
            log.warning("MCP server %r from the editor not added: the name is taken", server.name)
            continue
        if isinstance(server, McpServerStdio):
            configs.append(
                McpServerConfig(
                    server.name,
                    "stdio",
                    command=server.command,
                    args=tuple(server.args),
                    env={item.name: item.value for item in server.env},
                    source="acp",
                    path="the editor",
                )
            )
        elif isinstance(server, HttpMcpServer):
            configs.append(
                McpServerConfig(
                    server.name,
                    "http",
                    url=server.url,
                    headers={item.name: item.value for item in server.headers},
                    source="acp",
                    path="the editor",
                )
            )
        else:
            log.warning("MCP server %r from the editor not added: only stdio and http", server.name)
            continue
        taken.add(server.name)
    if configs:
        runner.add_contributor(McpServers(configs))


def _folder(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise _refused(f"cwd must be an absolute path: {cwd!r}")
    if not path.is_dir():
        raise _refused(f"cwd is not a folder: {cwd}")
    return path.resolve()


def _folders(paths: Sequence[str] | None, cwd: Path) -> tuple[Path, ...]:
    """The session's additional workspace folders (``additionalDirectories``): each an
    absolute path of an existing folder, resolved; the ``cwd`` itself and repeats are
    left out. Anything else refuses the request (invalid params)."""
    folders: list[Path] = []
    for text in paths or ():
        path = Path(text)
        if not path.is_absolute():
            raise _refused(f"additionalDirectories must be absolute paths: {text!r}")
        if not path.is_dir():
            raise _refused(f"additional directory is not a folder: {text}")
        real = path.resolve()
        if real != cwd and real not in folders:
            folders.append(real)
    return tuple(folders)


def _listed(folders: Sequence[Path]) -> str:
    return ", ".join(str(folder) for folder in folders) or "none"


def _unknown(session_id: str) -> RequestError:
    return _refused(f"unknown session {session_id!r}")


def _refused(message: str) -> RequestError:
    """Invalid params (``-32602``), the reason as the error's message: editors show it."""
    return RequestError(-32602, _one_line(message))


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
