"""One-shot runs: ``skillkit -p PROMPT`` and ``skillkit -p PROMPT --mode json``.

Both are handed the agent's `AgentSession`, as every face is. `run_print` runs one
prompt and writes the final answer; `run_json` writes a header line (``{"type":
"header", "mode": "json", "skillkit_version": ..., "schema_version": ...,
"session_id": ...}``, see ``docs/faces.md``) and then every event of the run as one
JSON line (`Event.to_json`), from ``agent_start`` to ``agent_end``. It reads the same
stream RPC reads (`AgentSession.subscribe`), with the never-drop rule of that stream: a
slow reader of the JSON lines makes the queue grow, it loses nothing.
Both report failures on the error stream as one line and return the process exit code:

=====  ================================================================
code   meaning
=====  ================================================================
0      the run finished (also when the answer hit the output token limit)
1      the run ended in error, stopped at the iteration limit, or the reader of
       the JSON events closed the pipe
2      usage error (bad arguments, unknown model, unreadable script file)
130    interrupted with Ctrl-C
=====  ================================================================

What reaches a terminal is made safe: the one-line notes on the error stream always,
and the answer when ``out`` is a terminal, have their known secrets redacted
(`skillkit.secrets.Redactor`) and their control characters neutralized
(`skillkit.text.neutralize`). An answer written to a pipe or a file is left exactly as
the model wrote it (redacted still), for programs that read it.

The first Ctrl-C aborts the run through `AgentSession.abort` (the transcript stays
valid, the run ends with ``stop_reason "aborted"``); a second one stops waiting at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

import msgspec

from skillkit.events import Event
from skillkit.frontends.interrupt import on_interrupt
from skillkit.secrets import Redactor
from skillkit.text import neutralize

if TYPE_CHECKING:
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.subscription import Subscription
    from skillkit.models import AgentResponse

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "RunEventWriter",
    "report_outcome",
    "run_json",
    "run_print",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


async def run_print(
    session: AgentSession, prompt: str, *, out: IO[str], err: IO[str], output_type: Any = None
) -> int:
    """Run ``prompt`` and write the final answer (plus a newline) to ``out``; with an
    ``output_type`` (structured output), the validated answer as one line of JSON.
    A handoff (another agent answers from there on) is a line on ``err``:
    ``skillkit: → handed to NAME``."""
    redactor = session.redactor()

    def handed(event: Event) -> None:
        if event.type == "handoff" and event.parent_id is None:
            agent = neutralize(redactor.redact(str(getattr(event.payload, "to_agent", ""))))
            err.write(f"skillkit: → handed to {agent}\n")
            err.flush()

    stop_listening = session.listen(handed)
    try:
        response = await _chat(session, prompt, output_type)
    finally:
        stop_listening()
    if response is None:
        err.write("skillkit: interrupted\n")
        return EXIT_INTERRUPTED
    if output_type is not None:
        if response.output is not None:
            out.write(_output_json(output_type, response.output) + "\n")
            out.flush()
    elif response.stop_reason in ("stop", "tool_use", "length") and response.text:
        text = session.redactor().redact(response.text)
        if _is_terminal(out):
            text = neutralize(text)
        out.write(text if text.endswith("\n") else text + "\n")
        out.flush()
    return report_outcome(response, err, redactor=session.redactor(), session_id=_id_of(session))


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or closed
        return False


async def run_json(
    session: AgentSession, prompt: str, *, out: IO[bytes], err: IO[str], output_type: Any = None
) -> int:
    """Write the header line, run ``prompt`` and write each of its events to ``out`` as
    one JSON line (with an ``output_type``, the run's ``output`` event carries the
    validated answer). Every event is written, in order: the session's stream is read
    with no bound (nothing is dropped; a slow reader makes the queue grow).

    If the reader closes ``out`` the run is aborted and the exit code is 1, silently."""

    def reader_left() -> None:
        session.abort("the reader of the events left")

    writer = RunEventWriter(out, agent_id=session.agent_id, on_closed=reader_left)
    writer.write_line(msgspec.json.encode(session.header("json")))
    if writer.closed:  # nobody reads: run nothing
        return EXIT_FAILED
    stream = session.subscribe(maxsize=None, exclude=frozenset())
    copying = asyncio.ensure_future(_copy(stream, writer))
    try:
        response = await _chat(session, prompt, output_type)
    finally:
        stream.close()  # what is queued is still written
        await copying
    if writer.closed:  # nobody reads the events any more: the run was stopped for that
        return EXIT_FAILED
    if response is None:
        err.write("skillkit: interrupted\n")
        return EXIT_INTERRUPTED
    return report_outcome(response, err, redactor=session.redactor(), session_id=_id_of(session))


async def _copy(stream: Subscription, writer: RunEventWriter) -> None:
    """Hand each record of ``stream`` to ``writer`` until the stream ends."""
    while (line := await stream.next_json()) is not None:
        writer.write_json(line)


def _id_of(session: AgentSession) -> str | None:
    recorded = session.session
    return recorded.id if recorded is not None else None


def report_outcome(
    response: AgentResponse,
    err: IO[str],
    *,
    redactor: Redactor | None = None,
    session_id: str | None = None,
) -> int:
    """Write a one-line note on ``err`` for any outcome but a clean finish; return the
    exit code for ``response``. The note is redacted (``redactor``, default
    `Redactor.from_environment`) and neutralized."""
    match response.stop_reason:
        case "stop" | "tool_use" | "handoff":
            return EXIT_OK
        case "length":
            err.write("skillkit: warning: the answer was cut at the output token limit\n")
            return EXIT_OK
        case "aborted":
            err.write("skillkit: aborted\n")
            return EXIT_INTERRUPTED
        case "max_iterations":
            err.write(
                "skillkit: error: the run stopped at the iteration limit "
                f"({response.iterations} model calls)\n"
            )
            return EXIT_FAILED
        case "approval_pending" if response.pending:  # --approvals defer
            waiting = ", ".join(neutralize(p.tool) for p in response.pending)
            where = (
                f"`skillkit --mode rpc --session {session_id}` (approve / deny)"
                if session_id
                else "nothing: sessions are off, so the paused run was not kept"
            )
            err.write(f"skillkit: paused: {waiting} waits for approval; answer with {where}\n")
            return EXIT_FAILED
        case (
            "error"
            | "context_overflow"
            | "output_invalid"
            | "budget"
            | "guardrail"
            | "approval_pending"
        ):
            redactor = redactor if redactor is not None else Redactor.from_environment()
            message = redactor.redact(response.error or "the run failed")
            err.write(f"skillkit: error: {neutralize(' '.join(message.split()))}\n")
            return EXIT_FAILED


class RunEventWriter:
    """Writes the events of an agent's runs as JSON lines: `emit` takes an `Event`,
    `write_json` a record of the session's stream (`Subscription.next_json`).

    Only events from the root agent's ``agent_start`` to its ``agent_end`` (inclusive)
    are written, so each run is a complete, self-contained sequence; session-level
    events outside a run (``input``, ``idle``) and the session's own records are left
    out. Each line is flushed at once. If ``out`` is closed by the reader, writing
    stops and ``on_closed`` is called once.
    """

    def __init__(
        self,
        out: IO[bytes],
        *,
        agent_id: str = "main",
        on_closed: Callable[[], None] | None = None,
    ) -> None:
        self.out = out
        self.agent_id = agent_id
        self.on_closed = on_closed
        self.closed = False
        self._in_run = False

    def emit(self, event: Event) -> None:
        if self._keeps(event.type, event.agent_id, event.parent_id):
            self.write_line(event.to_json())

    def write_json(self, record: bytes) -> None:
        """Write one JSON record of the stream if it belongs to a run (see the class)."""
        head = _decode_head(record)
        if len(head.payload) and self._keeps(head.type, head.agent_id, head.parent_id):
            self.write_line(record)

    def _keeps(self, kind: str, agent_id: str, parent_id: str | None) -> bool:
        root = agent_id == self.agent_id and parent_id is None
        if not self._in_run:
            if not (root and kind == "agent_start"):
                return False
            self._in_run = True
        if root and kind == "agent_end":
            self._in_run = False
        return True

    def write_line(self, data: bytes) -> None:
        """Write ``data`` and a line feed, flushed (nothing once the reader left)."""
        if self.closed:
            return
        try:
            self.out.write(data + b"\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the reader went away / file closed
            self.closed = True
            if self.on_closed is not None:
                self.on_closed()


class _Head(msgspec.Struct):
    """What `RunEventWriter` reads of a record: an event has a ``payload``."""

    type: str = ""
    agent_id: str = "main"
    parent_id: str | None = None
    payload: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


_decode_head = msgspec.json.Decoder(_Head).decode


def _output_json(output_type: Any, value: Any) -> str:
    from skillkit.output import OutputSpec

    return json.dumps(OutputSpec.of(output_type).dump(value), ensure_ascii=False)


async def _chat(
    session: AgentSession, prompt: str, output_type: Any = None
) -> AgentResponse | None:
    """Run to the end; None if a second Ctrl-C gave up waiting for the abort. The
    session stays open: its owner closes it."""
    task = asyncio.ensure_future(session.run(prompt, output_type=output_type))
    presses = 0

    def interrupted() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            session.abort("interrupted by the user")
        else:
            task.cancel()

    with on_interrupt(interrupted):
        try:
            return await task
        except asyncio.CancelledError:
            if presses < 2:
                raise
            return None
