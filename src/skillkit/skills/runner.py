"""Running actions: `run_action`, `ActionResult`, and `ActionTool` (an action as a tool).

The command starts as an argument list (no shell), in its own process group, with
standard input closed, through `skillkit.runtime.spawn.run_process` — inside the OS
sandbox where one is in force (`skillkit.runtime.sandbox`). When the timeout passes or
the abort signal fires, every process it started is killed at once — also one that left
its group (``setsid``) and holds the output pipes open. When the command exits, anything
it left behind is killed too, so an action never outlives its call.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.skills.actions import ActionError, ActionSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skillkit.abort import AbortSignal
    from skillkit.confinement import Confinement
    from skillkit.runtime.sandbox import Sandbox
    from skillkit.tools.base import ToolContext, ToolResult

__all__ = ["MAX_OUTPUT", "ActionResult", "ActionTool", "action_tool_name", "run_action"]

#: Bytes kept of each of stdout and stderr; the rest is counted but dropped.
MAX_OUTPUT = 256 * 1024
_DRAIN_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What an action did. ``exit_code`` is None when it was killed (timeout or abort);
    a negative code is the signal that ended it."""

    skill: str
    action: str
    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    aborted: bool = False
    truncated: bool = False
    duration: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.aborted

    def summary(self) -> str:
        if self.timed_out:
            return "timed out (process group killed)"
        if self.aborted:
            return "aborted (process group killed)"
        return f"exit code {self.exit_code}"

    def to_text(self) -> str:
        """The result as the model reads it."""
        parts = [f"{self.skill}/{self.action}: {self.summary()}"]
        if self.stdout:
            parts.append("--- stdout ---\n" + self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("--- stderr ---\n" + self.stderr.rstrip("\n"))
        if self.truncated:
            parts.append(f"(output cut to {MAX_OUTPUT} bytes per stream)")
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "action": self.action,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "aborted": self.aborted,
            "truncated": self.truncated,
            "duration": round(self.duration, 3),
        }


