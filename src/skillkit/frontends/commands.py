"""The commands the interactive terminal owns.

Every other command is in the session's one command table (`AgentSession.commands`:
the session's own, SkillKit's through the built-in plugin, any plugin's). The terminal
registers these over them, with ``replace=True`` and source ``frontend:interactive``,
for as long as it runs; each wraps the command it replaces, so a plugin's version is
still the one that does the work:

=====================  ==========================================================
command                what the terminal adds
=====================  ==========================================================
``/help [COMMAND]``    the keys (Shift+Tab, Ctrl-C...) after the command list
``/mode [NAME]``       show the permission mode, or switch to NAME (with a gate)
``/skill:NAME ACTION`` the action's call and result drawn as panels; Ctrl-C aborts it
``/compact [TEXT]``    no second summary line: the renderer draws the compaction
``/tree``              each answer's first words rendered as Markdown on its line
``/expand [N]``        (the terminal's own) tool call N whole above the prompt
``/resume [ID]``       (the terminal's own) go on with another saved session of
                       this folder (an id or a prefix; alone: the picker)
=====================  ==========================================================
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from skillkit.commands.dispatch import (
    Argument,
    CommandContext,
    CommandError,
    CommandResult,
    call_command,
    run_command,
)
from skillkit.extensions.registries import Command, CommandRegistry
from skillkit.frontends.interrupt import on_interrupt
from skillkit.permissions import Permissions

if TYPE_CHECKING:
    from skillkit.events import Event
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.terminal import TerminalRenderer

__all__ = ["KEYS", "SOURCE", "TerminalCommands"]

SOURCE = "frontend:interactive"
"""The source the terminal's own commands are registered with."""

KEYS: dict[str, str] = {
    "Ctrl-J": "insert a new line in the prompt",
    "Ctrl-R": "search the prompts typed before (also in earlier sessions)",
    "Ctrl-O": "the last tool call whole above the prompt; again to fold it (/expand N: any)",
    "Enter (during a run)": "send the typed text to the running agent (steer)",
    "Alt+Enter (during a run)": "queue the typed text for after the run",
    "Esc": "abort the running prompt or command",
    "Shift+Tab": "next permission mode (default → accept_edits → plan)",
    "Ctrl-C": "abort the running prompt or command; twice to exit (code 130)",
    "Ctrl-D": "leave SkillKit (at an empty prompt)",
}


