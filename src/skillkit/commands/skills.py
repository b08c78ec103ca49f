"""The skill commands: ``/skills`` lists them; ``/skill:NAME [ARGS]`` hands a skill to
the agent; ``/skill:NAME ACTION [ARGS]`` runs one of its actions with no model.

An action's arguments are ``key=value`` tokens or values in parameter order, split like
a shell line (quote with ``"..."``). `parse_action_call` is shared with frontends that
draw an action's run themselves.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillkit.commands.dispatch import CommandContext, CommandError, CommandResult

if TYPE_CHECKING:
    from skillkit.skills.registry import SkillRegistry

__all__ = [
    "ActionCall",
    "parse_action_call",
    "skill_command",
    "skill_registry",
    "skills_command",
]

SKILL_USAGE = "usage: /skill:NAME [ARGS] or /skill:NAME ACTION [ARGS]; /skills lists the skills"
_DESCRIPTION_WIDTH = 70


@dataclass(frozen=True, slots=True)
class ActionCall:
    """A skill action the user asked for. ``values`` are the raw values to run it with
    (`SkillRegistry.run_action`); ``typed`` the same values checked and converted, with
    defaults filled in (what to show)."""

    skill: str
    action: str
    values: dict[str, Any]
    typed: dict[str, Any]

    @property
    def title(self) -> str:
        return f"{self.skill}/{self.action}"


def skill_registry(ctx: CommandContext) -> SkillRegistry:
    """The session's skills; `CommandError` when it has none."""
    registries = ctx.registries
    skills = registries.skills if registries is not None else None
    if skills is None:
        raise CommandError("skills are not enabled in this session")
    return skills


def parse_action_call(skills: SkillRegistry, args: str) -> ActionCall | None:
    """The action ``NAME ACTION ARGS`` names, or None when ``args`` does not name an
    action of a loaded skill (the line is then a skill activation). Raises
    `CommandError` (``NAME/ACTION: problem``) for arguments that do not fit."""
    from skillkit.skills.actions import ActionError, parse_command_arguments

    name, _, rest = args.strip().partition(" ")
    action, _, arguments = rest.strip().partition(" ")
    skill = skills.get(name) if name else None
    spec = skill.action(action) if skill is not None and action else None
    if spec is None:
        return None
    try:
        values = parse_command_arguments(spec, shlex.split(arguments))
        typed = spec.validate(values)
    except (ValueError, ActionError) as exc:
        raise CommandError(f"{name}/{action}: {' '.join(str(exc).split())}") from None
    return ActionCall(name, action, values, typed)


def skills_command(ctx: CommandContext, args: str) -> str:
    """``/skills``: each skill as ``/skill:NAME``, eligible ones first, with their
    actions, or why one cannot be used."""
    skills = skill_registry(ctx)
    entries = skills.entries()
    if not entries:
        return "no skills found (searched: " + ", ".join(str(s.path) for s in skills.sources) + ")"
    width = max(len(e.skill.name) for e in entries)
    lines = ["Skills (/skill:NAME ARGS to use one, /skill:NAME ACTION ARGS to run an action):"]
    for entry in entries:
        skill = entry.skill
        left = f"  /skill:{skill.name:<{width}}  {_short(skill.description)}"
        if entry.eligible:
            actions = ", ".join(a.name for a in skill.actions)
            lines.append(left + (f"  [actions: {actions}]" if actions else ""))
        else:
            reason = "switched off in settings" if entry.disabled else "; ".join(entry.unmet)
            lines.append(f"{left}  [{entry.status}: {reason}]")
    return "\n".join(lines)


async def skill_command(ctx: CommandContext, args: str) -> CommandResult:
    """``/skill:NAME ARGS`` sends the skill's instructions and ARGS to the agent (as
    `CommandResult.send`); ``/skill:NAME ACTION ARGS`` runs the action now and returns
    its result (an ``error`` too when it failed)."""
    from skillkit.skills.actions import ActionError
    from skillkit.skills.registry import UnknownSkillError

    skills = skill_registry(ctx)
    name, _, rest = args.strip().partition(" ")
    if not name:
        raise CommandError(SKILL_USAGE)
    call = parse_action_call(skills, args)
    if call is not None:
        try:
            result = await skills.run_action(call.skill, call.action, call.values)
        except (ActionError, UnknownSkillError) as exc:
            raise CommandError(f"{call.title}: {' '.join(str(exc).split())}") from None
        error = None if result.ok else f"{call.title}: {result.summary()}"
        return CommandResult(output=result.to_text(), error=error)
    try:
        message = skills.activation_message(name, rest.strip())
    except UnknownSkillError as exc:
        raise CommandError(str(exc)) from None
    forked = await _run_in_child(ctx, skills, name, message)
    if forked is not None:
        return forked
    return CommandResult(output=f"using skill {name}", send=message)


async def _run_in_child(
    ctx: CommandContext, skills: SkillRegistry, name: str, message: str
) -> CommandResult | None:
    """A skill that declares a child context runs in a child agent, as when the model
    loads it: its instructions are the child's prompt, and only the child's answer is
    sent on to the agent. None when the skill runs in the agent's own context (or the
    session has no child agents)."""
    from skillkit.subagents.skills import fork_target

    entry = skills.entry(name)
    agent = fork_target(entry.skill) if entry is not None else None
    if agent is None or ctx.runner is None:
        return None
    try:
        if ctx.children is not None:  # the child-agent layer, handed over explicitly
            result: Any = await ctx.children.spawn_child(
                agent, message, description=f"skill {name}"
            )
        else:  # a context made by hand: the runner's child-agent slot
            spawner = ctx.runner.roles.spawner()
            result = await spawner.spawn_child(agent, message, description=f"skill {name}")
    except RuntimeError:  # no child agents in this session: the skill runs here
        return None
    except LookupError as exc:  # the agent it names does not exist
        raise CommandError(f"skill {name} runs in agent '{agent}': {exc}") from None
    if not getattr(result, "ok", False):
        reason = getattr(result, "error", None) or getattr(result, "status", "failed")
        raise CommandError(f"skill {name} ran in a child agent and failed: {reason}")
    child = getattr(result, "agent_id", agent)
    return CommandResult(
        output=f"skill {name} ran in child agent {child}",
        send=f"Skill '{name}' ran in a child agent ({child}). Its answer:\n{result.text}",
    )


def _short(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= _DESCRIPTION_WIDTH:
        return text
    return text[: _DESCRIPTION_WIDTH - 1] + "…"
