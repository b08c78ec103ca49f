"""Reading hooks from settings files, and Claude Code's tool names both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skillkit.hooks import from_claude, load_hook_config, matches, parse_hooks, to_claude


def settings(path: Path, hooks: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")


HOOK = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./x.sh"}]}]}


def test_project_hooks_are_read_only_once_the_project_is_trusted(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    settings(home / ".skillkit" / "settings.json", HOOK)
    settings(project / ".skillkit" / "settings.json", HOOK)
    settings(project / ".claude" / "settings.json", {"Stop": [{"hooks": [{"command": "s"}]}]})

    untrusted = load_hook_config(project, trusted=False, home=home)
    assert [h.source for h in untrusted.hooks] == ["user"]
    assert untrusted.refused == [
        str(project / ".skillkit" / "settings.json"),
        str(project / ".claude" / "settings.json"),
    ]

    trusted = load_hook_config(project, trusted=True, home=home)
    assert [(h.source, h.event) for h in trusted.hooks] == [
        ("user", "PreToolUse"),
        ("project", "PreToolUse"),
        ("project", "Stop"),
    ]
    assert trusted.refused == []


def test_unsupported_options_are_one_line_each(tmp_path: Path) -> None:
    config = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "async": True}]},
                {"hooks": [{"type": "prompt", "prompt": "is this safe?"}]},
            ],
            "PermissionRequest": [],
        },
        source="plugin:p",
        path="hooks.json",
    )
    assert len(config.hooks) == 1
    assert config.unsupported == [
        "hooks.json: hooks.PreToolUse[0].hooks[0]: option 'async' is not supported (ignored)",
        "hooks.json: hooks.PreToolUse[1].hooks[0]: hook type 'prompt' is not supported (ignored)",
        "hooks.json: hooks: event 'PermissionRequest' is not supported (ignored)",
    ]


def test_sandbox_off_is_honoured_only_in_the_users_own_file(tmp_path: Path) -> None:
    entry = {"PreToolUse": [{"hooks": [{"command": "a", "sandbox": "off"}]}]}
    assert parse_hooks(entry, source="user", path="u", may_unconfine=True).hooks[0].sandbox == "off"
    project = parse_hooks(entry, source="project", path="p")
    assert project.hooks[0].sandbox == "workspace"
    assert "honoured only in your own settings file" in project.unsupported[0]


def test_malformed_entries_are_problems_and_never_raise() -> None:
    config = parse_hooks(
        {
            "PreToolUse": [{"hooks": [{"command": ""}, {"command": "a", "timeout": -1}, 3]}],
            "Stop": {},
        },
        source="user",
        path="s",
    )
    assert len(config.problems) == 4
    assert [h.timeout for h in config.hooks] == [60.0]
    assert parse_hooks([], source="user", path="s").problems == [
        "s: hooks: expected an object of events"
    ]


def test_plugin_root_is_left_to_the_shell_never_pasted_into_the_command() -> None:
    entry = {"PostToolUse": [{"hooks": [{"command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh"}]}]}
    (hook,) = parse_hooks(entry, source="plugin:f", path="h", plugin_root="/p/$(rm x)").hooks
    assert hook.command == "${CLAUDE_PLUGIN_ROOT}/fmt.sh"
    assert hook.plugin_root == "/p/$(rm x)"


def test_matchers_follow_claude_code() -> None:
    assert matches("", "Bash") and matches("*", "Write")
    assert matches("Edit|Write", "Write") and not matches("Write", "TodoWrite")
    assert matches("mcp__github__.*", "mcp__github__search")
    assert matches("Notebook(", "Notebook(")  # not an expression: compared as text


def test_skillkit_calls_read_as_claude_code_calls(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    assert to_claude("bash", {"command": "ls", "timeout": 2}, cwd) == (
        "Bash",
        {"command": "ls", "timeout": 2000},
    )
    assert to_claude("read", {"path": "a.py", "offset": 3}, cwd) == (
        "Read",
        {"file_path": f"{cwd}/a.py", "offset": 3},
    )
    one_edit = {"path": "a.py", "edits": [{"old_text": "x", "new_text": "y"}]}
    assert to_claude("edit", one_edit, cwd) == (
        "Edit",
        {"file_path": f"{cwd}/a.py", "old_string": "x", "new_string": "y", "replace_all": False},
    )
    two = {"path": "a.py", "edits": [{"old_text": "x", "new_text": "y"}] * 2}
    assert to_claude("edit", two, cwd)[0] == "MultiEdit"
    assert to_claude("find", {"pattern": "*.py"}, cwd)[0] == "Glob"
    assert to_claude("mcp__gh__search", {"q": 1}, cwd) == ("mcp__gh__search", {"q": 1})


texts = st.text(min_size=1, max_size=20)


@given(texts, texts, texts, st.booleans())
def test_an_edit_survives_the_round_trip(path: str, old: str, new: str, every: bool) -> None:
    args = {
        "path": f"/w/{path}",
        "edits": [{"old_text": old, "new_text": new, "replace_all": every}],
    }
    name, claude = to_claude("edit", args, "/w")
    back = from_claude("edit", args, claude)
    assert back["edits"] == args["edits"]
    assert name == "Edit"


@given(texts, st.one_of(st.none(), st.floats(min_value=0.001, max_value=600)))
def test_a_bash_call_survives_the_round_trip(command: str, timeout: float | None) -> None:
    args: dict[str, Any] = {"command": command, "timeout": timeout}
    _, claude = to_claude("bash", args, "/w")
    back = from_claude("bash", args, claude)
    assert back["command"] == command
