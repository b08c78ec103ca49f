"""SkillKit's own frontends: the interactive terminal, print mode and JSON events.

Each is handed the `AgentSession` of the agent (``Frontend.run(session)``), never the
runner.

The plugin layer knows no face, so whoever builds the session hands these to the
built-in plugin (``PluginManager.for_project(..., frontends=builtin_frontends())``);
it registers them under its name, and a later plugin may replace any of them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from skillkit.extensions.registries import Frontend, FrontendFactory

if TYPE_CHECKING:
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.session_switch import SessionSwitch

__all__ = [
    "BUILTIN_FRONTENDS",
    "InteractiveFrontend",
    "JsonFrontend",
    "PrintFrontend",
    "builtin_frontends",
]


class InteractiveFrontend:
    """The interactive terminal session (`skillkit.frontends.interactive`).

    Options: ``title`` (the first line shown), ``first_prompt`` (run at once, as
    ``skillkit "task"`` gives it), ``sessions`` (a `SessionSwitch` holding the session:
    ``/resume`` goes on with another of this folder's sessions through it). Approvals,
    questions and modes come from the session's permission layer; the commands from its
    table; the skills watched are its plugin manager's."""

    def __init__(
        self, *, title: str = "", first_prompt: str = "", sessions: SessionSwitch | None = None
    ) -> None:
        self.title = title
        self.first_prompt = first_prompt
        self.sessions = sessions

    async def run(self, session: AgentSession) -> int:
        from skillkit.frontends.interactive import InteractiveSession

        terminal = InteractiveSession(
            session,
            title=self.title,
            frontend=self,
            first_prompt=self.first_prompt,
            sessions=self.sessions,
        )
        return await terminal.run()


class PrintFrontend:
    """Runs ``prompt`` once and prints the final answer."""

    def __init__(
        self,
        *,
        prompt: str,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
        output_type: Any = None,
    ) -> None:
        self.prompt, self.out, self.err = prompt, out, err
        self.output_type = output_type

    async def run(self, session: AgentSession) -> int:
        from skillkit.frontends.print_mode import run_print

        out, err = self.out or sys.stdout, self.err or sys.stderr
        return await run_print(session, self.prompt, out=out, err=err, output_type=self.output_type)


class JsonFrontend:
    """Runs ``prompt`` once and prints every event as one JSON line."""

    def __init__(
        self,
        *,
        prompt: str,
        out: IO[bytes] | None = None,
        err: IO[str] | None = None,
        output_type: Any = None,
    ) -> None:
        self.prompt, self.out, self.err = prompt, out, err
        self.output_type = output_type

    async def run(self, session: AgentSession) -> int:
        from skillkit.frontends.print_mode import run_json

        out, err = self.out or sys.stdout.buffer, self.err or sys.stderr
        return await run_json(session, self.prompt, out=out, err=err, output_type=self.output_type)


_DESCRIPTIONS: dict[str, str] = {
    "interactive": "the interactive terminal",
    "print": "print the final answer",
    "json": "print every event as JSON",
}

BUILTIN_FRONTENDS: dict[str, Callable[..., Frontend]] = {
    "interactive": InteractiveFrontend,
    "print": PrintFrontend,
    "json": JsonFrontend,
}
"""SkillKit's own frontend classes by name."""


def builtin_frontends() -> list[FrontendFactory]:
    """A `FrontendFactory` for each of SkillKit's own frontends, for the built-in plugin."""
    return [
        FrontendFactory(name, factory, _DESCRIPTIONS[name])
        for name, factory in BUILTIN_FRONTENDS.items()
    ]
