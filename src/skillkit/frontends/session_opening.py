"""The sessions of the ``skillkit`` command, opened as it opens its first one, for a
`SessionSwitch`: `open_agent` builds one from `AgentOptions`, `open_agent_for` makes the
switch's `OpenAgent` (a saved session by id, or a new one), `switchable` puts a session
in a switch over this folder's saved sessions. ``skillkit serve`` and the terminal
(``/resume``) both use them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from skillkit.frontends.session_switch import OpenAgent, SessionSwitch, SessionSwitchError

if TYPE_CHECKING:
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.setup_model import AgentOptions

__all__ = ["open_agent", "open_agent_for", "switchable"]


def open_agent(
    options: AgentOptions,
    ui_timeout: float | None,
    *,
    note: Callable[[str], None] | None = None,
) -> AgentSession:
    """The agent ``options`` describe, as ``skillkit`` builds it, in an `AgentSession`;
    its warnings and notices go to ``note``. `skillkit.frontends.setup.SetupError` when
    it cannot be built."""
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.setup import build_agent

    agent = build_agent(options)
    if note is not None:
        for warning in agent.warnings:
            note(f"warning: {warning}")
        for notice in agent.notices:
            note(notice)
        agent.report_plugin_errors(lambda line: note(f"warning: {line}"))
    return AgentSession.from_agent(agent, ui_timeout=ui_timeout)


def open_agent_for(
    options: AgentOptions,
    ui_timeout: float | None,
    *,
    note: Callable[[str], None] | None = None,
) -> OpenAgent:
    """The `OpenAgent` that builds each session from ``options`` (see `open_agent`): a
    saved session by its id, or a new one (saved unless ``options`` turn sessions off)."""
    import dataclasses

    from skillkit.frontends.setup import SetupError

    def opened(ref: str | None) -> AgentSession:
        if ref is None:
            saving: Literal["off", "new"] = "off" if options.session == "off" else "new"
            wanted = dataclasses.replace(options, session=saving, session_ref=None)
        else:
            wanted = dataclasses.replace(options, session="open", session_ref=ref)
        try:
            return open_agent(wanted, ui_timeout, note=note)
        except SetupError as exc:
            raise SessionSwitchError(str(exc)) from None

    return opened


def switchable(
    session: AgentSession,
    options: AgentOptions,
    ui_timeout: float | None,
    *,
    note: Callable[[str], None],
) -> SessionSwitch:
    """``session`` in a `SessionSwitch` whose other sessions are built from ``options``
    the same way (`open_agent_for`), listed from the session store ``options`` name
    (when it cannot be opened: ``note`` says so, and no saved session is offered)."""
    from skillkit.session import open_store

    try:
        store = open_store(options.session_store or None, home=options.home)
    except Exception as exc:  # no store to list: the face still works, without the list
        note(f"warning: this folder's sessions cannot be listed: {' '.join(str(exc).split())}")
        store = None
    opener = open_agent_for(options, ui_timeout, note=note)
    return SessionSwitch(session, open_agent=opener, store=store, workspace=options.workspace)
