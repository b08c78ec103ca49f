"""`SessionSwitch`: a face's current session, which the user can change for another of
this folder's saved sessions — the web page's (``skillkit serve``) and the terminal's
(``/resume``) alike.

``skillkit serve`` hands the server a `SessionSwitch` rather than one `AgentSession`. It
is a `ServedSession`: commands go to the current session's command table, and its one
event stream follows whichever session is current. The terminal keeps drawing the
current session (`SessionSwitch.on_change`). It adds three commands to that table (so
``get_commands`` lists them and every face calls them the same way):

- ``list_sessions`` — this folder's saved sessions, most recently changed first, from
  the session store (`skillkit.session.SessionStoreProtocol`: the JSONL files and the
  SQLite store alike), each ``{"id", "title", "name", "first_message", "messages",
  "modified", "parent_session", "current"}``;
- ``open_session SESSION_ID`` — go on with the saved session of this folder: its id
  exactly as listed (no prefix, no path: anything else is refused);
- ``new_session`` — start an empty session.

Switching builds the new session with ``open_agent`` — the same assembly the server
started with — before it closes the current one, so a session that cannot be opened
(written by another process, unreadable) leaves the page where it was, with one line
saying why. A run in progress (or a compaction) refuses a switch. The stream then
carries ``{"type": "session_changed", "session_id": ...}`` and the new session's events.

`skillkit.frontends.session_opening` makes the `OpenAgent` of the ``skillkit`` command's
options (the same assembly the command started with) and puts a session in a switch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillkit.commands.arguments import Argument
from skillkit.frontends.session_commands import SessionCommandError, entry, install
from skillkit.text import one_line as _one_line

if TYPE_CHECKING:
    from skillkit.commands.dispatch import Command
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.subscription import Subscription
    from skillkit.session import SessionInfo, SessionStoreProtocol

__all__ = ["SWITCH_COMMANDS", "OpenAgent", "SessionSwitch", "SessionSwitchError"]

SWITCH_COMMANDS = ("list_sessions", "open_session", "new_session")
"""The commands a `SessionSwitch` adds to each session's table."""

OpenAgent = Callable[[str | None], "AgentSession"]
"""Makes the session of the saved session ``ref`` (None: a new one); raises
`SessionSwitchError` with one line when it cannot."""

_LIST_LIMIT = 200
"""The most sessions ``list_sessions`` returns (the most recently changed)."""


class SessionSwitchError(ValueError):
    """A session cannot be opened; the message is one line for the user."""


