"""A local HTTP server for the web tool tests: routes map a path to a handler that
writes the response. It listens on a loopback address the test picks (127.0.0.2 by
default, so a redirect to 127.0.0.1 is a different address) and never leaves this
machine."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[BaseHTTPRequestHandler], None]


class Server:
    def __init__(self, host: str, port: int, seen: list[BaseHTTPRequestHandler]) -> None:
        self.host = host
        self.port = port
        self.seen = seen

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"


def send(
    handler: BaseHTTPRequestHandler,
    body: bytes | str,
    *,
    status: int = 200,
    content_type: str = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> None:
    data = body.encode() if isinstance(body, str) else body
    handler.send_response(status)
    if content_type:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def serve(routes: dict[str, Route], host: str = "127.0.0.2") -> Iterator[Server]:
    seen: list[BaseHTTPRequestHandler] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._route()

        def do_POST(self) -> None:
            self._route()

        def _route(self) -> None:
            seen.append(self)
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                send(self, "not found", status=404, content_type="text/plain")
                return
            try:
                route(self)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer((host, 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(host, httpd.server_address[1], seen)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
