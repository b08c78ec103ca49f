"""``mcpServers`` in the settings files and ``.mcp.json``: shapes, variables, problems
and the project's trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.mcp import expand_variables, load_mcp_config


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_stdio_and_http_entries_are_read_as_other_agents_write_them(
    home: Path, project: Path
) -> None:
    write(
        home / ".skillkit" / "settings.json",
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"A": "1"}},
                "remote": {
                    "type": "http",
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer t"},
                    "timeout": 5,
                    "taskTimeout": 600,
                },
            }
        },
    )
    config = load_mcp_config(project, trusted=False, home=home, environ={})
    files, remote = config.servers["files"], config.servers["remote"]
    assert (files.transport, files.command, files.args, dict(files.env)) == (
        "stdio",
        "npx",
        ("-y", "server-files"),
        {"A": "1"},
    )
    assert (remote.transport, remote.url, dict(remote.headers), remote.timeout) == (
        "http",
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer t"},
        5.0,
    )
    assert (remote.task_timeout, files.task_timeout) == (600.0, 3600.0)
    assert config.problems == [] and config.refused == []


def test_the_projects_servers_are_refused_until_it_is_trusted(home: Path, project: Path) -> None:
    write(project / ".mcp.json", {"mcpServers": {"shared": {"command": "run-me"}}})
    write(
        project / ".skillkit" / "settings.json",
        {"mcpServers": {"local-one": {"command": "also-me"}}},
    )
    write(home / ".skillkit" / "settings.json", {"mcpServers": {"mine": {"command": "ok"}}})
    untrusted = load_mcp_config(project, trusted=False, home=home, environ={})
    assert list(untrusted.servers) == ["mine"]
    assert sorted(name for name, _ in untrusted.refused) == ["local-one", "shared"]
    notice = untrusted.refusal_notice()
    assert notice is not None and "not trusted" in notice and "\n" not in notice
    trusted = load_mcp_config(project, trusted=True, home=home, environ={})
    assert list(trusted.servers) == ["mine", "shared", "local-one"]
    assert trusted.refusal_notice() is None


def test_a_later_file_replaces_a_server_of_the_same_name(home: Path, project: Path) -> None:
    write(home / ".skillkit" / "settings.json", {"mcpServers": {"s": {"command": "user"}}})
    write(project / ".mcp.json", {"mcpServers": {"s": {"command": "project"}}})
    config = load_mcp_config(project, trusted=True, home=home, environ={})
    assert config.servers["s"].command == "project"
    assert config.servers["s"].source == "mcp.json"


def test_variables_are_expanded_with_defaults(home: Path, project: Path) -> None:
    write(
        home / ".skillkit" / "settings.json",
        {
            "mcpServers": {
                "gh": {
                    "command": "${BIN:-gh-server}",
                    "args": ["--org", "${ORG}"],
                    "env": {"TOKEN": "${TOKEN}"},
                },
                "broken": {"command": "x", "env": {"K": "${MISSING}"}},
            }
        },
    )
    config = load_mcp_config(
        project, trusted=False, home=home, environ={"ORG": "acme", "TOKEN": "s3"}
    )
    gh = config.servers["gh"]
    assert (gh.command, gh.args, dict(gh.env)) == ("gh-server", ("--org", "acme"), {"TOKEN": "s3"})
    assert "broken" not in config.servers
    assert config.problems == [
        f"{home / '.skillkit' / 'settings.json'}: mcpServers.broken: "
        "the environment variable MISSING is not set"
    ]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("not an object", "must be an object"),
        ({"args": ["x"]}, "'command' must be a non-empty string"),
        ({"command": "x", "args": "no"}, "'args' must be a list of strings"),
        ({"url": "ftp://x"}, "must start with http:// or https://"),
        ({"type": "sse", "url": "https://x"}, "SSE transport is not supported"),
        ({"type": "carrier-pigeon"}, "unknown type"),
        ({"command": "x", "timeout": -1}, "'timeout' must be a number of seconds"),
        ({"command": "x", "taskTimeout": "1h"}, "'taskTimeout' must be a number of seconds"),
        ({"url": "https://x", "headers": {"a": 1}}, "'headers' must be an object of strings"),
    ],
)
def test_a_bad_entry_is_one_problem_and_the_others_stay(
    home: Path, project: Path, entry: object, problem: str
) -> None:
    write(
        home / ".skillkit" / "settings.json",
        {"mcpServers": {"bad": entry, "good": {"command": "fine"}}},
    )
    config = load_mcp_config(project, trusted=False, home=home, environ={})
    assert list(config.servers) == ["good"]
    (line,) = config.problems
    assert "mcpServers.bad" in line and problem in line and "\n" not in line


def test_unreadable_files_and_bad_sections_are_problems(home: Path, project: Path) -> None:
    write(home / ".skillkit" / "settings.json", "{not json")
    write(project / ".mcp.json", {"mcpServers": ["a", "list"]})
    config = load_mcp_config(project, trusted=True, home=home, environ={})
    assert config.servers == {}
    assert len(config.problems) == 2
    assert "mcpServers must be an object" in config.problems[1]


def test_disabled_servers_and_bad_names_are_left_out(home: Path, project: Path) -> None:
    write(
        home / ".skillkit" / "settings.json",
        {"mcpServers": {"off": {"command": "x", "disabled": True}, "bad name!": {"command": "y"}}},
    )
    config = load_mcp_config(project, trusted=True, home=home, environ={})
    assert config.servers == {}
    assert len(config.problems) == 1 and "bad name!" in config.problems[0]


_NAMES = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=50, deadline=None)
@given(
    environ=st.dictionaries(_NAMES, st.text(max_size=8), max_size=4),
    text=st.text(alphabet="ab${}:-_AZ", max_size=30),
)
def test_expansion_only_ever_replaces_whole_references(environ: dict[str, str], text: str) -> None:
    try:
        expanded = expand_variables(text, environ)
    except ValueError as exc:
        assert "is not set" in str(exc)
        return
    if "${" not in text:
        assert expanded == text
