"""Running one shell hook: its JSON on stdin, in the sandbox, with a timeout, its output
bounded and redacted.

Each hook runs through SkillKit's process runtime (`skillkit.runtime.run_process`): a
new session, a fresh process tag (nothing it starts outlives it), no provider keys or
credential-named variables in its environment, and the session's `Sandbox` with the
hook's confinement (``workspace``: the workspace writable but its protected paths;
``read_only``: nothing but the private ``/tmp``; ``off``: unconfined). The JSON input
and the transcript are written to a private folder the sandbox exposes read-only.

The command line runs with ``/bin/sh -c``, as Claude Code runs it, from the workspace,
with ``CLAUDE_PROJECT_DIR`` (and ``CLAUDE_PLUGIN_ROOT`` for a plugin's hook) set. In the
session's resident sandbox (`skillkit.hooks.resident`) a command the shell would only
split into words (a script's path and plain arguments, ``"${CLAUDE_PLUGIN_ROOT}/x.sh"``)
is started without the shell; a program without ``#!`` still runs with ``/bin/sh``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from skillkit.abort import AbortSignal
from skillkit.confinement import READ_ONLY, Confinement
from skillkit.errors import describe_exception
from skillkit.hooks.config import HookCommand
from skillkit.hooks.resident import ResidentSandbox, ResidentUnavailable
from skillkit.runtime.sandbox import Sandbox
from skillkit.runtime.spawn import ProcessOutcome, run_process
from skillkit.secrets import Redactor

__all__ = ["OUTPUT_LIMIT", "HookProcesses", "HookRun"]

OUTPUT_LIMIT = 64 * 1024
"""Bytes of stdout and of stderr kept from one hook; the rest is dropped (and said)."""

_SHELL = "/bin/sh"
# Before the hook's own command line: its stdin becomes the input file.
_STDIN = 'exec <"$SKILLKIT_HOOK_INPUT"\n'

Status = Literal["completed", "failed", "timeout", "aborted", "error"]


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one hook ran: ``status`` (``error``: it could not start), its exit code, its
    stdout and stderr (bounded, redacted) and, when it could not start, why."""

    hook: HookCommand
    status: Status
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    error: str = ""

    @property
    def failure(self) -> str | None:
        """One line saying how the hook failed (timed out, crashed: an exit code other
        than 0 or 2, could not start), or None when it answered."""
        if self.status == "error":
            return f"{self.hook.label} could not run: {self.error}"
        if self.status == "timeout":
            return f"{self.hook.label} timed out after {self.hook.timeout:g}s"
        if self.status == "aborted":
            return f"{self.hook.label} was aborted"
        if self.exit_code in (0, 2):
            return None
        detail = _first_line(self.stderr) or _first_line(self.stdout)
        return f"{self.hook.label} failed (exit {self.exit_code})" + (
            f": {detail}" if detail else ""
        )


_PLAIN = re.compile(r'[\w/.,:=+@%" -]*')
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_EXPANDED = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR")


def _plain_argv(command: str, environ: Mapping[str, str]) -> list[str] | None:
    """The words of ``command`` when the shell would do nothing but split it into words
    and expand ``$CLAUDE_PLUGIN_ROOT`` / ``$CLAUDE_PROJECT_DIR`` (as one word each, also
    inside double quotes) — then it runs without a shell; None for anything else (quotes
    but double ones, other variables, globs, redirections, pipes, ``;``, ``$( )``...)."""
    names = [a or b for a, b in _VARIABLE.findall(command)]
    if any(name not in _EXPANDED or name not in environ for name in names):
        return None
    bare = _VARIABLE.sub("", command)
    if not _PLAIN.fullmatch(bare) or bare.count('"') % 2:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    return [_VARIABLE.sub(lambda m: environ[m.group(1) or m.group(2)], word) for word in words]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


class _Bounded:
    """Collects up to `OUTPUT_LIMIT` bytes of each stream."""

    def __init__(self) -> None:
        self.data: dict[int, bytearray] = {1: bytearray(), 2: bytearray()}
        self.dropped: dict[int, int] = {1: 0, 2: 0}

    def __call__(self, fd: int, chunk: bytes) -> None:
        kept = self.data[fd]
        room = OUTPUT_LIMIT - len(kept)
        kept += chunk[: max(room, 0)]
        self.dropped[fd] += max(len(chunk) - max(room, 0), 0)

    def text(self, fd: int) -> str:
        text = self.data[fd].decode("utf-8", "replace")
        if self.dropped[fd]:
            text += f"\n[{self.dropped[fd]} more bytes of hook output dropped]"
        return text


