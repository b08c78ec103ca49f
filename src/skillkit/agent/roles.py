"""The parts a runner is given rather than builds: the permission layer (`ModeControl`)
and the child agents (`ChildSpawner`), and the ledger of what its children spent.

The runner holds each role in a typed slot (`Roles`), filled explicitly — the
``permissions`` / ``children`` arguments of `AgentRunner`, or `Roles.provide` — or by
`AgentRunner.add_contributor` when the contributor offers that part (``approvals`` and
``set_mode``; ``spawn_child``), the way every other part of a contributor is read. The
runner's `set_mode`, `approvals` and `spawn` only delegate here; faces reach these
parts through `AgentSession`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Protocol

from skillkit.agent.budget import SessionBudget
from skillkit.agent.request import LoopState
from skillkit.events import EventBus, Usage
from skillkit.models import TokenUsage

__all__ = [
    "ApprovalResponder",
    "ChildSpawner",
    "ChildUsage",
    "ModeControl",
    "RoleAliases",
    "Roles",
]


class ApprovalResponder(Protocol):
    """Where answers to approval requests go (the permission layer's broker)."""

    def respond(self, request_id: str, decision: Any) -> bool: ...


class ModeControl(Protocol):
    """The permission layer: it owns the agent's permission mode and approvals."""

    @property
    def approvals(self) -> ApprovalResponder: ...

    def set_mode(self, mode: Any) -> Any: ...


class ChildSpawner(Protocol):
    """The subagents layer: it runs child agents."""

    async def spawn_child(self, definition: Any, prompt: str, *, description: str = "") -> Any: ...


def _offers(owner: object, *names: str) -> bool:
    """Whether ``owner``'s class defines every one of ``names`` (nothing is evaluated)."""
    return all(hasattr(type(owner), name) for name in names)


class Roles:
    """The runner's permission layer and child-agent runner (each None until given)."""

    __slots__ = ("budget", "children", "permissions", "spent")

    def __init__(
        self, permissions: ModeControl | None = None, children: ChildSpawner | None = None
    ) -> None:
        self.permissions = permissions
        self.children = children
        self.spent = ChildUsage()
        self.budget: SessionBudget | None = None
        """The session's limits, set by the session layer (`AgentSession.set_budget`)."""
        """What was spent on the runner's behalf outside its own model calls (its child
        agents', `AgentRunner.add_usage`)."""

    def provide(
        self, *, permissions: ModeControl | None = None, children: ChildSpawner | None = None
    ) -> Callable[[], None]:
        """Fill the given slots (the last one given wins); returns a function that empties
        them again if they still hold these parts."""
        if permissions is not None:
            self.permissions = permissions
        if children is not None:
            self.children = children

        def undo() -> None:
            if permissions is not None and self.permissions is permissions:
                self.permissions = None
            if children is not None and self.children is children:
                self.children = None

        return undo

    def offered_by(self, contributor: object) -> Callable[[], None]:
        """Fill the slots whose part ``contributor`` offers (a contributor added to the
        runner); returns the undo of `provide`."""
        permissions: Any = contributor if _offers(contributor, "approvals", "set_mode") else None
        children: Any = contributor if _offers(contributor, "spawn_child") else None
        return self.provide(permissions=permissions, children=children)

    def mode_control(self) -> ModeControl:
        if self.permissions is None:
            raise RuntimeError(
                "no permission gate on this runner: call "
                "skillkit.permissions.install(runner, gate) first"
            )
        return self.permissions

    def spawner(self) -> ChildSpawner:
        if self.children is None:
            raise RuntimeError(
                "no child agents on this runner: add skillkit.subagents.Subagents(...) "
                "to its contributors"
            )
        return self.children


class ChildUsage:
    """What a runner's child agents spent: tokens, and cost at their own models' prices
    (None once one child's prices were unknown)."""

    __slots__ = ("cost", "usage")

    def __init__(self) -> None:
        self.usage = TokenUsage()
        self.cost: float | None = 0.0

    def add(
        self, usage: TokenUsage, cost: float | None, state: LoopState, events: EventBus
    ) -> TokenUsage:
        """Count a child's ``usage`` and ``cost`` here and in the runner's cumulative
        ``state``, and emit a ``usage`` event whose turn part is the child's; returns the
        runner's new cumulative usage."""
        self.usage = self.usage + usage
        self.cost = None if cost is None or self.cost is None else self.cost + cost
        state.cumulative_usage = state.cumulative_usage + usage
        if cost is not None:
            state.cumulative_cost = (state.cumulative_cost or 0.0) + cost
        events.emit_nowait(
            Usage(
                turn_usage=usage,
                cumulative_usage=state.cumulative_usage,
                turn_cost=cost,
                cumulative_cost=state.cumulative_cost,
            )
        )
        return state.cumulative_usage


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"AgentRunner.{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


class RoleAliases:
    """The seed's role methods of `AgentRunner`, kept as deprecated aliases: each warns
    (`DeprecationWarning`) and delegates to the part that owns it (see docs/api.md's
    changelog for the replacements)."""

    roles: Roles

    @property
    def approvals(self) -> ApprovalResponder:
        """Deprecated: ``AgentSession.respond`` or ``permissions.approvals``."""
        _deprecated("approvals", "AgentSession.respond or Permissions.approvals")
        return self.roles.mode_control().approvals

    def set_mode(self, mode: str) -> str:
        """Deprecated: `AgentSession.set_mode` (or ``Permissions.set_mode``)."""
        _deprecated("set_mode", "AgentSession.set_mode or Permissions.set_mode")
        previous = self.roles.mode_control().set_mode(mode)
        return str(getattr(previous, "value", previous))

    async def spawn(self, definition: Any, prompt: str, *, description: str = "") -> Any:
        """Deprecated: `AgentSession.spawn` (or ``Subagents.spawn_child``)."""
        _deprecated("spawn", "AgentSession.spawn or Subagents.spawn_child")
        spawner = self.roles.spawner()
        return await spawner.spawn_child(definition, prompt, description=description)

    @property
    def child_usage(self) -> TokenUsage:
        """Deprecated: `AgentSession.child_usage` (``runner.roles.spent.usage``)."""
        _deprecated("child_usage", "AgentSession.child_usage")
        return self.roles.spent.usage

    @property
    def child_cost(self) -> float | None:
        """Deprecated: `AgentSession.child_cost` (``runner.roles.spent.cost``)."""
        _deprecated("child_cost", "AgentSession.child_cost")
        return self.roles.spent.cost
