"""Claude Code's tool names and input fields, to and from SkillKit's own.

Hook scripts written for Claude Code match on its tool names (``Bash``, ``Write``,
``Edit``...) and read its input fields (``command``, ``file_path``, ``old_string``...).
`to_claude` gives a SkillKit call in that form (what a hook's matcher sees and what its
stdin holds); `from_claude` turns a hook's ``updatedInput`` back into SkillKit's
arguments. A tool with no Claude Code counterpart (a skill action, a plugin's tool) keeps
its own name and arguments both ways; MCP tools already share Claude Code's
``mcp__<server>__<tool>`` names.

Paths are given to hooks as absolute paths (``file_path`` is always absolute in Claude
Code); SkillKit's tools accept them as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["CLAUDE_NAMES", "claude_name", "from_claude", "to_claude"]

CLAUDE_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "bash_output": "BashOutput",
    "kill_task": "KillShell",
    "write": "Write",
    "edit": "Edit",
    "read": "Read",
    "grep": "Grep",
    "find": "Glob",
    "ls": "LS",
    "task": "Task",
    "ask_user": "AskUserQuestion",
}
"""SkillKit's built-in tool names and the Claude Code names hooks match on (``edit`` with
more than one edit is ``MultiEdit``)."""

_SKILLKIT_NAMES = {claude: own for own, claude in CLAUDE_NAMES.items()} | {"MultiEdit": "edit"}


def claude_name(tool_name: str, args: Mapping[str, Any] | None = None) -> str:
    """The name a Claude Code hook knows ``tool_name`` by (itself when none)."""
    if tool_name == "edit" and args is not None and len(args.get("edits") or ()) > 1:
        return "MultiEdit"
    return CLAUDE_NAMES.get(tool_name, tool_name)


def _absolute(path: object, cwd: str) -> object:
    if isinstance(path, str) and path:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    return path


def to_claude(tool_name: str, args: Mapping[str, Any], cwd: str) -> tuple[str, dict[str, Any]]:
    """``(name, input)`` of a SkillKit call as a Claude Code hook sees it."""
    name = claude_name(tool_name, args)
    data = dict(args)
    match tool_name:
        case "bash":
            out: dict[str, Any] = {"command": data.get("command", "")}
            if data.get("timeout") is not None:
                out["timeout"] = int(float(data["timeout"]) * 1000)
            if data.get("run_in_background"):
                out["run_in_background"] = True
            return name, out
        case "write":
            return name, {
                "file_path": _absolute(data.get("path", ""), cwd),
                "content": data.get("content", ""),
            }
        case "read":
            out = {"file_path": _absolute(data.get("path", ""), cwd)}
            for key in ("offset", "limit"):
                if data.get(key) is not None:
                    out[key] = data[key]
            return name, out
        case "edit":
            path = _absolute(data.get("path", ""), cwd)
            edits = [
                {
                    "old_string": e.get("old_text", ""),
                    "new_string": e.get("new_text", ""),
                    "replace_all": bool(e.get("replace_all", False)),
                }
                for e in (data.get("edits") or ())
                if isinstance(e, Mapping)
            ]
            if name == "MultiEdit":
                return name, {"file_path": path, "edits": edits}
            first = edits[0] if edits else {"old_string": "", "new_string": ""}
            return name, {"file_path": path, **first}
        case "grep":
            out = {"pattern": data.get("pattern", ""), "path": _absolute(data.get("path"), cwd)}
            if data.get("glob"):
                out["glob"] = data["glob"]
            if data.get("ignore_case"):
                out["-i"] = True
            if data.get("context"):
                out["-C"] = data["context"]
            out["output_mode"] = "content"
            return name, out
        case "find":
            return name, {
                "pattern": data.get("pattern", ""),
                "path": _absolute(data.get("path"), cwd),
            }
        case "ls":
            return name, {"path": _absolute(data.get("path", "."), cwd)}
        case _:
            return name, data


def from_claude(
    tool_name: str, original: Mapping[str, Any], updated: Mapping[str, Any]
) -> dict[str, Any]:
    """SkillKit arguments for ``tool_name`` from a hook's ``updatedInput`` (Claude Code's
    fields). Fields the hook left out keep their value in ``original``; fields SkillKit's
    tool does not know are dropped (the tool's validation would refuse them)."""
    args = dict(original)
    new = dict(updated)
    match tool_name:
        case "bash":
            if "command" in new:
                args["command"] = new["command"]
            if "timeout" in new and isinstance(new["timeout"], int | float):
                args["timeout"] = float(new["timeout"]) / 1000
            if "run_in_background" in new:
                args["run_in_background"] = bool(new["run_in_background"])
        case "write":
            if "file_path" in new:
                args["path"] = new["file_path"]
            if "content" in new:
                args["content"] = new["content"]
        case "read":
            if "file_path" in new:
                args["path"] = new["file_path"]
            for key in ("offset", "limit"):
                if key in new:
                    args[key] = new[key]
        case "edit":
            if "file_path" in new:
                args["path"] = new["file_path"]
            if "edits" in new and isinstance(new["edits"], list):
                args["edits"] = [
                    _edit_from_claude(e) for e in new["edits"] if isinstance(e, Mapping)
                ]
            elif {"old_string", "new_string"} & new.keys():
                current = (args.get("edits") or [{}])[0]
                args["edits"] = [
                    {
                        "old_text": new.get("old_string", current.get("old_text", "")),
                        "new_text": new.get("new_string", current.get("new_text", "")),
                        "replace_all": bool(
                            new.get("replace_all", current.get("replace_all", False))
                        ),
                    }
                ]
        case "grep":
            for theirs, ours in (("pattern", "pattern"), ("path", "path"), ("glob", "glob")):
                if theirs in new:
                    args[ours] = new[theirs]
            if "-i" in new:
                args["ignore_case"] = bool(new["-i"])
            if "-C" in new:
                args["context"] = new["-C"]
        case "find" | "ls":
            for key in ("pattern", "path"):
                if key in new and (key == "path" or tool_name == "find"):
                    args[key] = new[key]
        case _:
            return new
    return args


def _edit_from_claude(edit: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "old_text": edit.get("old_string", ""),
        "new_text": edit.get("new_string", ""),
        "replace_all": bool(edit.get("replace_all", False)),
    }


def skillkit_name(claude: str) -> str:
    """SkillKit's name for a Claude Code tool name (itself when none)."""
    return _SKILLKIT_NAMES.get(claude, claude)
