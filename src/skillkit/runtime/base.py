"""`SkillRuntime`: how SkillKit runs a command, and the `ExecutionResult` it reports.

A runtime runs one shell command, streams its output line by line to ``on_output``,
and reports how it ended. Tools (``bash``, ``grep``), skill actions and background tasks
all run commands through this one interface, so a different runtime (a container, a
remote host) can stand in without touching them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement

__all__ = ["ExecutionResult", "ExecutionStatus", "OutputCallback", "SkillRuntime"]

ExecutionStatus = Literal["completed", "failed", "timeout", "aborted"]
"""How a command ended: exit code 0, another exit code, killed by its timeout, or killed
because the caller aborted (or cancelled) it."""

OutputCallback = Callable[[str], None]
"""Receives one line of output at a time, with its trailing newline (the last line of a
stream may have none). Must not raise."""


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """What running one command produced.

    ``output`` holds stdout and stderr interleaved in arrival order; ``stdout`` and
    ``stderr`` hold each stream alone. All three are cut to the runtime's output limits;
    when ``output`` was cut, ``truncated`` is true and ``full_output_path`` names a file
    with the complete interleaved output. ``exit_code`` is the process's exit status, or
    minus the signal number when a signal ended it (``-9`` after a kill), or ``None`` if
    the command never started (aborted before it could). ``duration`` is in seconds.
    """

    command: str
    status: ExecutionStatus
    exit_code: int | None
    output: str
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    full_output_path: str | None = None
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the command ran to the end and exited with status 0."""
        return self.status == "completed"

    @property
    def timed_out(self) -> bool:
        return self.status == "timeout"

    @property
    def aborted(self) -> bool:
        return self.status == "aborted"


class SkillRuntime(ABC):
    """Runs shell commands for tools, skill actions and background tasks."""

    @abstractmethod
    async def execute(
        self,
        command: str,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the seed API takes a timeout
        on_output: OutputCallback | None = None,
        *,
        abort: AbortSignal | None = None,
        confinement: Confinement | None = None,
    ) -> ExecutionResult:
        """Run ``command`` and wait for it to end.

        ``cwd`` defaults to the current directory; ``env`` adds to (and overrides) the
        current environment. Each line of output goes to ``on_output`` as soon as it is
        read. When ``timeout`` seconds pass or ``abort`` fires, the command and every
        process it started are stopped and the result says so (``status`` ``"timeout"``
        or ``"aborted"``) — neither raises. Cancelling the awaiting task also stops the
        processes, then lets the `asyncio.CancelledError` through. No process the command
        started outlives the call, however it ended. A failure to start the command at
        all (a missing working directory, a sandbox that is required but unavailable)
        raises `OSError`.

        ``confinement`` is how far the permission gate's verdict reaches (see
        `skillkit.confinement`): a read-only one must leave nothing changed but a
        private temporary folder; None is the runtime's default (a writable workspace
        with the paths that run code later kept read-only). A runtime that cannot hold a
        command to its confinement must refuse to run it (`OSError`), never run it
        unconfined. The environment never carries the model's provider keys nor any
        variable whose name says it holds a credential.
        """
