"""The interactive session's slash commands, dispatched by one function: `run_command`.

=====================  ==========================================================
command                effect
=====================  ==========================================================
``/help``              list the commands and keys
``/quit``, ``/exit``   leave
``/mode [NAME]``       show the permission mode, or switch to NAME
``/skills``            list the skills found (eligible first)
``/reload``            re-read every skill now
``/compact [TEXT]``    summarise the conversation now (TEXT: what the summary keeps)
``/skill:NAME ARGS``   send the skill's instructions and ARGS to the model
``/skill:NAME ACTION`` run one of the skill's actions with no model, show its result
=====================  ==========================================================

Lines starting with ``/`` never reach the model as typed. `run_command` returns a
`CommandOutcome`: leave, send a prompt to the model (``/skill:NAME``), or nothing more.
It draws only through the `TerminalRenderer` and changes state only through the
permissions API and the skill registry.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillkit.frontends.interrupt import on_interrupt

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.frontends.terminal import TerminalRenderer
    from skillkit.permissions import Permissions
    from skillkit.skills.registry import SkillRegistry

__all__ = ["COMMANDS", "CommandContext", "CommandOutcome", "run_command"]

COMMANDS: dict[str, str] = {
    "/help": "show this help",
    "/mode [NAME]": "show the permission mode, or switch to NAME",
    "/skills": "list the skills",
    "/skill:NAME [ARGS]": "use a skill: its instructions and ARGS go to the model",
    "/skill:NAME ACTION ARGS": "run a skill's action now, without the model",
    "/reload": "re-read the skills",
    "/compact [TEXT]": "summarise the conversation now, keeping what TEXT asks for",
    "/quit": "leave SkillKit (also /exit, Ctrl-D)",
}
KEYS: dict[str, str] = {
    "Shift+Tab": "next permission mode (default → accept_edits → plan)",
    "Ctrl-C": "abort the running prompt; twice to exit",
}


@dataclass
class CommandContext:
    """What commands act on; ``permissions``, ``skills`` and ``runner`` are None when the
    session has none (their commands then say so)."""

    renderer: TerminalRenderer
    permissions: Permissions | None = None
    skills: SkillRegistry | None = None
    runner: AgentRunner | None = None


@dataclass(frozen=True)
class CommandOutcome:
    """``quit``: leave the session. ``prompt``: send this text to the model as the user's
    message."""

    quit: bool = False
    prompt: str | None = None


_DONE = CommandOutcome()


async def run_command(line: str, ctx: CommandContext) -> CommandOutcome:
    """Run the slash command ``line`` (it starts with ``/``). Never raises for bad input:
    mistakes are shown as one-line notices."""
    renderer = ctx.renderer
    command, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    if command.startswith("/skill:"):
        return await _skill(command.removeprefix("/skill:"), rest, ctx)
    match command:
        case "/quit" | "/exit":
            return CommandOutcome(quit=True)
        case "/help":
            width = max(map(len, [*COMMANDS, *KEYS]))
            for name, description in (*COMMANDS.items(), *KEYS.items()):
                renderer.info(f"{name:<{width}}  {description}")
        case "/mode":
            _mode(rest, ctx)
        case "/skills":
            _list_skills(ctx)
        case "/compact":
            await _compact(rest, ctx)
        case "/reload":
            if ctx.skills is None:
                renderer.notice("no skills in this session")
            else:
                ctx.skills.reload()
                renderer.info(f"skills reloaded: {len(ctx.skills)} found")
        case _:
            renderer.notice(f"unknown command {command}; /help lists the commands")
    return _DONE


def _mode(name: str, ctx: CommandContext) -> None:
    from skillkit.permissions import PermissionMode

    renderer, permissions = ctx.renderer, ctx.permissions
    if permissions is None:
        renderer.notice("no permission gate in this session")
        return
    if not name:
        current = permissions.mode
        for mode in PermissionMode:
            if mode is PermissionMode.BYPASS and not permissions.gate.modes.bypass_allowed:
                continue
            mark = "●" if mode is current else " "
            renderer.info(f"{mark} {mode.value:<12} {mode.description}")
        return
    try:
        if permissions.set_mode(name) is permissions.mode:
            renderer.info(f"already in {permissions.mode.value} mode")
    except ValueError as exc:
        renderer.notice(str(exc))
    except PermissionError:
        renderer.notice(
            "bypass mode is only available when skillkit starts with "
            "--dangerously-bypass-permissions"
        )


async def _compact(instructions: str, ctx: CommandContext) -> None:
    renderer, runner = ctx.renderer, ctx.runner
    if runner is None:
        renderer.notice("no conversation to compact")
        return
    with on_interrupt(lambda: runner.abort("interrupted by the user")):
        result = await runner.compact(instructions or None)
    if not result.ok and result.type is None:  # no step ran, so no event drew it
        renderer.notice(f"not compacted: {result.error or 'nothing to compact'}")


def _list_skills(ctx: CommandContext) -> None:
    renderer, skills = ctx.renderer, ctx.skills
    if skills is None or not len(skills):
        renderer.info("no skills found")
        if skills is not None:
            for source in skills.sources:
                renderer.info(f"  searched {source.path} ({source.scope})")
        return
    entries = skills.entries()
    width = max(len(e.skill.name) for e in entries)
    for entry in entries:
        skill = entry.skill
        if entry.eligible:
            actions = ", ".join(a.name for a in skill.actions)
            extra = f"  [actions: {actions}]" if actions else ""
            renderer.info(f"  /skill:{skill.name:<{width}}  {_short(skill.description)}{extra}")
        else:
            reason = "switched off in settings" if entry.disabled else "; ".join(entry.unmet)
            renderer.info(f"- /skill:{skill.name:<{width}}  {entry.status}: {reason}")


async def _skill(name: str, arguments: str, ctx: CommandContext) -> CommandOutcome:
    from skillkit.skills.registry import UnknownSkillError

    renderer, skills = ctx.renderer, ctx.skills
    if not name:
        renderer.notice("usage: /skill:NAME [ARGS] or /skill:NAME ACTION [ARGS]; /skills lists")
        return _DONE
    if skills is None:
        renderer.notice("no skills in this session")
        return _DONE
    skill = skills.get(name)
    action, _, action_args = arguments.partition(" ")
    if skill is not None and action and skill.action(action) is not None:
        await _run_action(name, action, action_args, ctx)
        return _DONE
    try:
        message = skills.activation_message(name, arguments)
    except UnknownSkillError as exc:
        renderer.notice(str(exc))
        return _DONE
    renderer.info(f"using skill {name}")
    return CommandOutcome(prompt=message)


async def _run_action(skill: str, action: str, arguments: str, ctx: CommandContext) -> None:
    from skillkit.abort import AbortSignal
    from skillkit.skills.actions import ActionError, parse_command_arguments
    from skillkit.skills.registry import UnknownSkillError

    renderer, skills = ctx.renderer, ctx.skills
    assert skills is not None
    entry = skills.get(skill)
    spec = entry.action(action) if entry is not None else None
    assert spec is not None
    title = f"{skill}/{action}"
    abort = AbortSignal()
    try:
        values = parse_command_arguments(spec, shlex.split(arguments))
        typed = spec.validate(values)  # report bad arguments before anything is drawn
        renderer.tool_call(title, typed)
        with on_interrupt(lambda: abort.abort("interrupted by the user")):
            result = await skills.run_action(skill, action, values, abort=abort)
    except (ValueError, ActionError, UnknownSkillError) as exc:
        renderer.notice(f"{title}: {' '.join(str(exc).split())}")
        return
    renderer.tool_result(title, result.to_text(), is_error=not result.ok)


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
