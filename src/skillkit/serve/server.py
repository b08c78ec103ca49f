"""`WebServer`: one session over HTTP on the loopback interface, for a browser page.

Why a small asyncio server of our own rather than a framework: the face has three
routes (the page, a command endpoint, an event stream), binds to 127.0.0.1 only and
serves one user; a framework (aiohttp, Starlette + an ASGI server) would add several
runtime dependencies to every SkillKit install for that, and would still need the same
token, host and origin checks written here. The HTTP subset it speaks is the one in
`skillkit.serve.http`, with every size and wait bounded.

Routes (every one requires the token, see below):

- ``GET /`` — the web page (`skillkit.serve.page`), with a Content-Security-Policy
  that allows only its own inlined script and style;
- ``POST /command`` — a JSON command (the RPC mode's ``{"type": ..., "id": ...}``),
  answered with the session's response dict as JSON (status 200 whether or not the
  command succeeded; 400 with a response-shaped error for a body that is not a JSON
  object);
- ``GET /events`` — Server-Sent Events: each session event as one ``data:`` line of
  JSON, comments as a heartbeat.

Security, failing closed: the token (random, 256 bits) is compared in constant time and
is taken from ``Authorization: Bearer TOKEN`` or, for ``GET`` only, the ``token`` query
parameter (the page's URL, and ``EventSource``, which cannot set headers); without it
every request, whatever its path, is a bare 401. The ``Host`` header must name this
server (no DNS rebinding); a ``POST`` must be ``application/json`` and must not come
from another origin (``Origin`` / ``Sec-Fetch-Site``); no CORS header is ever sent.
Responses are ``no-store``, ``nosniff``, ``no-referrer`` (the token is in the page's
URL) and may not be framed. Nothing is logged, so the token is printed only where the
caller prints `WebServer.url`.

Events reach every open stream straight from one subscription to the session, written
to each connection without an extra task or queue; a stream whose reader falls more
than `MAX_PENDING_BYTES` behind is cut (its page reconnects and reloads the
conversation), so one stalled tab never holds the others back or grows memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import msgspec

from skillkit.serve.http import MAX_HEAD_BYTES, HttpError, Request, read_request, render_head
from skillkit.serve.page import Page, load_page
from skillkit.serve.protocol import ServedSession

__all__ = ["HOST", "MAX_CONNECTIONS", "MAX_PENDING_BYTES", "WebServer", "new_token"]

HOST = "127.0.0.1"
"""The only interface the server listens on."""
MAX_CONNECTIONS = 64
"""Open connections beyond this are answered 503 and closed."""
MAX_PENDING_BYTES = 8 * 1024 * 1024
"""Unsent event bytes after which a stream is cut."""
IDLE_TIMEOUT = 60.0
"""Seconds a connection may wait between (or within) requests."""

_COMMON_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_NO_CONTENT_POLICY = "default-src 'none'; frame-ancestors 'none'"
_ROUTES = {"/": "GET", "/events": "GET", "/command": "POST"}
_encode = msgspec.json.Encoder().encode


def new_token() -> str:
    """A fresh random token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(32)


class _Stream:
    """One open event stream: its connection, cut when it falls too far behind.

    Frames sent in one turn of the event loop go out in one write (a burst of deltas
    is one system call, not one per delta), flushed before the loop next waits."""

    __slots__ = ("_pending", "closed", "writer")

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.closed = asyncio.Event()
        self._pending: list[bytes] = []

    def send(self, frame: bytes) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(frame)

    def _flush(self) -> None:
        frames, self._pending = self._pending, []
        transport = self.writer.transport
        if transport.is_closing():
            self.closed.set()
            return
        if transport.get_write_buffer_size() > MAX_PENDING_BYTES:
            transport.abort()
            self.closed.set()
            return
        transport.write(b"".join(frames))


