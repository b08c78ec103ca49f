"""A deliberately small HTTP/1.1 reader and writer for the web face.

Only what a loopback page needs: one request at a time per connection (keep-alive, no
pipelining guarantees beyond order), ``Content-Length`` bodies (``Transfer-Encoding``
is refused), origin-form targets, and bounded everything: the head (request line and
headers) is at most `MAX_HEAD_BYTES`, at most `MAX_HEADERS` header lines, a body at most
`MAX_BODY_BYTES`. Anything else is an `HttpError` carrying the status to answer with,
never a crash. Header names are folded to lower case; a repeated header that matters
for security (``host``, ``authorization``, ``content-length``, ``origin``,
``content-type``) is refused rather than guessed at.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qsl

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_HEADERS",
    "MAX_HEAD_BYTES",
    "HttpError",
    "Request",
    "read_request",
    "render_head",
]

MAX_HEAD_BYTES = 16 * 1024
"""The longest request line plus headers accepted (the stream reader's limit)."""
MAX_HEADERS = 64
"""The most header lines accepted in one request."""
MAX_BODY_BYTES = 1024 * 1024
"""The largest request body accepted (a command is small JSON)."""

_SINGLE = frozenset({"host", "authorization", "content-length", "origin", "content-type"})
_TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


class HttpError(Exception):
    """The request cannot be served; answer with ``status`` and close the connection."""

    def __init__(self, status: HTTPStatus) -> None:
        super().__init__(status.phrase)
        self.status = status


@dataclass(frozen=True)
class Request:
    """One parsed request. ``path`` is the target before ``?``, undecoded; ``query`` the
    decoded parameters (the first value of a repeated name); ``headers`` lower-cased
    names; ``keep_alive`` whether the client allows another request on the connection."""

    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    keep_alive: bool = True


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on ``reader``; None when the client closed the connection before
    sending one. Raises `HttpError` for a request that breaks the limits or the grammar.
    The caller bounds the wait (an idle connection is the caller's to time out)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise HttpError(HTTPStatus.BAD_REQUEST) from None
    except asyncio.LimitOverrunError:
        raise HttpError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE) from None
    if len(head) > MAX_HEAD_BYTES:
        raise HttpError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise HttpError(HTTPStatus.BAD_REQUEST) from None
    lines = text[:-4].split("\r\n")
    method, path, query, version = _request_line(lines[0])
    headers = _headers(lines[1:])
    if "transfer-encoding" in headers:
        raise HttpError(HTTPStatus.NOT_IMPLEMENTED)
    length = _content_length(headers.get("content-length"))
    body = b""
    if length:
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise HttpError(HTTPStatus.BAD_REQUEST) from None
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
    return Request(method, path, query, headers, body, keep_alive)


def _request_line(line: str) -> tuple[str, str, dict[str, str], str]:
    parts = line.split(" ")
    if len(parts) != 3:
        raise HttpError(HTTPStatus.BAD_REQUEST)
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED)
    if not method or not set(method) <= _TOKEN_CHARS:
        raise HttpError(HTTPStatus.BAD_REQUEST)
    if not target.startswith("/") or any(ord(c) <= 0x20 or ord(c) >= 0x7F for c in target):
        raise HttpError(HTTPStatus.BAD_REQUEST)
    path, _, raw_query = target.partition("?")
    query: dict[str, str] = {}
    try:
        pairs = parse_qsl(raw_query, keep_blank_values=True, max_num_fields=32)
    except ValueError:
        raise HttpError(HTTPStatus.BAD_REQUEST) from None
    for name, value in pairs:
        query.setdefault(name, value)
    return method, path, query, version


def _headers(lines: list[str]) -> dict[str, str]:
    if len(lines) > MAX_HEADERS:
        raise HttpError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name or not set(name) <= _TOKEN_CHARS:
            raise HttpError(HTTPStatus.BAD_REQUEST)  # obs-fold, bare lines, bad names
        name = name.lower()
        value = value.strip(" \t")
        if name in headers:
            if name in _SINGLE:
                raise HttpError(HTTPStatus.BAD_REQUEST)
            headers[name] = f"{headers[name]}, {value}"
        else:
            headers[name] = value
    return headers


def _content_length(value: str | None) -> int:
    if value is None:
        return 0
    if not value.isascii() or not value.isdigit() or len(value) > 10:
        raise HttpError(HTTPStatus.BAD_REQUEST)
    length = int(value)
    if length > MAX_BODY_BYTES:
        raise HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
    return length


def render_head(
    status: HTTPStatus, headers: Mapping[str, str], *, length: int | None, keep_alive: bool
) -> bytes:
    """The status line and headers of a response, ending with the blank line. ``length``
    None means a body that runs until the connection closes (an event stream)."""
    lines = [f"HTTP/1.1 {status.value} {status.phrase}"]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines.append(
        "Connection: keep-alive" if keep_alive and length is not None else "Connection: close"
    )
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
