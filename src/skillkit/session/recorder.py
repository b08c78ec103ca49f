"""`SessionRecorder`: keeps a session in step with a runner's transcript.

The runner's transcript changes at known points, each followed by an event: the user,
steering and boundary messages before a model call (``turn_start``), the assistant
message and its tool results (``turn_end``, which carries them), a compaction
(``compaction_end``), calls closed after an abort or a failure (``agent_end``). At
``turn_end`` the recorder appends what the event carries; at the other points it
compares the transcript with what it has written:

- the usual case, messages added at the end: each new message is appended as an entry;
- anything else (a compaction rewrote the start, the transcript was cleared): the
  messages kept verbatim are found by identity (messages are immutable values, kept as
  the same objects), and one `CompactionEntry` records the new head and the first entry
  kept, then any new messages follow.

It reads the transcript through the runner's public ``messages`` property; it never
changes the runner. When a run ends the file is forced to disk and the index brought up
to date in a worker thread (`Session.sync_soon`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, Protocol

from skillkit.agent.contributors import AgentHandle
from skillkit.context.markers import SUMMARY_KIND
from skillkit.events import AgentEnd, AgentStart, CompactionEnd, ErrorInfo, Event, TurnEnd
from skillkit.models import AgentMessage, CustomMessage, message_text
from skillkit.permissions.events import ModeChanged
from skillkit.secrets import Redactor
from skillkit.session.format import Entry, ModelChangeEntry

__all__ = ["SessionRecorder"]

log = logging.getLogger("skillkit.session")

_FIRST = -1_000_000
"""The recorder's handlers run before any other handler of their event."""

_KINDS = frozenset(
    {"agent_start", "turn_start", "turn_end", "compaction_end", "agent_end", "mode_changed"}
)


class RecordedSession(Protocol):
    """What the recorder needs of a `Session` (kept apart so the two modules do not
    import each other)."""

    redactor: Redactor | None

    @property
    def id(self) -> str: ...

    def context_items(self) -> list[tuple[str, int, AgentMessage]]: ...

    def branch(self) -> list[Entry]: ...

    def append_message(self, message: AgentMessage) -> Entry: ...

    def append_custom_entry(self, kind: str, data: Any) -> Entry: ...

    def append_model_change(self, model: str, provider: str = "") -> Entry: ...

    def append_mode_change(self, mode: str, previous: str | None = None) -> Entry: ...

    def append_compaction(
        self,
        *,
        summary: str,
        head: list[AgentMessage],
        first_kept_id: str | None,
        first_kept_offset: int = 0,
        tokens_before: int = 0,
        tokens_after: int = 0,
    ) -> Entry: ...

    def sync_soon(self) -> None: ...

    def unwritten(self) -> Awaitable[None] | None: ...