class WebServer:
    """Serve ``session`` to browsers on ``127.0.0.1:port`` (0: a free port).

    Use as ``async with WebServer(session) as server:`` (or `start` / `aclose`); the
    server never closes the session, its owner does. ``token`` defaults to
    `new_token`; ``page`` to the package's page. `url` is the address to open, token
    included — show it to the user once and nowhere else. ``heartbeat`` is the seconds
    between keep-alive comments on an idle event stream.
    """

    def __init__(
        self,
        session: ServedSession,
        *,
        port: int = 0,
        token: str | None = None,
        page: Page | None = None,
        heartbeat: float = 15.0,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0..65535, got {port}")
        token = new_token() if token is None else token
        if len(token) < 16 or not token.isascii() or not token.isprintable():
            raise ValueError("the token must be at least 16 printable ASCII characters")
        self._session = session
        self._requested_port = port
        self._token = token.encode("ascii")
        self._page = page if page is not None else load_page()
        self._heartbeat = heartbeat
        self._server: asyncio.Server | None = None
        self._pump: asyncio.Task[None] | None = None
        self._streams: set[_Stream] = set()
        self._connections: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._port = 0

    # ----------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        """The port listened on (known once started)."""
        return self._port

    @property
    def url(self) -> str:
        """The page's address with the token: the one thing to show the user."""
        return f"http://{HOST}:{self._port}/?token={self._token.decode('ascii')}"

    async def start(self) -> None:
        """Subscribe to the session and start listening. Raises `OSError` when the port
        cannot be bound."""
        if self._server is not None:
            raise RuntimeError("the server is already started")
        self._pump = asyncio.create_task(self._forward_events(), name="skillkit-serve-events")
        await asyncio.sleep(0)  # the subscription exists before the first page connects
        try:
            self._server = await asyncio.start_server(
                self._connection, HOST, self._requested_port, limit=MAX_HEAD_BYTES
            )
        except BaseException:
            self._pump.cancel()
            raise
        self._port = int(self._server.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        """Stop listening, end every stream and connection, unsubscribe. Idempotent."""
        if self._server is not None:
            self._server.close()
        for stream in list(self._streams):
            stream.closed.set()
        for writer in list(self._writers):
            writer.transport.abort()  # drop unsent bytes: a reader that stalled cannot hold us
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def __aenter__(self) -> WebServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ----------------------------------------------------------------- events

    async def _forward_events(self) -> None:
        subscription = self._session.subscribe()
        # A subscription that hands out encoded records (`Subscription.next_json` and
        # `take_ready`) is read as bytes, in batches: no decode and encode again.
        next_json = getattr(subscription, "next_json", None)
        take_ready = getattr(subscription, "take_ready", None)
        try:
            if callable(next_json) and callable(take_ready):
                while (first := await next_json()) is not None:
                    self._send_frames([first, *take_ready()])
            else:
                async for event in subscription:
                    self.broadcast(event)
        finally:
            for stream in list(self._streams):
                stream.closed.set()
            closer = getattr(subscription, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()

    def broadcast(self, event: Mapping[str, object]) -> None:
        """Send ``event`` to every open stream now (also used for the server's own
        events). An event that cannot be encoded as JSON is dropped."""
        try:
            data = _encode(event)
        except (TypeError, msgspec.EncodeError):
            return
        self._send_frames([data])

    def _send_frames(self, records: list[bytes]) -> None:
        """Send JSON ``records`` (each one line) to every open stream."""
        if not self._streams:
            return
        frame = b"".join(b"data: " + record + b"\n\n" for record in records)
        for stream in list(self._streams):
            stream.send(frame)

    # ----------------------------------------------------------------- connections

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._writers.add(writer)
        try:
            if len(self._connections) > MAX_CONNECTIONS:
                await self._send_json(
                    writer, HTTPStatus.SERVICE_UNAVAILABLE, {"error": "busy"}, keep_alive=False
                )
                return
            while True:
                try:
                    request = await asyncio.wait_for(read_request(reader), IDLE_TIMEOUT)
                except HttpError as exc:
                    await self._send_json(
                        writer, exc.status, {"error": exc.status.phrase.lower()}, keep_alive=False
                    )
                    return
                if request is None:
                    return
                if not await self._serve(request, reader, writer):
                    return
        except (TimeoutError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 5)

    async def _serve(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; whether the connection may carry another."""
        keep = request.keep_alive
        if not self._authorized(request):
            await self._send_json(
                writer,
                HTTPStatus.UNAUTHORIZED,
                {"error": "unauthorized"},
                keep_alive=keep,
                extra={"WWW-Authenticate": "Bearer"},
            )
            return keep
        if request.headers.get("host") not in self._own_hosts():
            await self._send_json(
                writer, HTTPStatus.FORBIDDEN, {"error": "forbidden"}, keep_alive=False
            )
            return False
        method = _ROUTES.get(request.path)
        if method is None:
            await self._send_json(
                writer, HTTPStatus.NOT_FOUND, {"error": "not found"}, keep_alive=keep
            )
            return keep
        if request.method != method:
            await self._send_json(
                writer,
                HTTPStatus.METHOD_NOT_ALLOWED,
                {"error": "method not allowed"},
                keep_alive=keep,
                extra={"Allow": method},
            )
            return keep
        if request.path == "/":
            await self._send(
                writer,
                HTTPStatus.OK,
                self._page.html,
                content_type="text/html; charset=utf-8",
                keep_alive=keep,
                policy=self._page.content_security_policy,
            )
            return keep
        if request.path == "/events":
            if self._pump is None or self._pump.done():  # the session's stream has ended
                await self._send_json(
                    writer,
                    HTTPStatus.SERVICE_UNAVAILABLE,
                    {"error": "the session is closed"},
                    keep_alive=False,
                )
                return False
            await self._stream(reader, writer)
            return False
        return await self._command(request, writer)

    def _authorized(self, request: Request) -> bool:
        given: str | None = None
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, value = header.partition(" ")
            if scheme.lower() == "bearer":
                given = value.strip()
        elif request.method == "GET":
            given = request.query.get("token")
        if given is None:
            return False
        return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self._token)

    def _own_hosts(self) -> tuple[str, str]:
        return (f"{HOST}:{self._port}", f"localhost:{self._port}")

    def _same_origin(self, request: Request) -> bool:
        origin = request.headers.get("origin")
        if origin is not None and origin not in {f"http://{host}" for host in self._own_hosts()}:
            return False
        site = request.headers.get("sec-fetch-site")
        return site is None or site in ("same-origin", "none")

    async def _command(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        keep = request.keep_alive
        if not self._same_origin(request):
            await self._send_json(
                writer, HTTPStatus.FORBIDDEN, {"error": "forbidden"}, keep_alive=False
            )
            return False
        media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            await self._send_json(
                writer,
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                {"error": "commands are application/json"},
                keep_alive=keep,
            )
            return keep
        try:
            command = json.loads(request.body)
        except (ValueError, RecursionError):
            command = None
        if not isinstance(command, dict):
            await self._send_json(
                writer,
                HTTPStatus.BAD_REQUEST,
                _failure(None, None, "the body must be one JSON object: a command"),
                keep_alive=keep,
            )
            return keep
        try:
            response = await self._session.handle(command)
        except Exception:  # the session promises not to raise; say nothing about why
            response = _failure(command.get("id"), command.get("type"), "internal error")
        await self._send_json(writer, HTTPStatus.OK, response, keep_alive=keep)
        return keep

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        headers = {
            **_COMMON_HEADERS,
            "Content-Security-Policy": _NO_CONTENT_POLICY,
            "Content-Type": "text/event-stream; charset=utf-8",
            "X-Accel-Buffering": "no",
        }
        stream = _Stream(writer)
        writer.write(render_head(HTTPStatus.OK, headers, length=None, keep_alive=False))
        writer.write(b"retry: 1000\n: connected\n\n")
        self._streams.add(stream)
        try:
            await writer.drain()
            ended = asyncio.ensure_future(stream.closed.wait())
            try:
                while not stream.closed.is_set():
                    readable = asyncio.ensure_future(reader.read(1024))
                    done, _ = await asyncio.wait(
                        {readable, ended},
                        timeout=self._heartbeat,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    if readable in done:
                        if not readable.result():
                            return  # the browser went away
                        continue  # a client has nothing to say on a stream; ignore it
                    readable.cancel()
                    if not done:
                        stream.send(b": ping\n\n")
            finally:
                ended.cancel()
        finally:
            self._streams.discard(stream)

    # ----------------------------------------------------------------- responses

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: HTTPStatus,
        body: Mapping[str, object],
        *,
        keep_alive: bool,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        try:
            data = _encode(body)
        except (TypeError, msgspec.EncodeError):
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            data = _encode({"error": "the response could not be encoded"})
        await self._send(
            writer,
            status,
            data,
            content_type="application/json",
            keep_alive=keep_alive,
            extra=extra,
        )

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: HTTPStatus,
        body: bytes,
        *,
        content_type: str,
        keep_alive: bool,
        policy: str = _NO_CONTENT_POLICY,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        headers = {
            **_COMMON_HEADERS,
            "Content-Security-Policy": policy,
            "Content-Type": content_type,
            **(extra or {}),
        }
        writer.write(render_head(status, headers, length=len(body), keep_alive=keep_alive) + body)
        await writer.drain()


def _failure(command_id: object, command: object, message: str) -> dict[str, object]:
    return {
        "type": "response",
        "id": command_id,
        "command": command,
        "success": False,
        "error": message,
    }