class SessionSwitch:
    """The current `AgentSession` of a served page and the way to change it.

    ``session`` is the first session; ``open_agent`` makes another (see `OpenAgent`);
    ``store`` is where this folder's sessions are listed and ``workspace`` the folder
    (None for either: no saved sessions to list or open, only ``new_session``).
    `aclose` closes the current session.
    """

    def __init__(
        self,
        session: AgentSession,
        *,
        open_agent: OpenAgent,
        store: SessionStoreProtocol | None,
        workspace: Path | None,
    ) -> None:
        self._open_agent = open_agent
        self._store = store
        self._workspace = workspace
        self._lock = asyncio.Lock()
        self._closed = False
        self._changed: list[Callable[[], None]] = []
        self.current = session
        self._uninstall = install(session.commands, self._entries())

    # ----- ServedSession

    async def handle(self, command: Mapping[str, object]) -> dict[str, object]:
        """The current session's answer to ``command`` (see `AgentSession.handle`)."""
        return await self.current.handle(command)

    def subscribe(self) -> _Following:
        """A stream of the current session's events that follows a switch."""
        return _Following(self)

    async def aclose(self) -> None:
        """Close the current session (and end every stream). Idempotent."""
        self._closed = True
        self._uninstall()
        await self.current.aclose()

    # ----- the commands

    def sessions(self) -> list[SessionInfo]:
        """This folder's saved sessions, most recently changed first (at most 200);
        `SessionCommandError` with one line when the store cannot list them."""
        return self._listed()[:_LIST_LIMIT]

    def list_sessions(self) -> dict[str, object]:
        """This folder's saved sessions (``list_sessions``)."""
        recorded = self.current.session
        current = recorded.id if recorded is not None else None
        return {
            "sessions": [
                {
                    "id": info.id,
                    "title": info.title,
                    "name": info.name,
                    "first_message": info.first_message,
                    "messages": info.messages,
                    "modified": info.modified,
                    "parent_session": info.parent_session,
                    "current": info.id == current,
                }
                for info in self._listed()[:_LIST_LIMIT]
            ],
            "current": current,
        }

    async def open_session(self, ref: object) -> dict[str, object]:
        """Go on with this folder's saved session ``ref`` (``open_session``)."""
        if not isinstance(ref, str) or not ref:
            raise SessionCommandError("'session_id' must be a session id")
        if ref not in {info.id for info in self._listed()}:
            raise SessionCommandError(
                "no saved session of this folder has that id (list_sessions lists them)"
            )
        recorded = self.current.session
        if recorded is not None and recorded.id == ref:
            raise SessionCommandError("that session is the one open")
        return await self._switch(ref)

    async def new_session(self) -> dict[str, object]:
        """Start an empty session (``new_session``)."""
        return await self._switch(None)

    def _listed(self) -> list[Any]:
        if self._store is None or self._workspace is None:
            return []
        try:
            return list(self._store.list(self._workspace))
        except Exception as exc:  # a store that fails: one line, not a crash
            raise SessionCommandError(f"cannot list the sessions: {_one_line(exc)}") from None

    async def _switch(self, ref: str | None) -> dict[str, object]:
        async with self._lock:
            if self._closed:
                raise SessionCommandError("the server is closing")
            if self.current.is_running:
                raise SessionCommandError(
                    "a run is in progress: wait for it to end (or abort it) before "
                    "switching sessions"
                )
            try:
                session = self._open_agent(ref)
            except SessionSwitchError as exc:
                raise SessionCommandError(_one_line(exc)) from None
            previous, self.current = self.current, session
            self._uninstall()
            self._uninstall = install(session.commands, self._entries())
            for changed in list(self._changed):
                changed()
            await previous.aclose()
            recorded = session.session
            return {
                "session_id": recorded.id if recorded is not None else None,
                "message_count": len(session.messages),
            }

    def _entries(self) -> list[Command]:
        return [
            entry(
                "list_sessions",
                "this folder's saved sessions, most recent first",
                lambda v: self.list_sessions(),
            ),
            entry(
                "open_session",
                "go on with another saved session of this folder (idle only)",
                lambda v: self.open_session(v["session_id"]),
                Argument(
                    "session_id", required=True, help="the session's id, as list_sessions shows it"
                ),
            ),
            entry(
                "new_session",
                "start an empty session (idle only)",
                lambda v: self.new_session(),
            ),
        ]

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` at each switch, once `current` is the new session (its
        commands installed) and before the one left is closed; returns a function that
        stops it. ``listener`` must not raise."""
        self._changed.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._changed.remove(listener)

        return remove


class _Following:
    """One reader of a `SessionSwitch`'s stream: the current session's subscription,
    replaced by the next session's at a switch (after a ``session_changed`` record).
    Reads as JSON bytes in batches (``next_json``, ``take_ready``), as the server does."""

    def __init__(self, switch: SessionSwitch) -> None:
        self._switch = switch
        self._inner: Subscription = switch.current.subscribe()
        self._next_inner: Subscription | None = None
        self._remove = switch.on_change(self._changed)

    def _changed(self) -> None:
        # Subscribe to the new session at once (its first events are not missed); the
        # old subscription ends when its session closes, and is read to its end first.
        if self._next_inner is not None:
            self._next_inner.close()
        self._next_inner = self._switch.current.subscribe()

    async def next_json(self) -> bytes | None:
        """The next record as JSON, or None when the stream has ended."""
        while True:
            record = await self._inner.next_json()
            if record is not None:
                return record
            if self._next_inner is None:
                self._remove()
                return None
            self._inner, self._next_inner = self._next_inner, None
            recorded = self._switch.current.session
            return _encode_changed(recorded.id if recorded is not None else None)

    def take_ready(self) -> list[bytes]:
        """Every record queued now, without waiting."""
        return self._inner.take_ready()

    def __aiter__(self) -> _Following:
        return self

    async def __anext__(self) -> dict[str, object]:
        import json

        record = await self.next_json()
        if record is None:
            raise StopAsyncIteration
        decoded: dict[str, object] = json.loads(record)
        return decoded

    async def aclose(self) -> None:
        self._remove()
        self._inner.close()
        if self._next_inner is not None:
            self._next_inner.close()


def _encode_changed(session_id: str | None) -> bytes:
    import json

    return json.dumps({"type": "session_changed", "session_id": session_id}).encode("utf-8")
