"""The interactive terminal session: read a prompt, run it, draw the run, repeat.

Input is read with prompt_toolkit; each run is drawn by a `TerminalRenderer` listening
to the session's stream (`AgentSession.listen`). Keys at the prompt:

- Enter sends the prompt; Ctrl-J inserts a new line (a pasted text keeps its lines).
- Ctrl-C arms exit (a second one leaves, code 130); Ctrl-D, ``/quit``, ``/exit``: code 0.
- Shift+Tab cycles the permission mode; the toolbar under the prompt shows it.
- ↑ and Ctrl-R reach earlier prompts (`skillkit.frontends.prompt_history`); Tab
  completes (`skillkit.frontends.prompt_completion`); Ctrl-O shows the last tool call
  whole above the prompt (`skillkit.frontends.prompt_view`), Ctrl-O again folds it;
  ``/expand N`` shows call N (the number a folded result's hint gives; ``/expand``
  lists the calls kept).
  ``@image.png`` sends the image.

While a run works (`skillkit.frontends.run_input`), a working line shows what the agent
does and for how long, with an input line under it; nothing typed is echoed into the
answer. Enter steers the run with the typed text (`AgentSession.steer`), Alt+Enter
queues it for after the run (`AgentSession.follow_up`), Ctrl-J inserts a new line, Esc
aborts the run (`AgentSession.abort`), Ctrl-C aborts it too and a second Ctrl-C leaves
(exit code 130). While a ``!command`` works no run reads what is typed: Enter and
Alt+Enter send nothing. Text typed and not sent is put back at the next prompt.

The terminal is handed the agent's `AgentSession`, as every face is, never the runner:
a prompt is `AgentSession.run`, ``!command`` is `AgentSession.bash` (judged by the gate,
run like the model's ``bash`` calls, the command and its output added to the
conversation when it ends, so the model reads them with the next prompt), and the
terminal answers the session's ui requests (`AgentSession.on_ui_request`). Events are
drawn by the renderer, a listener of the session's stream, as they happen.

With a permission layer, a call that needs approval is drawn when the session asks,
one request at a time, answered with one key (`skillkit.frontends.answers`) and handed
to `AgentSession.respond`; ``ask_user`` questions likewise (Ctrl-C declines those still
open). Keys typed before such a prompt is drawn never answer it. A skill action's panel
shows the exact argument list it will run. Skills are watched for changes
(`skillkit.frontends.terminal_skills`).

Everything printed goes through the renderer, which redacts secrets and neutralizes
control characters (see `skillkit.frontends.terminal`).

Handed a `SessionSwitch` (``sessions``, as ``skillkit`` does), ``/resume ID`` goes on
with another saved session of this folder through it (an id or a prefix of one; Tab
completes them, each with its name or first prompt; ``/resume`` alone opens the
picker): the terminal then draws the new session and shows its earlier turns.

Slash commands are looked up in the session's one command table
(`AgentSession.run_command`): the session's own commands, SkillKit's from the built-in
plugin and any plugin's — with the terminal's own commands
(`skillkit.frontends.commands`) registered over them while the terminal runs. A line
that is not a command (``/usr/bin/env``, plain text) goes to the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from skillkit.commands.dispatch import CommandResult
from skillkit.events import AgentStart, Event
from skillkit.frontends.agent_session import AgentSession, SessionCommandError, UiRequest
from skillkit.frontends.commands import TerminalCommands
from skillkit.frontends.interrupt import on_interrupt
from skillkit.frontends.prompt_completion import (
    PromptCompleter,
    attach_mentions,
    entry_choices,
    fuzzy_files,
    outgoing_prompt,
    workspace_files,
)
from skillkit.frontends.prompt_view import PromptView
from skillkit.frontends.request_answers import RequestAnswers
from skillkit.frontends.rewind_chooser import TerminalRewind
from skillkit.frontends.run_input import (
    ESCAPE_DELAY,
    RUN_KEYS,
    RunInput,
    WorkStatus,
    quiet_keyboard,
)
from skillkit.frontends.session_resume import TerminalResume
from skillkit.frontends.terminal import TerminalRenderer
from skillkit.frontends.terminal_skills import (
    action_preview,
    load_problem,
    skill_names,
    start_watcher,
)
from skillkit.permissions.events import ApprovalNeeded, QuestionNeeded

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from skillkit.commands.dispatch import CommandRegistry
    from skillkit.extensions.registries import Frontend
    from skillkit.frontends.session_switch import SessionSwitch
    from skillkit.model_registry import ModelRegistry
    from skillkit.models import UserContent
    from skillkit.permissions import Permissions
    from skillkit.skills.registry import SkillRegistry
    from skillkit.skills.watch import SkillWatcher

__all__ = [
    "INTERRUPTED",
    "InteractiveSession",
    "PromptCompleter",
    "attach_mentions",
    "fuzzy_files",
    "workspace_files",
]

INTERRUPTED = 130  # the exit code after Ctrl-C Ctrl-C (128 + SIGINT, as shells do)

_Request = ApprovalNeeded | QuestionNeeded
_COMMAND_QUIET = 0.5  # a command shows the working line once it has run this long


class InteractiveSession:
    """Runs prompts typed by the user on ``agent`` (an `AgentSession`) until the user
    leaves.

    The terminal listens to the session's stream with ``renderer`` for its lifetime
    (and draws approval requests and questions itself, when it asks about them). With
    a permission layer (``agent.permissions``) it answers approval requests and
    questions from the keyboard and offers Shift+Tab and ``/mode``. Commands come from
    the session's table; the skills watched for changes (``watch_skills``) are
    ``skills``, else the session's plugin manager's. ``frontend`` is passed to command
    handlers as `CommandContext.frontend`; ``first_prompt`` runs as if typed at once;
    ``sessions`` (a `SessionSwitch` whose current session is ``agent``) offers
    ``/resume``, after which the terminal drives the session switched to.
    `run` returns the process exit code: 0 for
    Ctrl-D, ``/quit`` or ``/exit``, `INTERRUPTED` (130) for Ctrl-C Ctrl-C. The session
    stays open when the terminal ends: its owner closes it.
    """

    def __init__(
        self,
        agent: AgentSession,
        renderer: TerminalRenderer | None = None,
        *,
        title: str = "",
        skills: SkillRegistry | None = None,
        watch_skills: bool = True,
        frontend: Frontend | None = None,
        first_prompt: str = "",
        sessions: SessionSwitch | None = None,
    ) -> None:
        self.agent_session = agent
        self.sessions = sessions
        self.first_prompt = first_prompt  # run before the first one is read
        """The `AgentSession` the terminal drives."""
        self.renderer = renderer if renderer is not None else TerminalRenderer()
        if self.renderer.models is None:
            self.renderer.models = agent.models  # prices the cache savings in the footer
        self.title = title
        self.permissions: Permissions | None = agent.permissions
        self._root = Path.cwd()  # where @path mentions are found
        if skills is None and agent.manager is not None:
            skills = agent.manager.registries.skills
        self.skills = skills
        self.watch_skills = watch_skills
        self.frontend = frontend
        self.status = WorkStatus()
        self._requests: asyncio.Queue[_Request] | None = None
        self._interrupt: Callable[[], None] | None = None
        self._escape: Callable[[], None] | None = None
        self._in_run = False
        self._steered: list[str] = []  # sent with Enter during the run in flight
        self._shell_running = False  # a !command works: no run reads what is typed
        self._queued: list[str] = []  # sent with Alt+Enter, shown when their run starts
        self._view = PromptView(self.renderer, lambda: self.agent_session)
        self._watcher: SkillWatcher | None = None
        self._stopping: set[asyncio.Future[None]] = set()  # watchers left at a switch
        self._unbind: Callable[[], None] = lambda: None
        self._rewind = TerminalRewind(agent, self.renderer, frontend)  # /rewind, /undo
        self._resume = TerminalResume(sessions, self.renderer) if sessions else None
        self._input = RunInput(
            self.status,
            on_enter=lambda text: self._send(text, later=False),
            on_alt_enter=lambda text: self._send(text, later=True),
            on_escape=lambda: self._escape() if self._escape is not None else None,
            on_interrupt=lambda: self._interrupt() if self._interrupt is not None else None,
            partial=self.renderer.partial_line,
        )
        if self.renderer.action_preview is None and self.skills is not None:
            self.renderer.action_preview = lambda name, args: action_preview(
                self.skills, name, args
            )
        # The key given in code is a secret too, whatever the environment holds.
        self.renderer.redactor = self.renderer.redactor.with_secrets(agent.secrets())

    @property
    def commands(self) -> CommandRegistry:
        """The command table the terminal dispatches through (the session's)."""
        return self.agent_session.commands

    async def run(self) -> int:
        from prompt_toolkit import PromptSession

        from skillkit.frontends.prompt_history import PromptHistory, history_file

        session: PromptSession[str] = PromptSession(
            self._view.message,
            history=PromptHistory(history_file(), self.renderer.redactor),
            multiline=True,
            key_bindings=self._view.key_bindings(),
            bottom_toolbar=self._view.toolbar if self.permissions is not None else None,
            completer=PromptCompleter(
                lambda: self.agent_session.commands.list(),
                lambda: skill_names(self.skills),
                self._root,
                lambda: _model_ids(self.agent_session.models),
                lambda: entry_choices(self.agent_session.session),
                self._resume.choices if self._resume is not None else list,
            ).completer(),
            complete_while_typing=False,
        )
        session.app.ttimeoutlen = ESCAPE_DELAY
        self._requests = asyncio.Queue()
        renderer = self.renderer
        drawn_by_renderer, held = renderer.draw_requests, renderer.hold_partial_line
        renderer.draw_requests = False  # drawn when asked, one at a time
        renderer.hold_partial_line = True  # shown by the working lines until it ends
        renderer.expand_hint = "/expand {n} shows all"

        def give_back_requests() -> None:
            renderer.draw_requests, renderer.hold_partial_line = drawn_by_renderer, held
            renderer.expand_hint = ""

        self._unbind = self._bind(self.agent_session)
        undo: list[Callable[[], None]] = [give_back_requests, lambda: self._unbind()]
        if self.sessions is not None:
            undo.append(self.sessions.on_change(self._switched))
        self._watcher = self._start_watcher()
        try:
            with quiet_keyboard():
                code = await self._loop(session)
            self._resume_hint()
            return code
        finally:
            if self._watcher is not None:
                await self._watcher.stop()
            for step in reversed(undo):
                step()

    def _bind(self, agent: AgentSession) -> Callable[[], None]:
        """Draw ``agent``'s stream and answer its requests, the terminal's commands in
        its table; returns the function undoing it."""
        own = TerminalCommands(
            self.renderer,
            agent,
            expand=self._view.expand,
            resume=self._resume.command if self._resume is not None else None,
        )
        undo = [
            agent.listen(self.renderer.emit),
            agent.listen(self.status.emit),
            agent.listen(self._show_queued),
            agent.on_ui_request(self._queue_request),
            own.install(agent.commands),
        ]

        def unbind() -> None:
            for step in reversed(undo):
                step()

        return unbind

    def _switched(self) -> None:
        """The session switch changed session (``/resume``, ``/open_session``): drive
        the new one — its stream, requests, commands, skills — and show its earlier
        turns."""
        from skillkit.frontends.session_view import show_earlier_conversation

        assert self.sessions is not None
        agent = self.sessions.current
        self._unbind()
        self.agent_session = agent
        self.permissions = agent.permissions
        self.skills = agent.manager.registries.skills if agent.manager is not None else None
        self._rewind = TerminalRewind(agent, self.renderer, self.frontend)
        self.renderer.redactor = self.renderer.redactor.with_secrets(agent.secrets())
        self._unbind = self._bind(agent)
        watcher, self._watcher = self._watcher, self._start_watcher()
        if watcher is not None:
            stopping = asyncio.ensure_future(watcher.stop())
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)
        self.renderer.console.print()
        if not show_earlier_conversation(self.renderer, agent):
            recorded = agent.session
            self.renderer.info(f"session {recorded.id if recorded else '(not saved)'}: empty")

    def _start_watcher(self) -> SkillWatcher | None:
        """A watcher reloading the skills when their files change (None: not watched)."""
        if not self.watch_skills:
            return None
        return start_watcher(self.skills, self.renderer.notice)

    def _resume_hint(self) -> None:
        """On leaving, how to go on with this session (when it is saved and holds a
        conversation): ``skillkit -c``, or ``skillkit --session ID`` once another session
        of the folder is newer."""
        agent = self.agent_session
        recorded = agent.session
        if recorded is None or not agent.messages:
            return
        self.renderer.info(
            f"to go on with this session: skillkit -c (or skillkit --session {recorded.id})"
        )

    # ----- the prompt loop

    async def _loop(self, session: PromptSession[str]) -> int:
        from prompt_toolkit.patch_stdout import patch_stdout

        renderer = self.renderer
        if self.title:
            renderer.info(self.title)
        from skillkit.frontends.session_view import show_earlier_conversation

        show_earlier_conversation(renderer, self.agent_session)  # a resumed session
        renderer.info(
            "Enter a prompt (Ctrl-J for a new line). While it runs: Enter steers, "
            "Alt+Enter queues, Esc aborts. Ctrl-D or /quit exits; /help for help."
        )
        problem = load_problem(self.skills)
        if problem is not None:
            renderer.notice(problem)
        exit_armed = False
        while True:
            try:
                # Output from outside the prompt (a mode change, a skill reload, a
                # finished background task) is drawn above it.
                typed, self.first_prompt = self.first_prompt, ""  # `skillkit "task"`
                if typed:
                    renderer.prompt_line(typed)
                else:
                    with patch_stdout(raw=True):
                        typed = await session.prompt_async(default=self._input.take_text())
                self._view.expanded = None  # folded once a prompt is sent
                text = typed.strip()
            except KeyboardInterrupt:
                if exit_armed:
                    return INTERRUPTED
                exit_armed = True
                renderer.notice("Press Ctrl-C again to exit (or Ctrl-D, /quit).")
                continue
            except EOFError:
                return 0
            if not text:
                continue
            exit_armed = False
            if self._rewind.handles(text):  # the chooser; asks before overwriting
                await self._rewind.run(text)
                continue
            if text.startswith("/"):
                result = await self._command(text)
                if self._resume is not None and self._resume.picking:
                    chosen = await self._resume.pick()  # /resume alone: here, not in it
                    if chosen is not None:
                        await self._command(f"/resume {chosen}")
                if result is not None:
                    if result.quit:
                        return 0
                    if result.send is None:
                        continue
                    text = result.send
            shell = text.startswith("!") and bool(text[1:].strip())
            prompt: str | list[UserContent] = text[1:].strip()
            if not shell:
                model = str(self.agent_session.get_state().get("model") or "")
                try:
                    prompt, shown = outgoing_prompt(
                        text, self._root, model, self.agent_session.models.get
                    )
                except ValueError as exc:
                    renderer.notice(str(exc))
                    continue
                if shown:
                    renderer.info(shown)
            quit_now, aborted = await self._run_prompt(prompt, shell)
            if quit_now:
                return INTERRUPTED
            exit_armed = aborted
            renderer.console.print()

    async def _command(self, text: str) -> CommandResult | None:
        """Dispatch ``text`` and show what the command says; None when ``text`` is not a
        command. A command still running after half a second shows the working line.
        Ctrl-C (or Esc) aborts the agent's work the command started (a compaction), or
        else stops the command; a second Ctrl-C stops it in any case."""
        agent = self.agent_session
        task = asyncio.ensure_future(agent.run_command(text, frontend=self.frontend))
        presses = 0

        def interrupted() -> None:
            nonlocal presses
            presses += 1
            if presses == 1 and agent.is_running:
                agent.abort("interrupted by the user")
            else:
                task.cancel()

        self._interrupt = self._escape = interrupted
        self.status.begin(f"running {text.split()[0]}")
        self._input.keys = "esc stops"
        with on_interrupt(interrupted):
            try:
                await asyncio.wait([task], timeout=_COMMAND_QUIET)
                if not task.done():
                    await self._input.show_until([task])
                result = await task
            except asyncio.CancelledError:
                if not presses:
                    raise
                self.renderer.notice("command interrupted")
                return CommandResult()
            finally:
                self._interrupt = self._escape = None
        if result is not None:
            if result.output:
                self.renderer.info(result.output)
            elif result.data:
                self.renderer.info(_describe(result.data))
            if result.error:
                self.renderer.notice(result.error)
        return result

    async def _run_prompt(
        self, text: str | list[UserContent], shell: bool = False
    ) -> tuple[bool, bool]:
        """Run one prompt (``shell``: the ``!command`` ``text``); returns (the user asked
        to exit, the run was aborted).

        The working line is shown while the run works; it is hidden while an approval
        or a question is asked, one request at a time."""
        agent = self.agent_session
        requests = self._requests
        assert requests is not None
        if shell:
            self.status.begin(f"running {text}")
        else:
            self.status.begin()
        self._input.keys = RUN_KEYS
        self._steered = []
        start = len(agent.messages)
        task = asyncio.ensure_future(
            self._shell(text) if shell and isinstance(text, str) else self._drain(text)
        )
        aborting = leaving = False

        def abort(*, noted: bool = False) -> None:  # Esc, or a first Ctrl-C (noted)
            nonlocal aborting
            if not aborting:
                aborting = True
                agent.abort("interrupted by the user")
                if noted:  # how to leave, kept above: a second Ctrl-C exits
                    self.renderer.notice("aborting… (Ctrl-C again to exit)")
                else:  # Esc: only the working line says so, until the run ends
                    self._input.keys = "aborting… (Ctrl-C again to exit)"

        def interrupted() -> None:  # Ctrl-C: abort; once aborting, leave
            nonlocal leaving
            if not aborting:
                abort(noted=True)
            else:
                leaving = True
                task.cancel()

        self._interrupt, self._escape, self._in_run = interrupted, abort, True
        self._shell_running = shell
        with on_interrupt(interrupted):
            try:
                while not task.done():
                    request = asyncio.ensure_future(requests.get())
                    try:
                        await self._input.show_until([task, request])
                    finally:
                        if not request.done():
                            request.cancel()
                    if request.done() and not request.cancelled():
                        await self._answer(request.result())
                await task
            except asyncio.CancelledError:
                if not leaving:
                    raise
                return True, True
            finally:
                self._interrupt = self._escape = None
                self._in_run = self._shell_running = False
                while not requests.empty():  # asked by the run that ended: answered
                    requests.get_nowait()
        self._report_unread(start)
        return False, aborting

    def _report_unread(self, start: int) -> None:
        """Say which steering messages the run ended without reading (sent as it was
        ending, or aborted): the agent keeps them for the next prompt."""
        from skillkit.models import UserMessage

        read = {
            m.content
            for m in self.agent_session.messages[start:]
            if isinstance(m, UserMessage) and isinstance(m.content, str)
        }
        for text in self._steered:
            if text not in read:
                self.renderer.notice(f"↳ not read by this run, sent with your next prompt: {text}")
        self._steered = []

    async def _drain(self, text: str | list[UserContent]) -> None:
        await self.agent_session.run(text)

    async def _shell(self, command: str) -> None:
        """``!command``: run it through the session (gate, sandbox, then the context)."""
        try:
            outcome = await self.agent_session.bash(command)
        except SessionCommandError as exc:
            self.renderer.notice(str(exc))
            return
        if not outcome.get("ran"):
            self.renderer.notice(f"✗ not run: {outcome.get('reason') or 'refused'}")
        else:
            # the note is in the conversation already (filed as the command ended)
            self.renderer.info(
                "↳ added to the conversation: the model sees it with your next prompt"
            )

    def _send(self, text: str, *, later: bool) -> bool:
        """Enter (``later`` False) steers the run in flight with ``text``; Alt+Enter
        queues it to run after. Outside a run (a command works) and while a
        ``!command`` works (no run reads it) nothing is sent and the text stays in the
        input line (returns False), as a ``!command`` typed during a run does."""
        agent = self.agent_session
        if not self._in_run:
            return False
        if self._shell_running:
            self.renderer.aside(
                "no run reads it while a !command works: it stays in the input line,"
                " Enter once this ends"
            )
            return False
        if text.startswith("!") and text[1:].strip():  # never sent to the model as text
            self.renderer.aside(
                "a !command runs between runs: it stays in the input line, Enter once this ends"
            )
            return False
        if later:
            agent.follow_up(text)
            self._queued.append(text)
            self.renderer.aside(f"⧗ queued for after this run: {text}")
        else:
            agent.steer(text)
            self._steered.append(text)
            self.renderer.aside(f"↳ sent to the running agent: {text}")
        return True

    def _show_queued(self, event: Event) -> None:
        """A queued message (Alt+Enter) is shown as a prompt when the run it starts
        begins, so the answer that follows has its question above it."""
        payload = event.payload
        if not isinstance(payload, AgentStart) or event.parent_id is not None:
            return
        if payload.prompt in self._queued:
            self._queued.remove(payload.prompt)
            self.renderer.end_line()
            self.renderer.console.print()
            self.renderer.prompt_line(payload.prompt)

    # ----- approvals and questions

    def _queue_request(self, request: UiRequest) -> None:
        if self._requests is not None:
            self._requests.put_nowait(request.payload)

    async def _answer(self, request: _Request) -> None:
        await RequestAnswers(self.agent_session, self.renderer, self._interrupt).answer(request)


def _describe(data: Mapping[str, object]) -> str:
    """A command's answer, for the terminal: one ``key: value`` line per field."""
    import json

    return "\n".join(
        f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for key, value in data.items()
    )


def _model_ids(models: ModelRegistry) -> list[str]:
    """The model ids offered after ``/model``: every model of the agent's registry."""
    return [f"{m.provider}:{m.id}" for m in models.list()]
