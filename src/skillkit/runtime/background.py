"""`BackgroundTasks`: commands that run beside the agent, and monitors that stream lines.

A background task is a command started by ``bash`` with ``run_in_background``: the
call returns its id at once, ``bash_output`` reads what it printed since the last read,
``kill_task`` stops it. A monitor is a long-running command whose every output line is
reported as it arrives. The manager records what happened so the agent loop can fold it
into the conversation at its next iteration boundary:

- a task ends → ``emit(BgResult)`` at once, and the result is queued;
- a monitor prints a line → ``emit(MonitorEvent)`` at once, and the line is queued;
  when it stops, a closing ``MonitorEvent`` follows;
- the loop calls `BackgroundTasks.drain_results` and `BackgroundTasks.drain_monitor_lines`
  at each iteration boundary; each returns what is queued (emptying the queue) and, when
  not empty, emits ``DrainBackgroundTask`` / ``DrainMonitorEvents``; the loop then adds
  `BackgroundTasks.results_message` / `BackgroundTasks.monitor_message` to the
  conversation as one message each.

A result the model has already seen — the task was stopped by ``kill_task``, or
``bash_output`` reported its end — is not queued again. `BackgroundTasks.aclose` kills
everything still running; call it when the runner closes.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import string
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from skillkit.abort import AbortSignal
from skillkit.confinement import Confinement
from skillkit.events import EventBus
from skillkit.models import AgentMessage, UserMessage
from skillkit.runtime.base import ExecutionResult, SkillRuntime
from skillkit.runtime.events import (
    BgResult,
    DrainBackgroundTask,
    DrainMonitorEvents,
    EventSource,
    MonitorEvent,
    bus_of,
)
from skillkit.runtime.output import OutputLimits
from skillkit.runtime.sandbox import Sandbox

if TYPE_CHECKING:
    from skillkit.runtime.bash import BashRuntime

__all__ = ["BackgroundTask", "BackgroundTasks", "TaskOutput", "TaskStatus"]

log = logging.getLogger(__name__)

TaskStatus = Literal["running", "completed", "failed", "killed"]
"""``completed``: exit code 0; ``failed``: another exit code, a timeout, or the command
could not start; ``killed``: stopped by `BackgroundTasks.kill` or `BackgroundTasks.aclose`."""

_ID_ALPHABET = string.ascii_lowercase + string.digits


def _new_id(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_ID_ALPHABET) for _ in range(7))


@dataclass
class BackgroundTask:
    """One background command or monitor. Read its fields; do not set them."""

    id: str
    kind: Literal["task", "monitor"]
    command: str
    agent_id: str = ""
    status: TaskStatus = "running"
    exit_code: int | None = None
    result: ExecutionResult | None = None
    error: str | None = None
    abort: AbortSignal = field(default_factory=AbortSignal, repr=False)
    _unread: deque[str] = field(default_factory=deque, repr=False)
    _unread_chars: int = field(default=0, repr=False)
    _dropped: int = field(default=0, repr=False)
    _done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _seen: bool = field(default=False, repr=False)

    @property
    def running(self) -> bool:
        return self.status == "running"


@dataclass(frozen=True, slots=True)
class TaskOutput:
    """New output of a task since the previous read, and its state at read time.

    ``dropped_lines`` counts unread lines discarded because too many piled up (the
    complete output is in ``full_output_path`` once the task has ended, if it was cut).
    """

    task_id: str
    text: str
    status: TaskStatus
    exit_code: int | None
    dropped_lines: int = 0
    full_output_path: str | None = None


class BackgroundTasks:
    """Starts, reads, stops and reports background tasks and monitors. A runner takes it
    as a contributor (``contributors=[background]``; it does not know the agent): it
    folds finished results and monitor lines into the conversation before each model
    call (``boundary_messages``), forwards its events to the agent's bus (``attach``)
    and kills what still runs when the agent closes (``aclose``).

    ``runtime`` runs the commands (by default a `BashRuntime` confined by ``sandbox`` —
    itself an ``auto`` `Sandbox` by default — whose spill files `aclose` deletes).
    ``emit`` receives the
    event payloads (`BgResult`, `MonitorEvent`, `DrainBackgroundTask`,
    `DrainMonitorEvents`) — a runner forwards them to its event bus; it is called from
    the event loop's thread and must not raise. ``limits`` bound the unread output kept
    per task and each result's text; ``max_queued_lines`` bounds the monitor lines
    waiting to be drained (the oldest are dropped first, and a note says how many).
    All methods must be called from within the running event loop.
    """

    def __init__(
        self,
        runtime: SkillRuntime | None = None,
        *,
        emit: Callable[[object], None] | None = None,
        cwd: Path | str | None = None,
        limits: OutputLimits | None = None,
        max_queued_lines: int = 1000,
        sandbox: Sandbox | None = None,
    ) -> None:
        self._own_runtime: BashRuntime | None = None
        if runtime is None:
            from skillkit.runtime.bash import BashRuntime

            runtime = self._own_runtime = BashRuntime(limits=limits, keep="tail", sandbox=sandbox)
            sandbox = runtime.sandbox
        elif sandbox is None:
            found = getattr(runtime, "sandbox", None)
            sandbox = found if isinstance(found, Sandbox) else None
        self.runtime = runtime
        self.sandbox: Sandbox | None = sandbox
        """The sandbox the tasks run in (None: unknown, a custom runtime without one);
        `builtin_tools` gives ``bash`` the same one, so they share one private ``/tmp``."""
        self.emit = emit
        self.cwd = cwd
        self.limits = limits or OutputLimits()
        self.max_queued_lines = max_queued_lines
        self._tasks: dict[str, BackgroundTask] = {}
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._results: list[BgResult] = []
        self._lines: deque[MonitorEvent] = deque()
        self._dropped_lines: dict[str, int] = {}
        self._pending = asyncio.Event()
        self._closed = False

    # ----------------------------------------------------------------- starting

    def start(
        self,
        command: str,
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        agent_id: str = "",
        confinement: Confinement | None = None,
    ) -> BackgroundTask:
        """Start ``command`` in the background and return its task at once.
        ``confinement`` holds it to the permission gate's verdict, as for a command run
        in the foreground (see `SkillRuntime.execute`)."""
        return self._start("task", command, cwd, env, timeout, agent_id, confinement)

    def start_monitor(
        self,
        command: str,
        *,
        cwd: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        agent_id: str = "",
        confinement: Confinement | None = None,
    ) -> BackgroundTask:
        """Start ``command`` as a monitor: every line it prints is emitted and queued
        (``confinement`` as for `start`)."""
        return self._start("monitor", command, cwd, env, timeout, agent_id, confinement)

    def _start(
        self,
        kind: Literal["task", "monitor"],
        command: str,
        cwd: Path | str | None,
        env: Mapping[str, str] | None,
        time_limit: float | None,
        agent_id: str,
        confinement: Confinement | None,
    ) -> BackgroundTask:
        if self._closed:
            raise RuntimeError("background tasks are closed")
        task_id = _new_id("b" if kind == "task" else "m")
        while task_id in self._tasks:
            task_id = _new_id(task_id[0])
        task = BackgroundTask(task_id, kind, command, agent_id)
        self._tasks[task_id] = task
        runner = asyncio.create_task(
            self._run(task, cwd, env, time_limit, confinement), name=f"skillkit-{task_id}"
        )
        self._runners[task_id] = runner
        runner.add_done_callback(lambda _: self._runners.pop(task_id, None))
        return task

    async def _run(
        self,
        task: BackgroundTask,
        cwd: Path | str | None,
        env: Mapping[str, str] | None,
        time_limit: float | None,
        confinement: Confinement | None,
    ) -> None:
        on_line = self._monitor_line(task) if task.kind == "monitor" else self._task_line(task)
        try:
            result = await self.runtime.execute(
                task.command,
                cwd if cwd is not None else self.cwd,
                env,
                time_limit,
                on_line,
                abort=task.abort,
                confinement=confinement,
            )
        except asyncio.CancelledError:
            task.status = "killed"
            task._done.set()
            raise
        except Exception as exc:
            task.status = "failed"
            task.error = f"could not run the command: {exc}"
            self._finish(task, task.error)
            return
        task.result = result
        task.exit_code = result.exit_code
        if result.status == "aborted":
            task.status = "killed"
        elif result.status == "completed":
            task.status = "completed"
        else:
            task.status = "failed"
            if result.status == "timeout":
                task.error = "timed out"
        self._finish(task, result.output)

    def _task_line(self, task: BackgroundTask) -> Callable[[str], None]:
        max_lines, max_chars = self.limits.max_lines, self.limits.max_chars

        def on_line(line: str) -> None:
            unread = task._unread
            unread.append(line)
            task._unread_chars += len(line)
            while len(unread) > 1 and (len(unread) > max_lines or task._unread_chars > max_chars):
                task._unread_chars -= len(unread.popleft())
                task._dropped += 1

        return on_line

    def _monitor_line(self, task: BackgroundTask) -> Callable[[str], None]:
        def on_line(line: str) -> None:
            self._queue_line(
                MonitorEvent(monitor_id=task.id, line=line.rstrip("\n"), agent_id=task.agent_id)
            )

        return on_line

    def _queue_line(self, event: MonitorEvent) -> None:
        self._send(event)
        self._lines.append(event)
        if len(self._lines) > self.max_queued_lines:
            dropped = self._lines.popleft()
            self._dropped_lines[dropped.monitor_id] = (
                self._dropped_lines.get(dropped.monitor_id, 0) + 1
            )
        self._pending.set()

    def _finish(self, task: BackgroundTask, output: str) -> None:
        task._done.set()
        if task.kind == "monitor":
            if task.status == "killed":
                summary = "stopped"
            elif task.error is not None:
                summary = task.error
            else:
                summary = f"exited with code {task.exit_code}"
            closing = MonitorEvent(
                monitor_id=task.id, line=summary, closing=True, agent_id=task.agent_id
            )
            if task._seen or self._closed:
                self._send(closing)
            else:
                self._queue_line(closing)
            return
        result = BgResult(
            task_id=task.id,
            status=task.status,
            exit_code=task.exit_code,
            output=output,
            agent_id=task.agent_id,
        )
        self._send(result)
        if not (task._seen or self._closed):
            self._results.append(result)
            self._pending.set()

    def _send(self, payload: object) -> None:
        if self.emit is None:
            return
        try:
            self.emit(payload)
        except Exception:
            log.exception("background task event callback failed")

    # ----------------------------------------------------------------- reading and stopping

    def get(self, task_id: str) -> BackgroundTask | None:
        return self._tasks.get(task_id)

    def tasks(self) -> list[BackgroundTask]:
        """Every task and monitor started, in start order."""
        return list(self._tasks.values())

    def running(self) -> list[BackgroundTask]:
        return [t for t in self._tasks.values() if t.running]

    def _require(self, task_id: str) -> BackgroundTask:
        task = self._tasks.get(task_id)
        if task is None:
            known = ", ".join(self._tasks) or "none"
            raise KeyError(f"no background task '{task_id}' (known: {known})")
        return task

    def read_output(self, task_id: str) -> TaskOutput:
        """Output printed since the last read. Reading a task that has ended marks its
        result as seen, so it is not folded into the conversation again.
        Raises `KeyError` for an unknown id."""
        task = self._require(task_id)
        text = "".join(task._unread)
        dropped = task._dropped
        task._unread.clear()
        task._unread_chars = 0
        task._dropped = 0
        if not task.running:
            self._mark_seen(task)
        spill = task.result.full_output_path if task.result is not None else None
        return TaskOutput(task.id, text, task.status, task.exit_code, dropped, spill)

    async def wait(self, task_id: str, timeout: float | None = None) -> BackgroundTask:  # noqa: ASYNC109
        """Wait up to ``timeout`` seconds (forever if None) for the task to end; returns it
        either way. Raises `KeyError` for an unknown id."""
        task = self._require(task_id)
        if task.running:
            try:
                await asyncio.wait_for(task._done.wait(), timeout)
            except TimeoutError:
                pass
        return task

    async def kill(self, task_id: str) -> BackgroundTask:
        """Stop a task or monitor and its whole process tree; returns it once ended.
        Its end is reported (``bg_result`` / closing ``monitor_event``) but not queued
        for the conversation: the caller already knows. Raises `KeyError` for an unknown id."""
        task = self._require(task_id)
        if task.running:
            task._seen = True
            task.abort.abort("killed")
            await task._done.wait()
        return task

    def _mark_seen(self, task: BackgroundTask) -> None:
        task._seen = True
        self._results = [r for r in self._results if r.task_id != task.id]
        if not (self._results or self._lines):
            self._pending.clear()

    # ----------------------------------------------------------------- draining

    @property
    def has_pending(self) -> bool:
        """True when `drain_results` or `drain_monitor_lines` would return something."""
        return bool(self._results or self._lines)

    async def wait_pending(self) -> None:
        """Sleep until a result or a monitor line is queued for draining."""
        await self._pending.wait()

    def drain_results(self) -> list[BgResult]:
        """The finished tasks' results not yet seen, in completion order; empties the queue.
        Emits ``DrainBackgroundTask`` when the list is not empty. Call at an iteration
        boundary, then add `results_message` of the list to the conversation."""
        results, self._results = self._results, []
        if results:
            self._send(DrainBackgroundTask(task_ids=[r.task_id for r in results]))
        if not self._lines:
            self._pending.clear()
        return results

    def drain_monitor_lines(self) -> list[MonitorEvent]:
        """The queued monitor events in arrival order (a note first for each monitor that
        had lines dropped); empties the queue. Emits ``DrainMonitorEvents`` when not
        empty. Call at an iteration boundary, then add `monitor_message` of the list."""
        events = [
            MonitorEvent(monitor_id=mid, line=f"[{count} earlier lines dropped]")
            for mid, count in self._dropped_lines.items()
        ]
        events.extend(self._lines)
        self._lines.clear()
        self._dropped_lines.clear()
        if events:
            ids = list(dict.fromkeys(e.monitor_id for e in events))
            self._send(DrainMonitorEvents(event_count=len(events), monitor_ids=ids))
        if not self._results:
            self._pending.clear()
        return events

    def results_message(self, results: list[BgResult]) -> str:
        """The text of the one message that folds ``results`` into the conversation."""
        parts = ["Background tasks finished:"]
        for result in results:
            task = self._tasks.get(result.task_id)
            command = f" `{task.command}`" if task is not None else ""
            code = "" if result.exit_code is None else f", exit code {result.exit_code}"
            note = f" ({task.error})" if task is not None and task.error else ""
            parts.append(f"\n[{result.task_id}]{command}: {result.status}{code}{note}")
            parts.append(result.output.rstrip("\n") if result.output else "(no output)")
        return "\n".join(parts)

    def monitor_message(self, events: list[MonitorEvent]) -> str:
        """The text of the one message that folds monitor ``events`` into the conversation."""
        lines = ["Monitor output:"]
        for event in events:
            if event.closing:
                lines.append(f"[{event.monitor_id}] (monitor ended: {event.line})")
            else:
                lines.append(f"[{event.monitor_id}] {event.line}")
        return "\n".join(lines)

    name = "background"

    def boundary_messages(self) -> list[AgentMessage]:
        """The iteration-boundary part: drains the finished results and the monitor
        lines, each batch folded into one user message."""
        messages: list[AgentMessage] = []
        results = self.drain_results()
        if results:
            messages.append(UserMessage(content=self.results_message(results)))
        lines = self.drain_monitor_lines()
        if lines:
            messages.append(UserMessage(content=self.monitor_message(lines)))
        return messages

    def attach(self, agent: EventSource | EventBus) -> None:
        """Forward this manager's events to the agent's bus (or to ``agent`` when it is
        a bus); sets `emit`."""
        bus = bus_of(agent)

        def forward(payload: object) -> None:
            bus.emit_nowait(payload)  # type: ignore[arg-type]

        self.emit = forward

    # ----------------------------------------------------------------- closing

    async def aclose(self) -> None:
        """Kill every running task and monitor and wait until their processes are gone —
        every descendant, also those that escaped their process group. Nothing is queued
        afterwards; starting a new task raises `RuntimeError`. When the manager made its
        own runtime, that runtime's spill files are deleted too."""
        self._closed = True
        for task in self._tasks.values():
            if task.running:
                task.abort.abort("closed")
        runners = list(self._runners.values())
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)
        self._runners.clear()
        if self._own_runtime is not None:
            await self._own_runtime.aclose()