class TerminalCommands:
    """The terminal's commands for one session: ``renderer`` draws, ``session`` is the
    agent's `AgentSession` (its permission layer, if any, offers ``/mode``). `install`
    registers them in a table (default: the session's) and returns a function putting
    back what they replaced."""

    def __init__(
        self,
        renderer: TerminalRenderer,
        session: AgentSession,
        *,
        expand: Callable[[str], str | None] | None = None,
        resume: Callable[[str], Awaitable[str | None]] | None = None,
    ) -> None:
        self.renderer = renderer
        self.session = session
        self.expand = expand
        """``/expand [N]``'s handler (the terminal shows tool call N whole), or None: no
        ``/expand``."""
        self.resume = resume
        """``/resume [ID]``'s handler (the terminal goes on with session ID through its
        session switch), or None: no ``/resume``."""

    @property
    def permissions(self) -> Permissions | None:
        return self.session.permissions

    def install(self, registry: CommandRegistry | None = None) -> Callable[[], None]:
        from skillkit.commands.builtin import compact_command, help_command
        from skillkit.commands.skills import skill_command

        if registry is None:
            registry = self.session.commands
        table = registry

        def previous(name: str, fallback: Command) -> Command:
            return table.get(name) or fallback

        replaced = {
            name: (command, registry.source_of(command.name))
            for name in ("help", "mode", "skill", "compact", "tree")
            if (command := registry.get(name)) is not None
        }
        help_ = previous("help", Command("help", "list the commands", help_command))
        skill = previous("skill", Command("skill", "use a skill", skill_command))
        compact = previous(
            "compact",
            Command(
                "compact",
                "compact",
                compact_command,
                arguments=(Argument("instructions", rest=True),),
            ),
        )
        ours = [
            Command(
                "help",
                help_.description,
                lambda ctx, args: self._help(help_, ctx, args),
                usage=help_.usage,
            ),
            Command(
                "skill",
                skill.description,
                lambda ctx, args: self._skill(skill, ctx, args),
                usage=skill.usage,
            ),
            Command(
                "compact",
                compact.description,
                lambda ctx, args: self._compact(compact, ctx, args),
                usage=compact.usage,
                arguments=compact.arguments,
            ),
        ]
        tree = table.get("tree")
        if tree is not None:
            ours.append(
                Command(
                    "tree",
                    tree.description,
                    lambda ctx, args: self._tree(tree, ctx, args),
                    usage=tree.usage,
                    arguments=tree.arguments,
                )
            )
        expand = self.expand
        if expand is not None:
            ours.append(
                Command(
                    "expand",
                    "show tool call N whole above the prompt, or list the calls",
                    lambda ctx, args: expand(args),
                    usage="[N]",
                )
            )
        resume = self.resume
        if resume is not None:
            ours.append(
                Command(
                    "resume",
                    "go on with another saved session of this folder (alone: pick one)",
                    lambda ctx, args: resume(args),
                    usage="[ID]",
                )
            )
        if self.permissions is not None:
            ours.append(
                Command(
                    "mode",
                    "show the permission mode, or switch to NAME",
                    self._mode,
                    usage="[NAME]",
                )
            )
        for command in ours:
            table.register(command, source=SOURCE, replace=True)

        def uninstall() -> None:
            for name in table.unregister_by_source(SOURCE):
                if name in replaced:
                    command, source = replaced[name]
                    table.register(command, source=source, replace=True)

        return uninstall

    # ----- the commands

    async def _help(self, inner: Command, ctx: CommandContext, args: str) -> CommandResult:
        result = await run_command(inner, args, ctx)
        if args.strip() or not result.ok:
            return result
        width = max(map(len, KEYS))
        keys = [
            f"  {key:<{width}}  {text}"
            for key, text in KEYS.items()
            if self.permissions is not None or key != "Shift+Tab"
        ]
        text = "\n".join([result.output, "Keys:", *keys]).lstrip("\n")
        console = self.renderer.console
        if console.is_terminal:  # long lines go on under their own column, not at the edge
            text = "\n".join(_hanging(line, console.width - 1) for line in text.split("\n"))
        return CommandResult(output=text)

    async def _tree(self, inner: Command, ctx: CommandContext, args: object) -> CommandResult:
        """``/tree`` drawn with its answers rendered as Markdown (when the renderer
        renders Markdown); ``/tree ID`` and every other face: the command's own answer."""
        from skillkit.frontends.session_view import draw_tree

        if isinstance(args, str):
            result = await run_command(inner, args, ctx)
        else:
            result = await call_command(inner, dict(args) if isinstance(args, dict) else {}, ctx)
        session = self.session.session
        typed = args.strip() if isinstance(args, str) else args
        if typed or not result.ok or session is None or not self.renderer.renders_markdown():
            return result
        draw_tree(self.renderer, session, result.output.split("\n"))
        return CommandResult(quit=result.quit, send=result.send)

    def _mode(self, ctx: CommandContext, args: str) -> str | None:
        from skillkit.permissions import PermissionMode

        permissions = self.permissions
        assert permissions is not None
        name = args.strip()
        if not name:
            lines: builtins.list[str] = []
            for mode in PermissionMode:
                if mode is PermissionMode.BYPASS and not permissions.gate.modes.bypass_allowed:
                    continue
                mark = "●" if mode is permissions.mode else " "
                lines.append(f"{mark} {mode.value:<12} {mode.description}")
            return "\n".join(lines)
        try:
            changed = self.session.set_mode(name)
            if changed["mode"] == changed["previous"]:
                return f"already in {permissions.mode.value} mode"
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        except PermissionError:
            raise CommandError(
                "bypass mode is only available when skillkit starts with "
                "--dangerously-bypass-permissions"
            ) from None
        return None  # the renderer draws the mode_changed event

    async def _skill(self, inner: Command, ctx: CommandContext, args: str) -> CommandResult | None:
        from skillkit.abort import AbortSignal
        from skillkit.commands.skills import parse_action_call, skill_registry
        from skillkit.skills.actions import ActionError
        from skillkit.skills.registry import UnknownSkillError

        registries = ctx.registries
        if registries is None or registries.skills is None:
            return await run_command(inner, args, ctx)
        skills = skill_registry(ctx)
        call = parse_action_call(skills, args)  # bad arguments fail before anything is drawn
        if call is None:
            return await run_command(inner, args, ctx)
        renderer = self.renderer
        renderer.tool_call(call.title, call.typed)
        abort = AbortSignal()
        try:
            with on_interrupt(lambda: abort.abort("interrupted by the user")):
                result = await skills.run_action(call.skill, call.action, call.values, abort=abort)
        except (ActionError, UnknownSkillError) as exc:
            raise CommandError(f"{call.title}: {' '.join(str(exc).split())}") from None
        renderer.tool_result(call.title, result.to_text(), is_error=not result.ok)
        return None

    async def _compact(self, inner: Command, ctx: CommandContext, args: object) -> CommandResult:
        drawn: builtins.list[Event] = []
        session = self.session

        def seen(event: Event) -> None:
            if event.type == "compaction_end":
                drawn.append(event)

        def interrupted() -> None:
            session.abort("interrupted by the user")

        stop = session.listen(seen)
        try:
            with on_interrupt(interrupted):
                if isinstance(args, str):
                    result = await run_command(inner, args, ctx)
                else:
                    values = dict(args) if isinstance(args, dict) else {}
                    result = await call_command(inner, values, ctx)
        finally:
            stop()
        if drawn:  # the renderer has shown how it went
            return CommandResult(quit=result.quit, send=result.send)
        return result


def _hanging(line: str, width: int) -> str:
    """``line`` broken at spaces to ``width`` columns, the lines after the first
    indented to where its second column starts (after its first run of two spaces or
    more; a ``session:`` list under its first word; a line that is itself indented, as
    far as it is)."""
    import re
    import textwrap

    if len(line) <= width:
        return line
    lead = len(line) - len(line.lstrip())
    column = re.match(r"\s*\S.*?\s{2,}(?=\S)", line) or re.match(r"\s*\S+\s", line)
    indent = len(column.group(0)) if column is not None and lead < 4 else lead
    if indent > width // 2:
        indent = lead + 4
    return textwrap.fill(
        line,
        width=width,
        subsequent_indent=" " * indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
