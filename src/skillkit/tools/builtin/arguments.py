"""The argument models of the built-in tools: what the model may pass to each.

Imported only when a call is validated (`skillkit.tools.arguments`): the tools show the
model the schemas stored in ``arguments.json`` (`skillkit.tools.builtin.schemas`), regenerated with
``python -m skillkit.tools.builtin.arguments`` after a model here changes (a test
fails until then).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillkit.runtime.todos import MAX_ITEMS, TodoStatus

__all__ = [
    "BashArgs",
    "BashBackgroundArgs",
    "BashOutputArgs",
    "EditArgs",
    "EditOperation",
    "FindArgs",
    "GrepArgs",
    "KillTaskArgs",
    "LsArgs",
    "MonitorArgs",
    "ReadArgs",
    "TodoItemArgs",
    "TodoWriteArgs",
    "WebFetchArgs",
    "WebSearchArgs",
    "WriteArgs",
]


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to read (relative to the workspace, or absolute).")
    offset: int | None = Field(
        default=None, ge=1, description="First line to show, counting from 1 (default 1)."
    )
    limit: int | None = Field(default=None, ge=1, description="How many lines to show at most.")


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to write (relative to the workspace, or absolute).")
    content: str = Field(description="The complete new content of the file.")


class EditOperation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old_text: str = Field(
        min_length=1,
        description="Text to replace, copied exactly from the file (whitespace included). "
        "It must occur exactly once unless replace_all is true.",
    )
    new_text: str = Field(description="The replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file to edit (relative to the workspace, or absolute).")
    edits: list[EditOperation] = Field(
        min_length=1,
        description="Replacements, each matched against the file as it is now; "
        "they must not overlap. Either all apply or none does.",
    )


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str = Field(default=".", description="File or directory to search (default: workspace).")
    glob: str | None = Field(default=None, description="Only search files matching this glob.")
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    literal: bool = Field(default=False, description="Treat the pattern as plain text.")
    context: int = Field(default=0, ge=0, le=20, description="Lines of context around matches.")
    hidden: bool = Field(default=False, description="Also search hidden files.")
    limit: int = Field(default=100, ge=1, le=5000, description="Most matching lines to return.")


class FindArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description="Glob pattern, e.g. '*.py' (any depth), 'src/**/*.ts', '*.{md,txt}'. "
        "A pattern without '/' matches names at any depth.",
    )
    path: str = Field(default=".", description="Directory to search (default: the workspace).")
    hidden: bool = Field(default=False, description="Include hidden files and directories.")
    limit: int = Field(default=1000, ge=1, le=10_000, description="Most paths to return.")


class LsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(default=".", description="Directory to list (default: the workspace).")
    limit: int = Field(default=500, ge=1, le=10_000, description="Most entries to return.")


MAX_TIMEOUT = 3600.0
"""The longest ``bash`` timeout a model may ask for, in seconds."""


class BashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The shell command to run (bash).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT,
        description="Seconds before the command and everything it started are killed.",
    )


class BashBackgroundArgs(BashArgs):
    run_in_background: bool = Field(
        default=False,
        description="Start the command and return a task id at once (for servers, watchers "
        "and long builds). Read its output with bash_output; stop it with kill_task. You are "
        "told when it finishes.",
    )


class BashOutputArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The id bash returned for a background task.")
    wait_seconds: float = Field(
        default=0,
        ge=0,
        le=600,
        description="Wait up to this long for the task to finish before reading.",
    )


class KillTaskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(description="The id of a background task or monitor.")


class MonitorArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1,
        description="A long-running command whose output lines you want to follow "
        "(tail -f a log, a test watcher, a dev server).",
    )
    timeout: float | None = Field(
        default=None, gt=0, le=86400, description="Stop the monitor after this many seconds."
    )


class WebFetchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=4000, description="The http(s) URL to fetch.")
    prompt: str | None = Field(
        default=None,
        max_length=4000,
        description="Optional: what you want to know from the page; answered from it.",
    )


class WebSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1000, description="What to search the web for.")
    count: int = Field(default=8, ge=1, le=20, description="How many results at most.")


class TodoItemArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=500, description="The task, in a few words.")
    status: TodoStatus = Field(default="pending", description="pending, in_progress or done.")


class TodoWriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[TodoItemArgs] = Field(
        max_length=MAX_ITEMS, description="The whole task list, in order (replaces the last)."
    )


if __name__ == "__main__":
    from skillkit.tools.builtin.schemas import ARGUMENTS

    ARGUMENTS.write()
