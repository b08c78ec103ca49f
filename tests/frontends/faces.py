"""Drive a face the way the ``skillkit`` command does: hand it an `AgentSession` over
the runner, then close the session (the runner stays open for the test)."""

from __future__ import annotations

from typing import IO, Any

from skillkit import AgentRunner
from skillkit.commands.builtin import builtin_commands
from skillkit.extensions import PluginManager, Registries
from skillkit.frontends.agent_session import AgentSession
from skillkit.frontends.print_mode import run_json, run_print
from skillkit.skills.registry import SkillRegistry


def session_of(runner: AgentRunner, **options: Any) -> AgentSession:
    """A session over ``runner`` for a face; `aclose` leaves the runner open."""
    options.setdefault("ui_timeout", None)
    return AgentSession.from_runner(runner, **options)


async def print_once(
    runner: AgentRunner, prompt: str, *, out: IO[str], err: IO[str], output_type: Any = None
) -> int:
    session = session_of(runner)
    try:
        return await run_print(session, prompt, out=out, err=err, output_type=output_type)
    finally:
        await session.aclose()


async def json_once(
    runner: AgentRunner, prompt: str, *, out: IO[bytes], err: IO[str], output_type: Any = None
) -> int:
    session = session_of(runner)
    try:
        return await run_json(session, prompt, out=out, err=err, output_type=output_type)
    finally:
        await session.aclose()


def manager_over(skills: SkillRegistry | None) -> PluginManager:
    """A plugin manager holding only SkillKit's own commands over ``skills`` (no plugin
    is loaded, nothing is attached to a runner)."""
    manager = PluginManager(Registries(skills=skills))
    for command in builtin_commands():
        manager.registries.commands.register(command, source="builtin")
    return manager