class _Capture:
    """Keeps the first `MAX_OUTPUT` bytes of one stream and passes decoded text on."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.truncated = False
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._on_text = on_text

    def feed(self, chunk: bytes) -> None:
        room = MAX_OUTPUT - self.size
        if chunk and room > 0:
            self.chunks.append(chunk[:room])
            self.size += min(room, len(chunk))
        if len(chunk) > room:
            self.truncated = True
        if self._on_text is not None:
            text = self._decoder.decode(chunk, final=not chunk)
            if text:
                self._on_text(text)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")


def _program(argv: list[str], env: Mapping[str, str], cwd: Path, name: str) -> str:
    """The absolute path of ``argv[0]`` as it would be run; raises `ActionError`."""
    program = argv[0]
    if os.sep in program:
        path = program if os.path.isabs(program) else str(cwd / program)
    else:
        found = shutil.which(program, mode=os.F_OK, path=env.get("PATH", os.defpath))
        if found is None:
            raise ActionError(f"action '{name}': command not found: {program}")
        path = found
    if not os.path.isfile(path):
        raise ActionError(f"action '{name}': command not found: {program}")
    if not os.access(path, os.X_OK):
        raise ActionError(f"action '{name}': command not executable: {program}")
    return path


async def run_action(
    skill: str,
    spec: ActionSpec,
    values: Mapping[str, Any],
    *,
    project_dir: Path,
    abort: AbortSignal | None = None,
    on_output: Callable[[str], None] | None = None,
    on_stderr: Callable[[str], None] | None = None,
    environ: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
    confinement: Confinement | None = None,
) -> ActionResult:
    """Validate ``values``, run the action, and return what it did.

    Raises `ActionError` when the arguments are invalid or the command cannot start
    (not found, not executable, or the sandbox is ``on`` and unavailable). A command that
    runs and fails is a result, not an error. ``on_output`` receives decoded output text
    as it arrives: stdout, and stderr too unless ``on_stderr`` is given for it.
    ``sandbox`` confines the command (default: an ``auto`` `Sandbox` with ``project_dir``
    writable). The timeout and abort hold however the command behaves: every process it
    started is killed when the call ends, also one that left its process group.
    """
    from skillkit.runtime.sandbox import Sandbox, SandboxUnavailable
    from skillkit.runtime.spawn import run_process

    argv, cwd, env, program = await _command(spec, values, project_dir, environ)
    own_sandbox = sandbox is None
    confine = sandbox if sandbox is not None else Sandbox(workspace=project_dir)
    # the skill's own files (its scripts) are read where they are, also in the host's /tmp
    confine.expose(spec.skill_dir)
    out, err = _Capture(on_output), _Capture(on_stderr or on_output)

    def sink(fd: int, data: bytes) -> None:
        (out if fd == 1 else err).feed(data)

    started = time.monotonic()
    try:
        outcome = await run_process(
            [program, *argv[1:]],
            sink,
            cwd=cwd,
            env=env,
            timeout=spec.timeout,
            abort=abort,
            sandbox=confine,
            confinement=confinement,
            kill_grace=0.0,
            drain_timeout=_DRAIN_SECONDS,
        )
    except SandboxUnavailable as exc:
        raise ActionError(f"action '{spec.name}': {exc}") from None
    except PermissionError:
        raise ActionError(f"action '{spec.name}': command not executable: {argv[0]}") from None
    except FileNotFoundError:
        raise ActionError(f"action '{spec.name}': command not found: {argv[0]}") from None
    except BrokenPipeError:  # the reader of our own output went away, not the action
        raise
    except OSError as exc:
        raise ActionError(f"action '{spec.name}': cannot start {argv[0]}: {exc.strerror}") from None
    finally:
        if own_sandbox:
            confine.close()
    killed = outcome.status in ("timeout", "aborted")
    return ActionResult(
        skill=skill,
        action=spec.name,
        argv=tuple(argv),
        exit_code=None if killed else outcome.exit_code,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=outcome.status == "timeout",
        aborted=outcome.status == "aborted",
        truncated=out.truncated or err.truncated,
        duration=time.monotonic() - started,
    )


async def _command(
    spec: ActionSpec,
    values: Mapping[str, Any],
    project_dir: Path,
    environ: Mapping[str, str] | None,
) -> tuple[list[str], Path, dict[str, str], str]:
    """The action's command line, working folder, environment and resolved program for
    ``values``; `ActionError` when the arguments are invalid, the folder is missing or
    the program cannot be found."""
    typed = spec.validate(values)
    argv = spec.argv(typed)
    cwd = spec.working_directory(project_dir)
    env = dict(os.environ if environ is None else environ)
    env.update(spec.env)
    env["SKILLKIT_SKILL_DIR"] = str(spec.skill_dir)
    if not await asyncio.to_thread(cwd.is_dir):
        raise ActionError(f"action '{spec.name}': working folder not found: {cwd}")
    program = await asyncio.to_thread(_program, argv, env, cwd, spec.name)
    return argv, cwd, env, program


def action_tool_name(skill: str, action: str) -> str:
    """``skill__action``, made safe for every provider (``[A-Za-z0-9_-]``, at most 64).

    A name that had to be changed or shortened ends with a short hash of the original,
    so two different skills never get the same tool name.
    """
    import hashlib
    import re

    raw = f"{skill}__{action}"
    name = re.sub(r"[^A-Za-z0-9_-]", "_", raw)
    if name == raw and len(name) <= 64:
        return name
    digest = hashlib.sha1(raw.encode()).hexdigest()[:8]
    return f"{name[:55]}_{digest}"


class ActionTool:
    """An action offered to the model as a tool. The model picks the arguments; the
    declared command runs exactly as declared (see `run_action`)."""

    sequential = False

    def __init__(
        self,
        skill: str,
        spec: ActionSpec,
        project_dir: Path,
        *,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.skill = skill
        self.spec = spec
        self.project_dir = project_dir
        self.sandbox = sandbox
        self.name = action_tool_name(skill, spec.name)
        self.description = (
            f"{spec.description} (action '{spec.name}' of skill '{skill}'; "
            f"runs: {spec.describe_command()})"
        )
        self.args_model: type[BaseModel] = spec.args_model

    def __repr__(self) -> str:
        return f"<action tool {self.name}>"

    def invocation(self, tool_input: Mapping[str, Any]) -> tuple[list[str], str] | None:
        """The exact argv and working folder a call with ``tool_input`` would run (what
        an approval shows), or None when the input is invalid (then it cannot run)."""
        try:
            argv = self.spec.argv(self.spec.validate(dict(tool_input)))
        except ActionError:
            return None
        return argv, str(self.spec.working_directory(self.project_dir))

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        from skillkit.tools.base import ToolError, ToolResult

        if hasattr(args, "model_dump"):
            values = args.model_dump(by_alias=True, exclude_none=True)
        else:
            values = dict(args)
        try:
            result = await run_action(
                self.skill,
                self.spec,
                values,
                project_dir=self.project_dir,
                abort=ctx.abort,
                on_output=ctx.update,
                sandbox=self.sandbox,
                confinement=ctx.confinement,
            )
        except ActionError as exc:
            raise ToolError(str(exc)) from None
        return ToolResult.text(result.to_text(), is_error=not result.ok, details=result.to_dict())
