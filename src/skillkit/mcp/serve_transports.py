"""The transports of ``skillkit mcp serve``: stdio, and Streamable HTTP on the loopback
interface behind a bearer token."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = ["Buildable", "serve_http", "serve_stdio"]


class Buildable(Protocol):
    """What a transport serves: anything that builds the SDK's low-level server
    (`skillkit.mcp.serve.SkillServer`)."""

    def build(self) -> Server[Any]: ...


async def serve_stdio(server: Buildable) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    from mcp.server.stdio import stdio_server

    app = server.build()
    async with stdio_server() as (read_stream, write_stream):
        await app.run(read_stream, write_stream, app.create_initialization_options())


async def serve_http(
    server: Buildable,
    *,
    port: int,
    token: str,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` over Streamable HTTP at ``http://127.0.0.1:PORT/mcp`` until
    cancelled. Every request must carry ``Authorization: Bearer <token>``; any other is
    answered 401 before the MCP layer sees it. ``ready`` gets the address once the port
    is bound (``port`` 0 picks a free one). Raises `OSError` when it cannot be bound."""
    import socket

    import uvicorn

    if not token:
        raise ValueError("a token is required")
    app = _TokenGuard(server.build().streamable_http_app(host="127.0.0.1"), token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        bound = sock.getsockname()[1]
        sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
        web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        if ready is not None:
            ready(f"http://127.0.0.1:{bound}/mcp")
        await web.serve(sockets=[sock])
    finally:
        sock.close()


class _TokenGuard:
    """An ASGI wrapper refusing every HTTP request without the bearer ``token``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import hmac

        if scope.get("type") == "http":
            given = b""
            for key, value in scope.get("headers") or ():
                if key.lower() == b"authorization":
                    given = value
                    break
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "invalid or missing token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
