"""The ``skillkit --mode rpc`` loop: JSON commands on stdin, responses and events on stdout.

`serve_rpc` writes the session's header record first, then reads one command per line
(`skillkit.rpc.framing`: strict LF framing) and hands each to `AgentSession.handle`
in its own task — a command that waits (``bash`` waiting for its approval) never stops
the next line from being read, so the ``respond`` that answers it gets through.
Responses, events and ``ui_request`` records share stdout, one JSON record per line,
written in the order they happened by one writer.

When more than `BACKLOG` records wait for stdout, stdin is not read until they are
written: a peer that sends and never reads is slowed down, not buffered without end.
A line that is not JSON gets an error response (``"id": null``, ``"command": ""``); a
line longer than the limit too; nothing on stdin can stop the loop but its end. At
end of input the loop waits for the commands still running and the run in progress
(so ``echo '{"type": "prompt", ...}' | skillkit --mode rpc`` runs the prompt to the end;
an approval then waits for its timeout, which denies it), then returns 0.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import msgspec

from skillkit.frontends.subscription import Record
from skillkit.rpc.framing import MAX_LINE_BYTES, LineTooLong, PipeReader, PipeWriter
from skillkit.text import one_line as _one_line

if TYPE_CHECKING:
    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.subscription import Subscription

__all__ = ["BACKLOG", "serve_rpc"]

BACKLOG = 1_000
"""Records waiting for stdout beyond which stdin is not read (responses are never
dropped, so a peer that sends commands without reading its answers is slowed instead)."""

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


async def serve_rpc(
    session: AgentSession,
    *,
    stdin: int = 0,
    stdout: int = 1,
    max_line: int = MAX_LINE_BYTES,
    queue_size: int | None = None,
) -> int:
    """Serve ``session`` over the file descriptors ``stdin`` / ``stdout`` until end of
    input; returns the exit code (0). ``queue_size``: how many events stdout may fall
    behind by before events are dropped (see `Subscription`; default its own). Leaves
    ``session`` open: the caller closes it."""
    subscription = (
        session.subscribe(maxsize=queue_size) if queue_size is not None else session.subscribe()
    )
    writer = PipeWriter(stdout)
    subscription.push_record(session.header("rpc"))
    written = asyncio.Event()
    writing = asyncio.create_task(_write(subscription, writer, written), name="skillkit-rpc-writer")
    commands: set[asyncio.Task[None]] = set()
    try:
        async for line in PipeReader(stdin, max_line=max_line).records():
            # A peer that sends without reading: stop reading until stdout moves.
            while len(subscription) > BACKLOG and not writing.done():
                written.clear()
                await written.wait()
            if writer.broken:
                break
            if isinstance(line, LineTooLong):
                subscription.push_record(
                    _failure(f"the line is too long ({line.size} bytes; at most {max_line})")
                )
                continue
            if not line.strip():
                continue
            task = asyncio.create_task(_command(session, subscription, line))
            commands.add(task)
            task.add_done_callback(commands.discard)
        if commands:
            await asyncio.gather(*commands, return_exceptions=True)
        if session.is_running and not writer.broken:
            await _wait_quietly(session)
    finally:
        for task in commands:
            task.cancel()
        subscription.close()
        await asyncio.gather(writing, return_exceptions=True)
        writer.close()
    return 0


async def _command(session: AgentSession, subscription: Subscription, line: bytes) -> None:
    try:
        command: Any = _decoder.decode(line)
    except (msgspec.DecodeError, RecursionError) as exc:
        reason = _one_line(exc).removeprefix("JSON is malformed: ")
        subscription.push_record(_failure(f"malformed JSON: {reason}"))
        return
    subscription.push_record(await session.handle(command))


async def _write(subscription: Subscription, writer: PipeWriter, written: asyncio.Event) -> None:
    """Copy the stream to stdout, each wake-up writing everything queued at once."""
    try:
        while True:
            first = await subscription.next_json()
            if first is None:
                return
            batch = [first, *subscription.take_ready()]
            await writer.write(b"\n".join(batch) + b"\n")
            written.set()
            if writer.broken:
                return
    finally:
        written.set()


async def _wait_quietly(session: AgentSession) -> None:
    from skillkit.frontends.agent_session import SessionCommandError

    try:
        await session.wait()
    except SessionCommandError:
        pass


def _failure(error: str) -> Record:
    return {"type": "response", "id": None, "command": "", "success": False, "error": error}