class SessionRecorder:
    """The event half of a `Session` attached to a runner (made by `Session.attach`):
    a handler of the few kinds that mark a transcript change, first of their handlers.

    ``emit`` never raises: a failure to write is logged and reported once as an
    ``error`` event (stage ``session``), and recording stops, so a full disk never
    breaks a run."""

    def __init__(self, session: RecordedSession, agent: AgentHandle) -> None:
        self.session = session
        self.agent = agent
        if session.redactor is None:
            redactor = getattr(agent, "redactor", None)
            session.redactor = (
                redactor if isinstance(redactor, Redactor) else Redactor.from_environment()
            )
        items = session.context_items()
        if items and not getattr(agent, "messages", None):
            raise ValueError(
                f"session {session.id} has a conversation but the runner has none: build "
                "it with AgentRunner(messages=session.context(), contributors=[session])"
            )
        self._mirror: list[AgentMessage] = [m for _, _, m in items]
        self._where: list[tuple[str, int]] = [(i, o) for i, o, _ in items]
        self._custom: dict[int, CustomMessage] = {}
        self._tokens: tuple[int, int] = (0, 0)
        self._model = _last_model(session)
        self._failed = False
        self._compacted = False
        self._stops = [  # only these kinds: a run builds no event for the session
            agent.events.on(kind, self.emit, priority=_FIRST) for kind in sorted(_KINDS)
        ]
        self.flush()

    def detach(self) -> None:
        """Stop recording: the handlers leave the runner's bus (between runs)."""
        for stop in self._stops:
            stop()
        self._stops = []
        self._failed = True

    def rebase(self) -> None:
        """The session's leaf moved (`Session.move_to`): from now on the recorded
        transcript is the new branch's context. The runner's transcript must then be
        replaced by that context (the same message objects, so the next comparison
        finds nothing new but results that close open calls)."""
        items = self.session.context_items()
        self._mirror = [m for _, _, m in items]
        self._where = [(i, o) for i, o, _ in items]
        self._custom.clear()
        self._tokens = (0, 0)
        self._compacted = False
        self._model = _last_model(self.session)

    def expect_custom(self, message: CustomMessage) -> None:
        """``message`` is an in-context custom entry about to enter the transcript: when
        it appears, it is written as a `CustomEntry`, not as a message."""
        self._custom[id(message)] = message

    def emit(self, event: Event[Any]) -> Awaitable[None] | None:
        """Record what ``event`` marks. Returns what the session is still storing (an
        async store's session), for the bus to wait for before the run goes on; None
        when everything is stored."""
        kind = event.type
        if self._failed or (kind not in _KINDS):
            return None
        self._record(event)
        if self._failed:
            return None
        pending = self.session.unwritten()
        return self._stored(pending) if pending is not None else None

    async def _stored(self, pending: Awaitable[None]) -> None:
        try:
            await pending
        except Exception as exc:
            self._stop(exc)

    def _stop(self, exc: Exception) -> None:
        self._failed = True
        log.error("session %s: recording stopped: %s", self.session.id, exc)
        self.agent.events.emit_nowait(
            ErrorInfo(stage="session", message=f"the session stopped recording: {exc}")
        )

    def _record(self, event: Event[Any]) -> None:
        kind = event.type
        try:
            payload = event.payload
            if kind == "turn_end" and isinstance(payload, TurnEnd) and not self._compacted:
                self._turn_end(payload)
            elif kind == "agent_start" and isinstance(payload, AgentStart):
                if payload.model:
                    self._note_model(payload.model)
            elif kind == "mode_changed" and isinstance(payload, ModeChanged):
                self.session.append_mode_change(payload.mode, payload.prev_mode)
            elif kind == "agent_end" and isinstance(payload, AgentEnd):
                if payload.stop_reason not in ("stop", "length"):
                    self.flush()  # an abort or a failure may have closed open calls
                self.session.sync_soon()
            else:
                if kind == "compaction_end" and isinstance(payload, CompactionEnd):
                    self._tokens = (payload.tokens_before, payload.tokens_after)
                    self._compacted = True
                elif kind == "turn_start":
                    self._compacted = False
                self.flush()
        except Exception as exc:
            self._stop(exc)

    def catch_up(self) -> Awaitable[None] | None:
        """`flush` between runs (a face added a message to the transcript); returns what
        the session is still storing, as `emit` does. A failure stops recording as one
        in `emit` does."""
        if self._failed:
            return None
        try:
            self.flush()
        except Exception as exc:
            self._stop(exc)
            return None
        pending = self.session.unwritten()
        return self._stored(pending) if pending is not None else None

    def _turn_end(self, payload: TurnEnd) -> None:
        """The turn added its reply and results right after what ``turn_start`` saw
        (nothing else changes the transcript in between unless a compaction ran, and then
        `flush` compares the whole transcript instead)."""
        message = payload.message
        mirror = self._mirror
        if message is None or any(m is message for m in mirror[-1:]):
            self.flush()
            return
        self._add(message)
        for result in payload.tool_results:
            self._add(result)

    def _note_model(self, model: str) -> None:
        if model != self._model:
            self._model = model
            self.session.append_model_change(model)

    def flush(self) -> None:
        """Write whatever the transcript gained since the last call."""
        messages = getattr(self.agent, "messages", None)  # the runner's copy of it
        transcript: list[AgentMessage] = messages if isinstance(messages, list) else []
        mirror = self._mirror
        count = len(mirror)
        if len(transcript) >= count and (count == 0 or transcript[count - 1] is mirror[-1]):
            for message in transcript[count:]:
                self._add(message)
            return
        self._rewrite(transcript)

    def _add(self, message: AgentMessage) -> None:
        custom = self._custom.pop(id(message), None)
        if custom is not None and custom is message:
            entry = self.session.append_custom_entry(custom.kind, custom.payload)
        else:
            entry = self.session.append_message(message)
        self._mirror.append(message)
        self._where.append((entry.id, 0))

    def _rewrite(self, transcript: list[AgentMessage]) -> None:
        """The transcript is no longer the recorded one plus new messages: record the
        new head as a compaction, keeping the entries that survived verbatim."""
        positions = {id(m): i for i, m in enumerate(self._mirror)}
        # the last message that survived, then back while the survivors stay in order
        end = len(transcript)
        last = -1
        for index in range(len(transcript) - 1, -1, -1):
            if id(transcript[index]) in positions:
                last = index
                break
        if last < 0:  # nothing survived: a clear, or all summarised
            start = 0
            while start < len(transcript) and isinstance(transcript[start], CustomMessage):
                start += 1  # what a compaction put first (the summary and pinned notes)
            end = start
            j = 0
            kept_from: tuple[str, int] | None = None
            head = transcript[:start]
            new = transcript[start:]
        else:
            start = last
            j = positions[id(transcript[last])]
            while start > 0 and j > 0:
                previous = transcript[start - 1]
                if previous is self._mirror[j - 1] or (
                    id(previous) not in positions and type(previous) is type(self._mirror[j - 1])
                ):  # the same message, or one a micro compaction shortened in place
                    start -= 1
                    j -= 1
                    continue
                break
            kept_from = self._where[j]
            head = transcript[:start]
            new = transcript[last + 1 :]
            end = last + 1
        before, after = self._tokens
        self._tokens = (0, 0)
        entry = self.session.append_compaction(
            summary=_summary_text(head),
            head=list(head),
            first_kept_id=kept_from[0] if kept_from else None,
            first_kept_offset=kept_from[1] if kept_from else 0,
            tokens_before=before,
            tokens_after=after,
        )
        kept_where = self._where[j : j + (end - start)] if kept_from is not None else []
        self._mirror = list(transcript[:end])
        self._where = [(entry.id, i) for i in range(len(head))] + kept_where
        for message in new:
            self._add(message)


def _summary_text(head: list[AgentMessage]) -> str:
    for message in head:
        if isinstance(message, CustomMessage) and message.kind == SUMMARY_KIND:
            payload = message.payload
            if isinstance(payload, dict) and isinstance(payload.get("summary"), str):
                return str(payload["summary"])
    return "\n".join(message_text(m) for m in head if message_text(m))[:2000]


def _last_model(session: RecordedSession) -> str:
    for entry in reversed(session.branch()):
        if isinstance(entry, ModelChangeEntry):
            return entry.model
    return ""
