"""`AcpSettings`: how ``skillkit acp`` builds each session (no ACP SDK needed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.frontends.setup import AgentOptions, CliAgent

__all__ = ["AcpSettings"]


@dataclass(frozen=True)
class AcpSettings:
    """How ``skillkit acp`` builds each session: ``options`` as for ``skillkit`` (the
    workspace is replaced by each session's folder), ``models`` the model names a client
    may switch to, ``ui_timeout`` the seconds a permission request may wait (None:
    no limit). ``build`` makes the agent (default `build_agent`; tests and embedders
    replace it)."""

    options: AgentOptions
    models: tuple[str, ...] = ()
    ui_timeout: float | None = 300.0  # AgentSession's DEFAULT_UI_TIMEOUT
    build: Callable[[AgentOptions], CliAgent] | None = field(default=None, compare=False)
