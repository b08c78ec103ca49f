"""SkillKit's built-in tools: ``read``, ``write``, ``edit``, ``bash``, ``grep``, ``find``,
``ls``, ``web_fetch``, ``web_search``, ``todo``, and with a `BackgroundTasks` manager
``bash_output``, ``kill_task``, ``monitor``.

They are ordinary tools (nothing in the agent core knows them). `builtin_tools` builds
the default set; each class can also be built alone.
"""

from __future__ import annotations

from pathlib import Path

from skillkit.runtime.background import BackgroundTasks
from skillkit.runtime.base import SkillRuntime
from skillkit.runtime.output import OutputLimits
from skillkit.runtime.todos import TodoList
from skillkit.tools.base import Tool
from skillkit.tools.builtin.background import BashOutputTool, KillTaskTool, MonitorTool
from skillkit.tools.builtin.bash import BashTool
from skillkit.tools.builtin.edit import EditTool
from skillkit.tools.builtin.find import FindTool
from skillkit.tools.builtin.grep import GrepTool
from skillkit.tools.builtin.ls import LsTool
from skillkit.tools.builtin.read import ReadTool
from skillkit.tools.builtin.todo import TodoTool
from skillkit.tools.builtin.webfetch import WebFetchTool
from skillkit.tools.builtin.websearch import WebSearchTool
from skillkit.tools.builtin.workspace import PathPolicy, Workspace
from skillkit.tools.builtin.write import WriteTool

__all__ = [
    "BashOutputTool",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "KillTaskTool",
    "LsTool",
    "MonitorTool",
    "PathPolicy",
    "ReadTool",
    "TodoTool",
    "WebFetchTool",
    "WebSearchTool",
    "Workspace",
    "WriteTool",
    "builtin_tools",
]

READ_ONLY = ("read", "grep", "find", "ls")
"""The names of the tools that never change anything."""


def builtin_tools(
    workspace: Path | None = None,
    *,
    allow_writes: bool,
    background: BackgroundTasks | None = None,
    limits: OutputLimits | None = None,
    runtime: SkillRuntime | None = None,
    confine: bool | None = None,
    bash_timeout: float = 120.0,
    web: bool = True,
    todos: TodoList | None = None,
) -> list[Tool]:
    """The default tool set.

    ``workspace`` is the directory relative paths start from and ``bash`` runs in (the
    current directory if None); the file tools are confined to it — also when it is
    None — unless ``confine=False`` is passed explicitly. ``allow_writes=False`` gives
    only the read-only tools (``read``, ``grep``, ``find``, ``ls``); ``True`` adds
    ``write``, ``edit`` and ``bash``. Passing ``background`` (with ``allow_writes``)
    lets ``bash`` run commands in the background and adds ``bash_output``,
    ``kill_task`` and ``monitor`` — the caller then owns the manager: it drains it at
    iteration boundaries and closes it. ``limits`` are the output limits every tool
    shares; ``runtime`` runs commands (a `BashRuntime` with those limits by default,
    confined by ``background``'s sandbox when it has one; that sandbox's protected paths
    are refused to ``write`` and ``edit`` too). With ``allow_writes``, ``web=True`` adds
    ``web_fetch`` and ``web_search`` (the permission gate asks before each host no rule
    allows) and ``todo`` keeps its list in ``todos`` (a fresh `TodoList` if None; attach
    it to the runner as a contributor to publish its events).
    The tools share one `Workspace`; a permission gate installed on the runner becomes
    its path policy on the first call (see ``Workspace.add_policy``).
    """
    limits = limits or OutputLimits()
    sandbox = background.sandbox if background is not None else None
    if runtime is None:
        from skillkit.runtime.bash import BashRuntime

        runtime = BashRuntime(limits=limits, sandbox=sandbox)
    protected = sandbox.protected_paths if sandbox is not None else ()
    space = Workspace(workspace, confine=confine, protected_paths=protected)
    tools: list[Tool] = [
        ReadTool(space, limits),
        GrepTool(space, limits, runtime),
        FindTool(space, limits),
        LsTool(space, limits),
    ]
    if not allow_writes:
        return tools
    tools += [
        WriteTool(space),
        EditTool(space),
        BashTool(space, runtime, background=background, default_timeout=bash_timeout),
    ]
    if web:
        tools += [WebFetchTool(), WebSearchTool()]
    tools.append(TodoTool(todos if todos is not None else TodoList()))
    if background is not None:
        tools += [
            BashOutputTool(background),
            KillTaskTool(background),
            MonitorTool(space, background),
        ]
    return tools
