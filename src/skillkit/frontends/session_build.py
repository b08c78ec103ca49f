"""Making an `AgentSession`: from the ``skillkit`` command's agent (`of_agent`), or from
a runner alone (`of_runner`), finding the parts the session needs."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from skillkit.agent.runner import AgentRunner
    from skillkit.commands.dispatch import CommandHost
    from skillkit.permissions import Permissions
    from skillkit.session import Session, SessionStore
    from skillkit.subagents import Subagents

__all__ = ["BuiltAgent", "of_agent", "of_runner"]

S = TypeVar("S")


class BuiltAgent(Protocol):
    """What `AgentSession.from_agent` needs of the ``skillkit`` command's agent (a
    `skillkit.frontends.setup.CliAgent` is one)."""

    runner: AgentRunner
    permissions: Permissions
    manager: Any
    session: Session | None
    subagents: Subagents | None

    async def aclose(self) -> None: ...


def of_agent(
    make: type[S],
    agent: BuiltAgent,
    *,
    ui_timeout: float | None,
    home: str | os.PathLike[str] | None,
    owns_agent: bool,
) -> S:
    """`AgentSession.from_agent`: the agent's parts, its session's store (``home``'s
    when given, else the store the session file is in)."""
    store = None
    if agent.session is not None:
        from skillkit.session import SessionStore

        if home is not None:
            store = SessionStore(os.fspath(home))
        else:
            store = SessionStore.containing(agent.session) or SessionStore()
    maker: Any = make
    made: S = maker(
        agent.runner,
        permissions=agent.permissions,
        manager=agent.manager,
        session=agent.session,
        store=store,
        children=agent.subagents,
        ui_timeout=ui_timeout,
        owns_agent=owns_agent,
        close=agent.aclose,
    )
    return made


def of_runner(
    make: type[S],
    runner: AgentRunner,
    *,
    permissions: Permissions | None,
    manager: CommandHost | None,
    store: SessionStore | None,
    ui_timeout: float | None,
    owns_agent: bool,
) -> S:
    """`AgentSession.from_runner`: the permission layer and recorded session found among
    the runner's contributors (``permissions`` given wins)."""
    from skillkit.permissions import Permissions
    from skillkit.session import Session

    if permissions is None:
        permissions = next(
            (c for c in reversed(runner.contributors) if isinstance(c, Permissions)), None
        )
    recorded = next((c for c in runner.contributors if isinstance(c, Session)), None)
    if recorded is not None and store is None:
        from skillkit.session import SessionStore

        store = SessionStore.containing(recorded)
    maker: Any = make
    made: S = maker(
        runner,
        permissions=permissions,
        manager=manager,
        session=recorded,
        store=store,
        ui_timeout=ui_timeout,
        owns_agent=owns_agent,
    )
    return made
