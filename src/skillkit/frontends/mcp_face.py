"""``skillkit mcp serve``'s assembly: this folder's agent in an `AgentSession` with no
user at the terminal (approvals are asked of the MCP client's user when the client can
be asked, else denied), its skills' actions served by a `SkillServer`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from typing import Any

from skillkit import __version__
from skillkit.frontends.args import agent_options

__all__ = ["mcp_server"]


def mcp_server(
    args: argparse.Namespace, note: Callable[[str], None]
) -> tuple[Any, Callable[[], Awaitable[None]]]:
    """``skillkit mcp serve``: this folder's agent in an `AgentSession`, no user there
    (approvals asked through the client, else denied), served by a `SkillServer`; and
    the function closing it."""
    from pathlib import Path

    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.setup import build_agent
    from skillkit.mcp.serve import SkillServer
    from skillkit.skills.runner import ActionTool

    folder = getattr(args, "cwd", None)
    where = {"workspace": Path(os.path.abspath(folder))} if folder else {}
    agent = build_agent(agent_options(args, **where))
    agent.make_non_interactive()
    for line in (*agent.warnings, *agent.notices):
        note(line)
    session = AgentSession.from_agent(agent)
    registry = agent.skills
    skills = registry.eligible() if registry is not None else []
    cwd = registry.cwd if registry is not None else Path.cwd()
    sandbox = registry.sandbox if registry is not None else None
    actions = [ActionTool(s.name, a, cwd, sandbox=sandbox) for s in skills for a in s.actions]
    server = SkillServer(
        actions,
        skills=skills,
        gate=agent.permissions.gate,
        session=session,
        prompt=registry.activation_message if registry is not None else None,
        version=__version__,
    )
    return server, session.aclose
