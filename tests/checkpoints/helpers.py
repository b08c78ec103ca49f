"""Pictures of a workspace, and an agent whose model plays a list of tool calls per
turn, for the checkpoint tests."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.agent import Contributor
from skillkit.models import LLMRequest, ToolResultMessage, UserMessage
from skillkit.runtime.background import BackgroundTasks
from skillkit.tools.builtin import builtin_tools

Picture = dict[str, tuple[str, bytes, bool]]


def picture(root: Path, *, skip_git: bool = True) -> Picture:
    """Every folder, file and link under ``root``: kind, content (link target) and the
    executable bit; ``.git`` left out unless ``skip_git=False``."""
    out: Picture = {}
    for folder, dirs, files in os.walk(root):
        relative = Path(folder).relative_to(root)
        if skip_git and ".git" in dirs:
            dirs.remove(".git")
        for name in dirs:
            path = Path(folder) / name
            if path.is_symlink():
                out[str(relative / name)] = ("link", os.readlink(path).encode(), False)
            else:
                out[str(relative / name)] = ("dir", b"", False)
        for name in files:
            path = Path(folder) / name
            if skip_git and name == ".git":
                continue
            if path.is_symlink():
                out[str(relative / name)] = ("link", os.readlink(path).encode(), False)
            else:
                mode = os.lstat(path).st_mode
                out[str(relative / name)] = ("file", path.read_bytes(), bool(mode & stat.S_IXUSR))
    return out


def git_files(root: Path) -> dict[str, bytes]:
    """The bytes of every file in ``root/.git`` (the user's repository)."""
    out: dict[str, bytes] = {}
    git = root / ".git"
    if git.is_file():
        return {".git": git.read_bytes()}
    for folder, _, files in os.walk(git):
        for name in files:
            path = Path(folder) / name
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


class PlayedTurns:
    """A model that answers turn N with the tool calls ``turns[N]`` one at a time (each
    a ``(tool, args)`` pair, or a callable giving one from the workspace), then text."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.turns: dict[str, list[Any]] = {}

    def reply(self, request: LLMRequest) -> Reply:
        messages = request.messages
        start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
        prompt = messages[start]
        text = prompt.content if isinstance(prompt.content, str) else ""
        done = sum(1 for m in messages[start:] if isinstance(m, ToolResultMessage))
        calls = self.turns.get(text, [])
        if done >= len(calls):
            return Reply(text=f"done: {text}")
        call = calls[done]
        if callable(call):
            call = call(self.workspace)
        return Reply(tool_calls=[call])


def make_agent(
    workspace: Path, contributors: list[Contributor], *, messages: list[Any] | None = None
) -> tuple[AgentRunner, PlayedTurns, BackgroundTasks]:
    played = PlayedTurns(workspace)
    background = BackgroundTasks(cwd=workspace)
    tools = builtin_tools(workspace, allow_writes=True, background=background, confine=True)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(played.reply, model="scripted"),
        tools=tools,
        messages=messages or [],
        contributors=[*contributors, background],
    )
    return agent, played, background
