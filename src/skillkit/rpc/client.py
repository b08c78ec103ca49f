"""`RpcClient`: drive a ``skillkit --mode rpc`` process from Python.

```python
client = await RpcClient.start("--model", "scripted:examples/scripts/hello.yaml")
await client.prompt("hello")
async for event in client.events():
    if event["type"] == "agent_end":
        break
await client.aclose()
```

Every command is a coroutine that returns the response's ``data`` or raises `RpcError`
with the response's one-line ``error``; `request` sends any command by name. Events and
``ui_request`` records arrive in `events` in the order the process wrote them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import msgspec

from skillkit.frontends.subscription import Record

__all__ = ["RpcClient", "RpcError"]

_STREAM_LIMIT = 64 * 1024 * 1024
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class RpcError(RuntimeError):
    """A command failed (``command`` and the process's one-line ``error``), or the
    process ended before it answered."""

    def __init__(self, command: str, error: str) -> None:
        super().__init__(f"{command}: {error}" if command else error)
        self.command = command
        self.error = error


class RpcClient:
    """A client of one ``skillkit --mode rpc`` process (see `start`).

    ``header`` is the process's first record (SkillKit version, schema version, session
    id). Commands may be sent concurrently; each gets its own id. `events` yields every
    other record; reading it is optional, but what is not read is kept.
    """

    def __init__(self, process: asyncio.subprocess.Process, header: Record) -> None:
        self.process = process
        self.header = header
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[Record]] = {}
        self._events: asyncio.Queue[Record | None] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read(), name="skillkit-rpc-client")
        self._closed = False

    @classmethod
    async def start(
        cls,
        *args: str,
        program: Sequence[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = None,
        timeout: float = 60.0,  # noqa: ASYNC109 - bounds the start, not a command
    ) -> RpcClient:
        """Start ``skillkit --mode rpc ARGS`` (``program``: the command to run instead of
        this interpreter's ``skillkit``) and wait for its header. ``stderr`` is passed to
        the process (default: inherited). Raises `RpcError` when the process ends or
        says nothing within ``timeout`` seconds."""
        command = list(program) if program is not None else _skillkit_command()
        process = await asyncio.create_subprocess_exec(
            *command,
            "--mode",
            "rpc",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            limit=_STREAM_LIMIT,
        )
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), timeout)
            header = _decoder.decode(line) if line.strip() else None
        except (TimeoutError, msgspec.DecodeError):
            header = None
        if not isinstance(header, dict) or header.get("type") != "header":
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            raise RpcError("", f"skillkit --mode rpc did not start (exit code {code})")
        return cls(process, header)

    # ----- commands

    async def request(self, command: str, /, **fields: Any) -> Record:
        """Send command ``command`` (its ``type``) with ``fields``; the response's
        ``data``. Raises `RpcError` when it fails or the process ends first."""
        if self._closed:
            raise RpcError(command, "the client is closed")
        request_id = f"c{next(self._ids)}"
        future: asyncio.Future[Record] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            await self._send({"type": command, "id": request_id, **fields})
            response = await future
        finally:
            self._waiting.pop(request_id, None)
        if not response.get("success"):
            raise RpcError(command, str(response.get("error", "failed")))
        data = response.get("data")
        return data if isinstance(data, dict) else {}

    async def send_raw(self, line: bytes) -> None:
        """Write ``line`` (a newline is added) as it is: for tests of the protocol."""
        await self._write(line + b"\n")

    async def prompt(self, message: str, streaming_behavior: str | None = None) -> Record:
        fields: dict[str, Any] = {"message": message}
        if streaming_behavior is not None:
            fields["streaming_behavior"] = streaming_behavior
        return await self.request("prompt", **fields)

    async def steer(self, message: str) -> Record:
        return await self.request("steer", message=message)

    async def follow_up(self, message: str) -> Record:
        return await self.request("follow_up", message=message)

    async def abort(self) -> Record:
        return await self.request("abort")

    async def bash(self, command: str) -> Record:
        return await self.request("bash", command=command)

    async def get_state(self) -> Record:
        return await self.request("get_state")

    async def respond(self, request_id: str, answer: Any) -> Record:
        """Answer a ``ui_request``: an approval's decision (``"allow"``, ``"always"``,
        ``"deny"``) or a question's answers (a list, one per question)."""
        if isinstance(answer, (str, Mapping)):
            return await self.request("respond", request_id=request_id, decision=answer)
        return await self.request("respond", request_id=request_id, answers=answer)

    # ----- events

    async def events(self) -> AsyncIterator[Record]:
        """Every record but responses, in order, until the process's output ends."""
        while True:
            record = await self._events.get()
            if record is None:
                self._events.put_nowait(None)  # later readers end too
                return
            yield record

    async def next_event(self, *types: str, timeout: float = 30.0) -> Record:  # noqa: ASYNC109
        """The next record of one of ``types`` (any type if none), skipping others.
        Raises `TimeoutError` after ``timeout`` seconds, `RpcError` at end of output."""

        async def find() -> Record:
            async for record in self.events():
                if not types or record.get("type") in types:
                    return record
            raise RpcError("", "the process's output ended")

        return await asyncio.wait_for(find(), timeout)

    # ----- closing

    async def aclose(self, timeout: float = 10.0) -> int:  # noqa: ASYNC109
        """Close stdin (the process finishes the run in progress and exits), wait up to
        ``timeout`` seconds, then kill it. Returns its exit code. Idempotent."""
        self._closed = True
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            code = await self.process.wait()
        await asyncio.gather(self._reader, return_exceptions=True)
        return code

    # ----- internals

    async def _send(self, command: Mapping[str, Any]) -> None:
        await self._write(_encoder.encode(command) + b"\n")

    async def _write(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            raise RpcError("", "the process's input is closed")
        stdin.write(data)
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise RpcError("", "the process ended") from None

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    return
                try:
                    record = _decoder.decode(line)
                except msgspec.DecodeError:
                    continue
                if not isinstance(record, dict):
                    continue
                if record.get("type") == "response":
                    future = self._waiting.get(str(record.get("id")))
                    if future is not None and not future.done():
                        future.set_result(record)
                        continue
                self._events.put_nowait(record)
        finally:
            self._events.put_nowait(None)
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(RpcError("", "the process ended before answering"))


def _skillkit_command() -> list[str]:
    """This interpreter running SkillKit's command line."""
    return [sys.executable, "-c", "import sys; from skillkit.cli import main; sys.exit(main())"]
