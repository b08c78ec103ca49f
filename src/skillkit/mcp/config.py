"""MCP server configuration: `load_mcp_config`, `McpServerConfig`, `McpConfig`.

Servers are named under ``mcpServers`` — the shape other agents read — in these files,
in this order (a later file's entry replaces an earlier one of the same name):

- ``~/.skillkit/settings.json`` (source ``user``);
- ``<workspace>/.mcp.json`` (source ``mcp.json``: the project's shared file);
- ``<workspace>/.skillkit/settings.json`` (source ``project``);
- ``<workspace>/.skillkit/settings.local.json`` (source ``local``).

An entry is either a local process spoken to over stdio::

    {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
     "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, "cwd": "tools"}

or a remote server over Streamable HTTP::

    {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}

(``"type"`` may say ``stdio`` or ``http`` / ``streamable-http``; it is inferred when
absent). Optional for both: ``timeout`` (seconds a tool call may take, default 120),
``taskTimeout`` (seconds a call the server runs as a task may take, default 3600),
``startupTimeout`` (seconds to connect, default 30) and ``disabled: true``.

**Environment variables** are expanded in ``command``, ``args``, ``env`` values,
``cwd``, ``url`` and ``headers`` values: ``${NAME}`` is the variable's value and
``${NAME:-default}`` falls back to ``default`` when it is unset or empty. A ``${NAME}``
that is unset and has no default makes the entry a problem: the server is not started.

**Trust.** The project's files (``.mcp.json`` and the project's settings) can start any
command with the user's rights, so their servers are kept only when the project is
trusted (`skillkit.trust`); otherwise each is listed in `McpConfig.refused` and never
started. The user's own file always counts.

Nothing here raises: unreadable files and malformed entries are one line each in
`McpConfig.problems`, and the other servers are kept.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillkit import safejson

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "PROJECT_SOURCES",
    "McpConfig",
    "McpServerConfig",
    "expand_variables",
    "load_mcp_config",
    "mcp_config_paths",
    "parse_servers",
]

DEFAULT_TOOL_TIMEOUT = 120.0
"""Seconds an MCP tool call may take unless the entry's ``timeout`` says otherwise."""
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds to start and initialise a server unless ``startupTimeout`` says otherwise."""
DEFAULT_TASK_TIMEOUT = 3600.0
"""Seconds a tool call the server runs as a task may take unless ``taskTimeout`` says
otherwise (``timeout`` then bounds each request of it)."""

PROJECT_SOURCES = frozenset({"mcp.json", "project", "local"})
"""The sources that belong to the project (and need its trust)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class McpServerConfig:
    """One configured server. ``transport`` is ``stdio`` (``command``, ``args``,
    ``env``, ``cwd``) or ``http`` (``url``, ``headers``); values are already expanded.
    ``timeout`` bounds a tool call (each request of one the server runs as a task),
    ``task_timeout`` a whole task, ``startup_timeout`` the start. ``source`` is the file
    kind it came from, ``path`` the file."""

    name: str
    transport: Literal["stdio", "http"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TOOL_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    source: str = "user"
    path: str = ""
    task_timeout: float = DEFAULT_TASK_TIMEOUT

    @property
    def from_project(self) -> bool:
        return self.source in PROJECT_SOURCES

    def describe(self) -> str:
        """``command arg...`` or the URL (no headers or environment: they may hold
        secrets)."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])


@dataclass
class McpConfig:
    """The servers to use (by name, in configuration order), the project's servers left
    out because the project is not trusted (``refused``: name and file) and one-line
    problems."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def refusal_notice(self) -> str | None:
        """The line telling the user that project servers were not started, or None."""
        if not self.refused:
            return None
        names = ", ".join(sorted({name for name, _ in self.refused}))
        return (
            f"MCP servers from the project ({names}) not started: the project is not "
            "trusted (`skillkit plugins trust` trusts it)"
        )


def mcp_config_paths(
    workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None
) -> list[tuple[Path, str]]:
    """The files read for ``workspace``, with their source names, in reading order."""
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(workspace)
    return [
        (home_dir / ".skillkit" / "settings.json", "user"),
        (project / ".mcp.json", "mcp.json"),
        (project / ".skillkit" / "settings.json", "project"),
        (project / ".skillkit" / "settings.local.json", "local"),
    ]


def load_mcp_config(
    workspace: str | os.PathLike[str],
    *,
    trusted: bool,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> McpConfig:
    """Read every file of `mcp_config_paths` that exists. ``trusted``: whether the
    project's own files may start servers. ``environ`` is where ``${NAME}`` is looked
    up (default: this process's environment). Never raises."""
    env = environ if environ is not None else os.environ
    config = McpConfig()
    seen: set[str] = set()
    for path, source in mcp_config_paths(workspace, home):
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue  # a workspace at the home folder: its file is the user's own
        seen.add(real)
        try:
            data = safejson.loads(path.read_bytes())
        except OSError as exc:
            config.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        except safejson.JSONError as exc:
            config.problems.append(f"{path}: {exc}")
            continue
        section = data.get("mcpServers") if isinstance(data, dict) else None
        if section is None:
            continue
        found = parse_servers(section, source=source, path=str(path), environ=env)
        config.problems.extend(found.problems)
        for name, server in found.servers.items():
            if server.from_project and not trusted:
                config.refused.append((name, str(path)))
                continue
            config.servers.pop(name, None)
            config.servers[name] = server
    return config


def parse_servers(
    section: object, *, source: str, path: str, environ: Mapping[str, str]
) -> McpConfig:
    """The servers of one ``mcpServers`` value (no trust decision). Never raises."""
    out = McpConfig()
    if not isinstance(section, dict):
        out.problems.append(f"{path}: mcpServers must be an object of named servers")
        return out
    for name, entry in section.items():
        where = f"{path}: mcpServers.{name}"
        if not isinstance(name, str) or not _NAME.match(name):
            out.problems.append(
                f"{where}: a server name is letters, digits, '-', '_' or '.' (at most 64)"
            )
            continue
        try:
            server = _server(name, entry, source=source, path=path, environ=environ)
        except ValueError as exc:
            out.problems.append(f"{where}: {exc}")
            continue
        if server is not None:
            out.servers[name] = server
    return out


def _server(
    name: str, entry: object, *, source: str, path: str, environ: Mapping[str, str]
) -> McpServerConfig | None:
    if not isinstance(entry, dict):
        raise ValueError("must be an object")
    if entry.get("disabled") is True:
        return None
    kind = entry.get("type", entry.get("transport"))
    if kind is None:
        kind = "http" if "url" in entry else "stdio"
    if kind in ("http", "streamable-http", "streamableHttp"):
        kind = "http"
    elif kind == "sse":
        raise ValueError("the SSE transport is not supported; use the server's HTTP endpoint")
    elif kind != "stdio":
        raise ValueError(f"unknown type {kind!r} (stdio or http)")
    timeout = _seconds(entry, "timeout", DEFAULT_TOOL_TIMEOUT)
    startup = _seconds(entry, "startupTimeout", DEFAULT_STARTUP_TIMEOUT)
    task_timeout = _seconds(entry, "taskTimeout", DEFAULT_TASK_TIMEOUT)

    def expand(value: str) -> str:
        return expand_variables(value, environ)

    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ValueError("'url' must be a non-empty string")
        url = expand(url.strip())
        if not url.startswith(("http://", "https://")):
            raise ValueError("'url' must start with http:// or https://")
        headers = _strings(entry.get("headers"), "headers")
        return McpServerConfig(
            name,
            "http",
            url=url,
            headers={k: expand(v) for k, v in headers.items()},
            timeout=timeout,
            startup_timeout=startup,
            task_timeout=task_timeout,
            source=source,
            path=path,
        )
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("'command' must be a non-empty string (or give a 'url')")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("'args' must be a list of strings")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("'cwd' must be a string")
    env = _strings(entry.get("env"), "env")
    return McpServerConfig(
        name,
        "stdio",
        command=expand(command),
        args=tuple(expand(a) for a in args),
        env={k: expand(v) for k, v in env.items()},
        cwd=os.path.expanduser(expand(cwd)) if cwd is not None else None,
        timeout=timeout,
        startup_timeout=startup,
        task_timeout=task_timeout,
        source=source,
        path=path,
    )


def _seconds(entry: Mapping[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise ValueError(f"'{key}' must be a number of seconds (more than 0, at most 86400)")
    return float(value)


def _strings(value: object, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"'{key}' must be an object of strings")
    return dict(value)


def expand_variables(text: str, environ: Mapping[str, str]) -> str:
    """``text`` with ``${NAME}`` and ``${NAME:-default}`` replaced from ``environ``.
    Raises ValueError naming the first variable that is unset and has no default."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is not None:
            return value
        raise ValueError(f"the environment variable {name} is not set")

    return _VARIABLE.sub(replace, text)
