"""`ShellHooks`: Claude Code's shell hooks as one contributor of the agent.

Each event, when it runs, and what a failing hook (crash, timeout) means — the full
table of answers is in ``docs/hooks.md``:

- ``PreToolUse``: before each tool call; exit 2 / ``deny`` blocks it, ``updatedInput``
  replaces its arguments, ``ask`` asks the user (no user: refused), ``allow`` is no
  objection (SkillKit's permission gate still judges). A failing hook **blocks the call**.
- ``PostToolUse``: after each result; a block reason or ``additionalContext`` is added to
  the result the model reads. A failing hook is reported; the result is unchanged.
- ``UserPromptSubmit``: on each user message; a block drops it (the user is told why),
  stdout / ``additionalContext`` is added to it. A failing hook **drops the message**.
- ``Stop``: when a run would end; a block makes the run go on with the reason as the next
  user message (``stop_hook_active`` is true at the next stop). A failing hook is
  reported and the run ends.
- ``SubagentStop``: when a child agent would end (`for_child`); a block makes the child
  go on with the reason. A child's tool calls meet the ``PreToolUse`` and
  ``PostToolUse`` hooks too.
- ``SessionStart`` (``startup`` / ``resume``): before the agent's first message; its
  stdout / ``additionalContext`` becomes a system-prompt section.
- ``SessionEnd`` (when the agent closes), ``PreCompact`` (``auto``), ``Notification``
  (``permission_prompt``, ``elicitation_dialog``): told; a failure is reported.

Any hook's ``"continue": false`` aborts the run (``stopReason`` is reported);
``systemMessage`` is told to the user. Every failure is one ``error`` event of stage
``hooks:<event>`` (and one line to ``notify``). Hooks of one event that match run side
by side; their answers combine in configuration order.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from skillkit.abort import AbortSignal
from skillkit.agent.contributors import AgentHandle, Contributor
from skillkit.events import (
    ErrorInfo,
    Event,
    InputResult,
    ToolCallEvent,
    ToolCallEventResult,
    ToolResultEvent,
)
from skillkit.hooks.config import HookCommand, HookConfig
from skillkit.hooks.decisions import HookAnswer, read_answer
from skillkit.hooks.events import HookMessage
from skillkit.hooks.names import claude_name, from_claude, to_claude
from skillkit.hooks.process import HookProcesses
from skillkit.hooks.transcript import TranscriptFile
from skillkit.models import AgentMessage, TextPart, ToolResult, UserContent
from skillkit.runtime.sandbox import Sandbox
from skillkit.secrets import Redactor

__all__ = ["AskUser", "ShellHooks"]

AskUser = Callable[[str, dict[str, Any], str], Awaitable[bool]]
"""Asks the user whether a tool call may run: (SkillKit tool name, arguments, the hook's
reason) → allowed. Used for a PreToolUse ``ask``."""


class ShellHooks(Contributor):
    """The hooks of ``config`` for one agent (see the module docs). ``cwd`` is the
    workspace; ``sandbox`` the session's sandbox (None: hooks run unconfined);
    ``redactor`` cleans hook output; ``session_id`` is given to hooks (default: the
    agent's conversation id, else a new one); ``ask`` asks the user for a PreToolUse
    ``ask`` (None: refused); ``notify`` gets one line for the user per failure or
    ``systemMessage``. Parts are offered only for the events that have hooks: with no
    hook configured the agent pays nothing."""

    name = "shell-hooks"

    def __init__(
        self,
        config: HookConfig,
        *,
        cwd: str | os.PathLike[str],
        sandbox: Sandbox | None = None,
        redactor: Redactor | None = None,
        session_id: str | None = None,
        ask: AskUser | None = None,
        notify: Callable[[str], None] | None = None,
        permission_mode: Callable[[], str] | None = None,
    ) -> None:
        self.config = config
        self.processes = HookProcesses(cwd, sandbox=sandbox, redactor=redactor)
        self.cwd = str(self.processes.cwd)
        self.session_id = session_id or ""
        self.ask = ask
        self.notify = notify
        self.permission_mode = permission_mode
        self._agent: Any = None
        self._messages: Sequence[AgentMessage] = ()
        self._transcript: TranscriptFile | None = None
        self._started = False
        self._session_context = ""
        self._stop_active = False
        self._closed = False
        self._events = {hook.event for hook in config.hooks}
        self._stop_event = "Stop"
        self._child = False
        self._transcript_name = "transcript.jsonl"
        self._preparing: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ the seam

    def offers(self, part: str) -> bool:
        events = self._events
        match part:
            case "before_tool_call":
                return "PreToolUse" in events
            case "after_tool_result":
                return "PostToolUse" in events
            case "transform_input":
                return bool({"UserPromptSubmit", "SessionStart"} & events)
            case "system_prompt":
                return "SessionStart" in events
            case "stop_check":
                return self._stop_event in events
            case "transform_context":
                return bool(events)
            case _:
                return True

    def attach(self, agent: AgentHandle) -> None:
        self._agent = agent
        if not self.session_id:
            self.session_id = getattr(agent, "conversation_id", None) or str(uuid.uuid4())
        self._prepare()
        bus = agent.events
        if "PreCompact" in self._events:
            bus.on("compaction_start", self._on_compaction)
        if "Notification" in self._events:
            bus.on("approval_needed", self._on_approval)
            bus.on("question_needed", self._on_question)

    def _prepare(self) -> None:
        """Start the tool hooks' sandbox in the background, so the first tool call does
        not wait for it (nothing when no loop runs yet: the first hook starts it)."""
        hooks = [h for h in self.config.hooks if h.event in ("PreToolUse", "PostToolUse")]
        if not hooks or self._child:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._preparing = loop.create_task(self.processes.prepare(hooks))

    async def transform_context(self, messages: list[AgentMessage]) -> list[AgentMessage]:
        self._messages = messages  # the transcript hooks read; nothing is copied
        return messages

    def system_prompt(self) -> str | None:
        return self._session_context or None

    async def transform_input(
        self, content: str | list[UserContent]
    ) -> InputResult | str | list[UserContent] | None:
        if not self._started:
            self._started = True
            if "SessionStart" in self._events:
                await self._session_start()
        hooks = self.config.for_event("UserPromptSubmit")
        if not hooks:
            return None
        prompt = content if isinstance(content, str) else _text_of(content)
        answers = await self._run_all("UserPromptSubmit", hooks, {"prompt": prompt})
        for answer in answers:
            if answer.failure is not None:
                self._report("UserPromptSubmit", f"{answer.failure}; the message was not sent")
                return InputResult(handled=True)
            if answer.blocked or answer.stop:
                why = answer.reason or answer.stop_reason
                self._tell(
                    f"{answer.run.hook.label} blocked the message: {why}", event="UserPromptSubmit"
                )
                return InputResult(handled=True)
        context = "\n\n".join(a.context for a in answers if a.context)
        if not context:
            return None
        if isinstance(content, str):
            return f"{content}\n\n{context}"
        return [*content, TextPart(context)]

    async def before_tool_call(self, call: ToolCallEvent) -> ToolCallEventResult | None:
        name, tool_input = to_claude(call.tool_name, call.args, self.cwd)
        hooks = self.config.for_event("PreToolUse", name)
        if not hooks:
            return None
        payload = {"tool_name": name, "tool_input": tool_input, "tool_use_id": call.tool_call_id}
        answers = await self._run_all("PreToolUse", hooks, payload)
        args: dict[str, Any] | None = None
        ask: HookAnswer | None = None
        for answer in answers:
            if answer.failure is not None:
                return _block(f"{answer.failure}, so the call was not run")
            if answer.stop:
                self._stop_run(answer)
                return _block(answer.stop_reason or f"stopped by {answer.run.hook.label}")
            if answer.blocked:
                return _block(f"Blocked by a PreToolUse hook: {answer.reason}")
            if answer.permission == "ask" and ask is None:
                ask = answer
            if answer.updated_input is not None:
                args = from_claude(call.tool_name, args or call.args, answer.updated_input)
        if ask is not None:
            reason = ask.reason or f"{ask.run.hook.label} asks for confirmation"
            allowed = False
            if self.ask is not None:
                try:
                    allowed = await self.ask(call.tool_name, args or dict(call.args), reason)
                except Exception:  # fail closed: an answer that cannot be had is a no
                    allowed = False
            if not allowed:
                return _block(f"Not run: {reason} (the user did not allow it)")
        return ToolCallEventResult(args=args) if args is not None else None

    async def after_tool_result(self, event: ToolResultEvent) -> ToolResult | None:
        name, tool_input = to_claude(event.tool_name, event.args, self.cwd)
        notes: list[str] = []
        hooks = self.config.for_event("PostToolUse", name)
        if hooks:
            payload: dict[str, Any] = {
                "tool_name": name,
                "tool_input": tool_input,
                "tool_response": _response(event.result),
                "tool_use_id": event.tool_call_id,
            }
            notes += self._notes("PostToolUse", await self._run_all("PostToolUse", hooks, payload))
        if not notes:
            return None
        result = event.result
        return ToolResult(
            [*result.content, TextPart("\n\n" + "\n\n".join(notes))],
            is_error=result.is_error,
            details=result.details,
        )

    async def stop_check(self, messages: list[AgentMessage]) -> str | None:
        self._messages = messages
        event = self._stop_event
        hooks = self.config.for_event(event)
        active, self._stop_active = self._stop_active, False
        answers = await self._run_all(event, hooks, {"stop_hook_active": active})
        reasons: list[str] = []
        for answer in answers:
            if answer.failure is not None:
                self._report(event, answer.failure)
            elif answer.stop:
                return None  # "continue": false wins: the run ends
            elif answer.blocked:
                reasons.append(answer.reason)
        if not reasons:
            return None
        self._stop_active = True
        return f"{event} hook feedback:\n" + "\n".join(reasons)

    def for_child(self) -> ShellHooks | None:
        """The hooks of a child agent of this one (None: none apply): its tool calls
        meet the same ``PreToolUse`` and ``PostToolUse`` hooks, and its end the
        ``SubagentStop`` hooks, which can make the child go on. It shares this agent's
        session id, sandbox and private folder; closing it runs nothing."""
        wanted = {"PreToolUse", "PostToolUse", "SubagentStop"}
        hooks = [hook for hook in self.config.hooks if hook.event in wanted]
        if not hooks:
            return None
        child = ShellHooks(
            HookConfig(hooks=hooks),
            cwd=self.cwd,
            session_id=self.session_id,
            ask=self.ask,
            notify=self.notify,
            permission_mode=self.permission_mode,
        )
        child.processes = self.processes
        child._stop_event = "SubagentStop"
        child._child = True
        child._transcript_name = f"subagent-{uuid.uuid4().hex[:12]}.jsonl"
        child._started = True
        return child

    async def aclose(self) -> None:
        if self._closed or self._child:
            return
        self._closed = True
        preparing, self._preparing = self._preparing, None
        if preparing is not None and not preparing.done():
            preparing.cancel()
            with contextlib.suppress(BaseException):
                await preparing
        try:
            hooks = self.config.for_event("SessionEnd", "other")
            if hooks and self._started:
                answers = await self._run_all("SessionEnd", hooks, {"reason": "other"})
                for answer in answers:
                    if answer.failure is not None:
                        self._report("SessionEnd", answer.failure)
        finally:
            self.processes.close()
            if self.processes.sandbox is not None and self._started:
                self.processes.sandbox.close()  # its private /tmp, made again by a late hook

    # ------------------------------------------------------------------ events

    async def _session_start(self) -> None:
        source = "resume" if getattr(self._agent, "messages", None) else "startup"
        hooks = self.config.for_event("SessionStart", source)
        answers = await self._run_all("SessionStart", hooks, {"source": source})
        contexts = []
        for answer in answers:
            if answer.failure is not None:
                self._report("SessionStart", answer.failure)
            elif answer.context:
                contexts.append(answer.context)
        self._session_context = "\n\n".join(contexts)

    async def _on_compaction(self, event: Event[Any]) -> None:
        hooks = self.config.for_event("PreCompact", "auto")
        payload = {"trigger": "auto", "custom_instructions": ""}
        for answer in await self._run_all("PreCompact", hooks, payload):
            if answer.failure is not None:
                self._report("PreCompact", answer.failure)

    async def _on_approval(self, event: Event[Any]) -> None:
        tool = claude_name(str(getattr(event.payload, "tool_name", "")))
        await self._notification(
            f"SkillKit needs your permission to use {tool}", "permission_prompt"
        )

    async def _on_question(self, event: Event[Any]) -> None:
        await self._notification("SkillKit has a question for you", "elicitation_dialog")

    async def _notification(self, message: str, kind: str) -> None:
        hooks = self.config.for_event("Notification", kind)
        payload = {"message": message, "notification_type": kind}
        for answer in await self._run_all("Notification", hooks, payload):
            if answer.failure is not None:
                self._report("Notification", answer.failure)

    # ------------------------------------------------------------------ running

    async def _run_all(
        self, event: str, hooks: Sequence[HookCommand], fields: dict[str, Any]
    ) -> list[HookAnswer]:
        """Run ``hooks`` side by side with the common fields and ``fields``; their
        answers in configuration order. Never raises for a hook's failure."""
        if not hooks:
            return []
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self._transcript_path()),
            "cwd": self.cwd,
            "hook_event_name": event,
            "permission_mode": self._mode(),
            **fields,
        }
        abort = self._abort_signal()
        runs = await asyncio.gather(*(self.processes.run(h, payload, abort) for h in hooks))
        answers = [read_answer(event, run) for run in runs]
        for answer in answers:
            if answer.message:
                self._tell(answer.message, event=event)
            if answer.stop and event not in ("PreToolUse", "Stop"):
                self._stop_run(answer)
        return answers

    def _transcript_path(self) -> str:
        if self._transcript is None:
            self._transcript = TranscriptFile(
                self.processes.folder / self._transcript_name,
                session_id=self.session_id,
                cwd=self.cwd,
            )
        messages = self._messages
        if not messages and self._agent is not None:
            messages = getattr(self._agent, "messages", ()) or ()
        return str(self._transcript.update(messages))

    def _notes(self, event: str, answers: list[HookAnswer]) -> list[str]:
        notes = []
        for answer in answers:
            if answer.failure is not None:
                self._report(event, answer.failure)
            if answer.blocked:
                notes.append(f"{event} hook feedback: {answer.reason}")
            if answer.context:
                notes.append(answer.context)
        return notes

    def _mode(self) -> str:
        if self.permission_mode is not None:
            try:
                return self.permission_mode()
            except Exception:
                return "default"
        return "default"

    def _abort_signal(self) -> AbortSignal | None:
        signal = getattr(self._agent, "abort_signal", None)
        return signal if isinstance(signal, AbortSignal) else None

    def _stop_run(self, answer: HookAnswer) -> None:
        reason = answer.stop_reason or f"stopped by {answer.run.hook.label}"
        self._tell(reason, event=answer.run.hook.event)
        abort = getattr(self._agent, "abort", None)
        if callable(abort):
            abort(reason)

    def _report(self, event: str, line: str) -> None:
        """A failure: an ``error`` event of stage ``hooks:<event>`` and a line."""
        if self._agent is not None:
            self._agent.events.emit_nowait(ErrorInfo(stage=f"hooks:{event}", message=line))
        if self.notify is not None:
            self.notify(line)

    def _tell(self, line: str, *, event: str) -> None:
        """A line for the user: a ``hook_message`` event and ``notify``."""
        if self._agent is not None:
            self._agent.events.emit_nowait(HookMessage(event=event, message=line))
        if self.notify is not None:
            self.notify(line)


def _block(reason: str) -> ToolCallEventResult:
    return ToolCallEventResult(block=True, reason=reason)


def _text_of(content: Sequence[UserContent]) -> str:
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _response(result: ToolResult) -> dict[str, Any]:
    return {"output": result.output, "is_error": result.is_error}
