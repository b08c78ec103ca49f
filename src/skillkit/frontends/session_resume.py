"""``/resume [ID]``: the terminal goes on with another saved session of this folder.

`TerminalResume` is the command over the terminal's `SessionSwitch` (the switch the web
page uses too, `skillkit.frontends.session_switch`): ``/resume ID`` takes an id or the
start of one and opens that session through `SessionSwitch.open_session`; ``/resume``
alone marks the picker (`skillkit.frontends.session_picker`) to open at the prompt,
where no other screen is drawn, and `pick` shows it. `choices` are what Tab offers
after ``/resume``. The terminal itself follows the switch (`SessionSwitch.on_change`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.commands.dispatch import CommandError
from skillkit.frontends.session_commands import SessionCommandError

if TYPE_CHECKING:
    from skillkit.frontends.session_switch import SessionSwitch
    from skillkit.frontends.terminal import TerminalRenderer
    from skillkit.session import SessionInfo

__all__ = ["TerminalResume"]


class TerminalResume:
    """``/resume`` over ``switch``; ``renderer`` draws what the picker decided."""

    def __init__(self, switch: SessionSwitch, renderer: TerminalRenderer) -> None:
        self.switch = switch
        self.renderer = renderer
        self.picking = False
        """Set by ``/resume`` alone: the caller shows the picker (`pick`) at the prompt."""

    def others(self) -> list[SessionInfo]:
        """This folder's saved sessions that hold a conversation (or a name), the one
        open left out, most recent first. `SessionCommandError` when they cannot be
        listed."""
        recorded = self.switch.current.session
        here = recorded.id if recorded is not None else None
        return [
            info
            for info in self.switch.sessions()
            if info.id != here and (info.messages or info.name)
        ]

    def choices(self) -> list[tuple[str, str]]:
        """What Tab offers after ``/resume``: each other session's id with its name or
        first prompt (nothing when the sessions cannot be listed)."""
        try:
            others = self.others()
        except SessionCommandError:
            return []
        return [(info.id, " ".join(info.title.split())[:60]) for info in others]

    async def command(self, args: str) -> str | None:
        """``/resume ID``: go on with the saved session whose id is, or starts with, ID
        (`CommandError` with one line when none or several do, or the switch refuses);
        ``/resume``: `picking` is set."""
        typed = args.strip()
        if not typed:
            self.picking = True
            return None
        try:
            ids = [info.id for info in self.switch.sessions()]
        except SessionCommandError as exc:
            raise CommandError(str(exc)) from None
        matches = [typed] if typed in ids else [i for i in ids if i.startswith(typed)]
        if not matches:
            raise CommandError(
                f"no saved session of this folder has an id starting with {typed!r} "
                "(Tab completes them; /resume alone opens the list)"
            )
        if len(matches) > 1:
            shown = ", ".join(matches[:4]) + (" …" if len(matches) > 4 else "")
            raise CommandError(f"{typed!r} starts {len(matches)} session ids ({shown}): type more")
        try:
            await self.switch.open_session(matches[0])
        except SessionCommandError as exc:
            raise CommandError(str(exc)) from None
        return None

    async def pick(self) -> str | None:
        """The picker over the `others`: the id picked, or None (a line says why: none
        to pick, cancelled, or they cannot be listed). Clears `picking`."""
        from skillkit.frontends.session_picker import pick_session, session_rows

        self.picking = False
        try:
            others = self.others()
        except SessionCommandError as exc:
            self.renderer.notice(str(exc))
            return None
        if not others:
            self.renderer.info("no other saved session in this folder to resume")
            return None
        _, row = await pick_session(session_rows(others))
        if row is None:
            self.renderer.info("no session resumed")
            return None
        return next(info.id for info in others if info.path == row.value)