class HookProcesses:
    """Runs hooks for one session: ``cwd`` is the workspace, ``sandbox`` the session's
    (None: unconfined), ``redactor`` removes known secrets from what hooks print;
    ``resident``: hooks run through launchers kept for the session, in the sandbox
    (`skillkit.hooks.resident`; False: a fresh process, and bubblewrap, per hook).
    `close` stops them and removes the private folder (inputs and transcript)."""

    def __init__(
        self,
        cwd: str | os.PathLike[str],
        *,
        sandbox: Sandbox | None = None,
        redactor: Redactor | None = None,
        resident: bool = True,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.sandbox = sandbox
        self.redactor = redactor
        self.resident = resident
        self._resident: ResidentSandbox | None = None
        self._folder: Path | None = None
        self._count = itertools.count(1)

    @property
    def folder(self) -> Path:
        """The private folder holding hook inputs and the transcript (made on first use,
        readable inside the sandbox)."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="skillkit-hooks-"))
            if self.sandbox is not None:
                self.sandbox.expose(self._folder)
        return self._folder

    async def run(
        self, hook: HookCommand, payload: dict[str, Any], abort: AbortSignal | None = None
    ) -> HookRun:
        """Run ``hook`` with ``payload`` as its JSON stdin. Never raises (a hook that
        cannot start is a `HookRun` with status ``error``)."""
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        output = _Bounded()
        environ = dict(os.environ)
        environ["CLAUDE_PROJECT_DIR"] = str(self.cwd)
        environ["SKILLKIT_PROJECT_DIR"] = str(self.cwd)
        confined = hook.sandbox != "off" and self.sandbox is not None
        confinement = READ_ONLY if hook.sandbox == "read_only" else Confinement(writes="workspace")
        try:
            if hook.plugin_root is not None:
                environ["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root
                if self.sandbox is not None:  # its scripts must be readable inside
                    self.sandbox.expose(hook.plugin_root)
            outcome: ProcessOutcome | None = None
            if self.resident and hasattr(os, "memfd_create"):
                outcome = await self._run_resident(
                    hook, data, environ, confinement if confined else None, output, abort
                )
            if outcome is None:
                outcome = await self._run_fresh(
                    hook, data, environ, confinement if confined else None, output, abort
                )
        except Exception as exc:  # could not start: a missing sandbox in mode "on", ...
            return HookRun(hook, "error", None, error=self._clean(describe_exception(exc)))
        return HookRun(
            hook,
            outcome.status,
            outcome.exit_code,
            stdout=self._clean(output.text(1)),
            stderr=self._clean(output.text(2)),
        )

    async def _run_resident(
        self,
        hook: HookCommand,
        data: bytes,
        environ: dict[str, str],
        confinement: Confinement | None,
        output: _Bounded,
        abort: AbortSignal | None,
    ) -> ProcessOutcome | None:
        """The hook run by the session's resident sandbox; None when that cannot take it
        (no bubblewrap in force, the launcher would not start: the caller then runs the
        hook as before, where a sandbox required but missing is refused)."""
        if self._resident is None:
            self.folder  # noqa: B018 - made (and exposed) before the launcher's mounts are
            self._resident = ResidentSandbox(self.sandbox, self.cwd)
        stdin = os.memfd_create("skillkit-hook-input")
        try:
            os.write(stdin, data)
            os.lseek(stdin, 0, os.SEEK_SET)
            return await self._resident.run(
                _plain_argv(hook.command, environ) or [_SHELL, "-c", hook.command],
                output,
                stdin=stdin,
                env=environ,
                confinement=confinement,
                timeout=hook.timeout,
                abort=abort,
                kill_grace=0.5,
            )
        except ResidentUnavailable:
            return None
        finally:
            os.close(stdin)

    async def _run_fresh(
        self,
        hook: HookCommand,
        data: bytes,
        environ: dict[str, str],
        confinement: Confinement | None,
        output: _Bounded,
        abort: AbortSignal | None,
    ) -> ProcessOutcome:
        """The hook run through `run_process`: a fresh sandbox (or none)."""
        source = self.folder / f"input-{next(self._count)}.json"
        try:
            source.write_bytes(data)
            environ["SKILLKIT_HOOK_INPUT"] = str(source)
            return await run_process(
                [_SHELL, "-c", _STDIN + hook.command],
                output,
                cwd=self.cwd,
                env=environ,
                timeout=hook.timeout,
                abort=abort,
                sandbox=self.sandbox if confinement is not None else None,
                confinement=confinement,
                kill_grace=0.5,
            )
        finally:
            source.unlink(missing_ok=True)

    async def prepare(self, hooks: Sequence[HookCommand]) -> None:
        """Start the resident launchers ``hooks`` will use, ahead of their first run (a
        session calls it while the model answers). Never raises: what cannot start now
        is tried again, or replaced by a fresh sandbox, when a hook runs."""
        if not self.resident or not hasattr(os, "memfd_create"):
            return
        if self._resident is None:
            self.folder  # noqa: B018 - made (and exposed) before the launcher's mounts are
            self._resident = ResidentSandbox(self.sandbox, self.cwd)
        wanted: dict[str, Confinement | None] = {}
        for hook in hooks:
            if hook.plugin_root is not None and self.sandbox is not None:
                self.sandbox.expose(hook.plugin_root)
            if hook.sandbox == "off" or self.sandbox is None:
                wanted["off"] = None
            elif hook.sandbox == "read_only":
                wanted["read_only"] = READ_ONLY
            else:
                wanted["workspace"] = Confinement(writes="workspace")
        for confinement in wanted.values():
            with contextlib.suppress(Exception):
                await self._resident.prepare(confinement)

    def _clean(self, text: str) -> str:
        return self.redactor.redact(text) if self.redactor is not None else text

    def close(self) -> None:
        """Remove the private folder. Idempotent."""
        resident, self._resident = self._resident, None
        if resident is not None:
            resident.close()
        folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
