"""Permission modes: how much an agent may do without asking.

=============  ============================================================================
mode           what runs without asking
=============  ============================================================================
default        reads and read-only shell commands; edits, writes, shell commands and
               unknown tools ask unless a rule allows them
accept_edits   as ``default``, plus file edits and writes inside the workspace
plan           reads and read-only shell commands only; everything that changes state is
               refused with a message to the model; ``exit_plan_mode`` asks the user to
               approve the plan
bypass         everything (deny rules still hold); only by an explicit flag, never read
               from a settings file
=============  ============================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

__all__ = [
    "CYCLE",
    "ModeListener",
    "ModeState",
    "PermissionMode",
    "next_mode",
    "parse_mode",
]


class PermissionMode(StrEnum):
    """The four permission modes. The value is the wire string (``"accept_edits"``...)."""

    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    PLAN = "plan"
    BYPASS = "bypass"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    PermissionMode.DEFAULT: "reads run; edits, writes and shell commands ask",
    PermissionMode.ACCEPT_EDITS: "file edits in the workspace run; shell commands ask",
    PermissionMode.PLAN: "read-only: changes are refused until the plan is approved",
    PermissionMode.BYPASS: "everything runs without asking (deny rules still hold)",
}

_ALIASES = {
    "default": PermissionMode.DEFAULT,
    "normal": PermissionMode.DEFAULT,
    "accept_edits": PermissionMode.ACCEPT_EDITS,
    "accept-edits": PermissionMode.ACCEPT_EDITS,
    "acceptedits": PermissionMode.ACCEPT_EDITS,
    "edits": PermissionMode.ACCEPT_EDITS,
    "plan": PermissionMode.PLAN,
    "bypass": PermissionMode.BYPASS,
    "bypass_permissions": PermissionMode.BYPASS,
    "bypass-permissions": PermissionMode.BYPASS,
    "bypasspermissions": PermissionMode.BYPASS,
}

CYCLE: tuple[PermissionMode, ...] = (
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.PLAN,
)
"""The order Shift+Tab walks through. ``bypass`` joins only when it was enabled by flag."""


def parse_mode(text: str | PermissionMode) -> PermissionMode:
    """The mode named by ``text`` (case-insensitive; ``accept-edits`` and a few aliases work).

    Raises `ValueError` with a one-line message listing the valid names.
    """
    if isinstance(text, PermissionMode):
        return text
    mode = _ALIASES.get(text.strip().lower())
    if mode is None:
        names = ", ".join(m.value for m in PermissionMode)
        raise ValueError(f"unknown permission mode {text!r} (expected one of: {names})")
    return mode


def next_mode(current: PermissionMode, *, bypass_allowed: bool = False) -> PermissionMode:
    """The mode after ``current`` in the Shift+Tab cycle.

    ``bypass`` is part of the cycle (after ``plan``) only when ``bypass_allowed``; from
    ``bypass`` the cycle returns to ``default``.
    """
    cycle = (*CYCLE, PermissionMode.BYPASS) if bypass_allowed else CYCLE
    if current not in cycle:
        return PermissionMode.DEFAULT
    return cycle[(cycle.index(current) + 1) % len(cycle)]


ModeListener = Callable[[PermissionMode, PermissionMode], None]
"""Called as ``listener(previous, new)`` after each mode change."""


class ModeState:
    """The current mode of one session, with change listeners.

    ``bypass`` can be entered only when ``bypass_allowed`` (set by an explicit flag or SDK
    argument); asking for it otherwise raises `PermissionError`. Setting the mode it already
    has changes nothing and notifies no one. Listeners run synchronously, in registration
    order, after the change; an exception from one propagates to the caller of `set`.
    """

    def __init__(
        self, mode: PermissionMode | str = PermissionMode.DEFAULT, *, bypass_allowed: bool = False
    ) -> None:
        parsed = parse_mode(mode)
        self.bypass_allowed = bypass_allowed or parsed is PermissionMode.BYPASS
        self._mode = parsed
        self._before_plan = PermissionMode.DEFAULT
        self._listeners: list[ModeListener] = []

    @property
    def mode(self) -> PermissionMode:
        return self._mode

    @property
    def mode_before_plan(self) -> PermissionMode:
        """The mode that was active when ``plan`` was entered (``default`` if none)."""
        return self._before_plan

    def set(self, mode: PermissionMode | str) -> PermissionMode:
        """Switch to ``mode``; returns the previous mode."""
        new = parse_mode(mode)
        if new is PermissionMode.BYPASS and not self.bypass_allowed:
            raise PermissionError(
                "bypass mode must be enabled explicitly (e.g. --dangerously-bypass-permissions)"
            )
        previous = self._mode
        if new is previous:
            return previous
        if new is PermissionMode.PLAN:
            self._before_plan = previous
        self._mode = new
        for listener in list(self._listeners):
            listener(previous, new)
        return previous

    def cycle(self) -> PermissionMode:
        """Move to the next mode of the Shift+Tab cycle; returns the new mode."""
        self.set(next_mode(self._mode, bypass_allowed=self.bypass_allowed))
        return self._mode

    def subscribe(self, listener: ModeListener) -> Callable[[], None]:
        """Call ``listener(previous, new)`` after each change; returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe
