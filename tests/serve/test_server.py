"""`WebServer` in process, over real sockets: the token on every route, host and origin
checks, the page's headers, commands, and the event stream fanned out to several
readers."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from collections.abc import AsyncIterator

import pytest

from skillkit.serve import WebServer, new_token
from skillkit.serve.http import MAX_BODY_BYTES
from tests.serve.fakes import EchoSession, exchange, read_head, request

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
async def served() -> AsyncIterator[tuple[WebServer, EchoSession, str]]:
    session = EchoSession()
    token = new_token()
    async with WebServer(session, token=token, heartbeat=0.2) as server:
        yield server, session, token


ROUTES = [("GET", "/"), ("GET", "/events"), ("POST", "/command"), ("GET", "/missing"), ("PUT", "/")]


def _command(
    port: int, token: str | None, body: bytes = b'{"type": "get_state"}', **headers: str
) -> bytes:
    sent = {"Content-Type": "application/json", **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return request("POST", "/command", port, headers=sent, body=body)


def _assert_refused(reply: object) -> None:
    assert reply.status == 401  # type: ignore[attr-defined]
    assert reply.json() == {"error": "unauthorized"}  # type: ignore[attr-defined]
    assert "access-control-allow-origin" not in reply.headers  # type: ignore[attr-defined]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_every_route_refuses_a_request_without_the_token(served, method, path) -> None:
    server, session, _ = served
    reply = await exchange(server.port, request(method, path, server.port))
    _assert_refused(reply)
    assert session.commands == []


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_every_route_refuses_a_wrong_token(served, method, path) -> None:
    server, session, token = served
    wrong = [
        new_token(),
        token[:-1],
        token + "x",
        "",
        token.upper() if token != token.upper() else "A" * 43,
    ]
    for guess in wrong:
        by_query = await exchange(
            server.port, request(method, f"{path}?token={guess}", server.port)
        )
        _assert_refused(by_query)
        by_header = await exchange(
            server.port,
            request(method, path, server.port, headers={"Authorization": f"Bearer {guess}"}),
        )
        _assert_refused(by_header)
    assert session.commands == []


async def test_a_command_carries_the_token_in_its_header_not_its_url(served) -> None:
    server, session, token = served
    raw = request(
        "POST",
        f"/command?token={token}",
        server.port,
        headers={"Content-Type": "application/json"},
        body=b'{"type": "abort"}',
    )
    _assert_refused(await exchange(server.port, raw))
    assert session.commands == []


async def test_a_command_with_the_token_gets_the_sessions_response(served) -> None:
    server, session, token = served
    reply = await exchange(
        server.port, _command(server.port, token, b'{"type": "abort", "id": "7"}')
    )
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == {
        "type": "response",
        "id": "7",
        "command": "abort",
        "success": True,
        "data": {"echo": {"type": "abort", "id": "7"}},
    }
    assert session.commands == [{"type": "abort", "id": "7"}]


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'"prompt"', b"{" * 5000])
async def test_a_body_that_is_not_a_json_object_is_an_error_response(served, body) -> None:
    server, session, token = served
    reply = await exchange(server.port, _command(server.port, token, body))
    assert reply.status == 400
    answer = reply.json()
    assert answer["type"] == "response" and answer["success"] is False and answer["error"]
    assert session.commands == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
async def test_a_cross_origin_command_is_refused_even_with_the_token(served, headers) -> None:
    server, session, token = served
    reply = await exchange(server.port, _command(server.port, token, **headers))
    assert reply.status == 403
    assert session.commands == []


async def test_a_same_origin_command_from_the_page_is_accepted(served) -> None:
    server, session, token = served
    for host in ("127.0.0.1", "localhost"):
        raw = _command(
            server.port,
            token,
            Origin=f"http://{host}:{server.port}",
            **{"Sec-Fetch-Site": "same-origin"},
        )
        assert (await exchange(server.port, raw)).status == 200
    assert len(session.commands) == 2


async def test_a_command_must_be_sent_as_json(served) -> None:
    server, session, token = served
    raw = _command(server.port, token, **{"Content-Type": "text/plain"})
    assert (await exchange(server.port, raw)).status == 415
    assert session.commands == []


async def test_a_foreign_host_name_is_refused_even_with_the_token(served) -> None:
    """DNS rebinding: a page of another site resolved to 127.0.0.1 names its own host."""
    server, session, token = served
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1:1"):
        raw = request("GET", f"/?token={token}", server.port, headers={"Host": host})
        assert (await exchange(server.port, raw)).status == 403
        raw = _command(server.port, token, Host=host)
        assert (await exchange(server.port, raw)).status == 403
    assert session.commands == []


async def test_the_page_is_self_contained_and_only_runs_its_own_script(served) -> None:
    server, _, token = served
    reply = await exchange(server.port, request("GET", f"/?token={token}", server.port))
    assert reply.status == 200
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    html = reply.body.decode()
    assert token not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # no CDN, no remote
    policy = reply.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, flags=re.S)
    assert len(scripts) == 1 and len(styles) == 1
    for kind, block in (("script", scripts[0]), ("style", styles[0])):
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"{kind}-src 'sha256-{digest}'" in policy
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.headers["referrer-policy"] == "no-referrer"
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["x-frame-options"] == "DENY"
    assert not any(name.startswith("access-control-") for name in reply.headers)


async def test_wrong_methods_and_paths_are_answered_without_reaching_the_session(served) -> None:
    server, session, token = served
    auth = {"Authorization": f"Bearer {token}"}
    assert (
        await exchange(server.port, request("GET", "/command", server.port, headers=auth))
    ).status == 405
    assert (
        await exchange(server.port, request("OPTIONS", "/command", server.port, headers=auth))
    ).status == 405
    assert (
        await exchange(server.port, request("GET", "/etc/passwd", server.port, headers=auth))
    ).status == 404
    assert session.commands == []


@pytest.mark.parametrize(
    "raw",
    [
        b"garbage\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
        b"GET http://evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\n folded: header\r\n\r\n",
        b"POST /command HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST /command HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        f"POST /command HTTP/1.1\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode(),
        b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * 100 + b"\r\n",
    ],
)
async def test_malformed_requests_get_an_error_and_the_server_goes_on(served, raw) -> None:
    server, session, token = served
    reply = await exchange(server.port, raw)
    assert 400 <= reply.status < 600
    assert (
        await exchange(server.port, request("GET", f"/?token={token}", server.port))
    ).status == 200
    assert session.commands == []


async def test_one_connection_carries_several_commands(served) -> None:
    server, session, token = served
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        for number in range(3):
            body = json.dumps({"type": "get_state", "id": str(number)}).encode()
            writer.write(_command(server.port, token, body, Connection="keep-alive"))
            status, headers = await read_head(reader)
            answer = json.loads(await reader.readexactly(int(headers["content-length"])))
            assert status == 200 and answer["id"] == str(number)
    finally:
        writer.close()
    assert [command["id"] for command in session.commands] == ["0", "1", "2"]


class _Stream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def next_event(self) -> dict[str, object]:
        """The next ``data:`` record (comments and heartbeats are skipped)."""
        while True:
            frame = (await self.reader.readuntil(b"\n\n")).decode()
            data = [
                line[6:] for line in frame.split("\n") if line.startswith("data: ")
            ]  # SSE splits on LF only
            if data:
                return json.loads("\n".join(data))


async def _open_stream(port: int, token: str) -> _Stream:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        request("GET", f"/events?token={token}", port, headers={"Connection": "keep-alive"})
    )
    status, headers = await read_head(reader)
    assert status == 200
    assert headers["content-type"] == "text/event-stream; charset=utf-8"
    await reader.readuntil(b": connected\n\n")
    return _Stream(reader, writer)


async def test_every_open_stream_sees_every_event_in_order(served) -> None:
    server, session, token = served
    first = await _open_stream(server.port, token)
    second = await _open_stream(server.port, token)
    events = [
        {"type": "text_delta", "payload": {"content": f"part {n}\n\u2028"}} for n in range(20)
    ]
    for event in events:
        session.publish(event)
    for stream in (first, second):
        assert [await stream.next_event() for _ in events] == events
    first.writer.close()
    second.writer.close()


async def test_a_closed_stream_is_dropped_and_the_others_go_on(served) -> None:
    server, session, token = served
    leaving = await _open_stream(server.port, token)
    staying = await _open_stream(server.port, token)
    leaving.writer.close()
    await leaving.writer.wait_closed()
    for number in range(50):
        session.publish({"type": "usage", "n": number})
        await asyncio.sleep(0)
    received = [await staying.next_event() for _ in range(50)]
    assert [event["n"] for event in received] == list(range(50))
    staying.writer.close()


async def test_an_idle_stream_gets_heartbeats(served) -> None:
    server, _, token = served
    stream = await _open_stream(server.port, token)
    assert await asyncio.wait_for(stream.reader.readuntil(b": ping\n\n"), 5)
    stream.writer.close()


async def test_closing_the_server_ends_open_streams() -> None:
    session = EchoSession()
    server = WebServer(session)
    await server.start()
    stream = await _open_stream(server.port, server.url.rpartition("token=")[2])
    await asyncio.wait_for(server.aclose(), 10)
    assert await asyncio.wait_for(stream.reader.read(), 5) == b""


async def test_the_server_listens_on_the_loopback_interface_only() -> None:
    async with WebServer(EchoSession()) as server:
        assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
        assert server._server is not None
        hosts = {socket.getsockname()[0] for socket in server._server.sockets}
        assert hosts == {"127.0.0.1"}


@pytest.mark.parametrize("token", ["short", "x" * 15, "é" * 20, "a b\x00" * 8])
def test_a_weak_or_unprintable_token_is_refused(token) -> None:
    with pytest.raises(ValueError):
        WebServer(EchoSession(), token=token)


async def test_streams_end_and_new_ones_are_refused_once_the_sessions_stream_ends(served) -> None:
    server, session, token = served
    stream = await _open_stream(server.port, token)
    session.end()
    assert await asyncio.wait_for(stream.reader.read(), 5) == b""
    reply = await exchange(server.port, request("GET", f"/events?token={token}", server.port))
    assert reply.status == 503


async def test_a_stalled_stream_is_cut_and_the_others_get_everything(served, monkeypatch) -> None:
    server, session, token = served
    monkeypatch.setattr("skillkit.serve.server.MAX_PENDING_BYTES", 64 * 1024)
    stalled = await _open_stream(server.port, token)  # never read from here on
    reading = await _open_stream(server.port, token)
    count = 3000
    bulk = "x" * 4000

    async def read_all() -> list[int]:
        return [int((await reading.next_event())["n"]) for _ in range(count)]

    reader_task = asyncio.create_task(read_all())
    for number in range(count):
        session.publish({"type": "tool_execution_update", "n": number, "output": bulk})
        await asyncio.sleep(0)
    assert await asyncio.wait_for(reader_task, 20) == list(range(count))
    received = 0
    while chunk := await asyncio.wait_for(stalled.reader.read(1 << 20), 10):
        received += len(chunk)
    assert received < count * len(bulk)  # it was cut: the end of the stream never came
    reading.writer.close()


async def test_a_real_session_serves_its_whole_command_table_over_http() -> None:
    from skillkit import AgentConfig, AgentRunner, AgentSession
    from skillkit.adapters.scripted import ScriptedAdapter
    from skillkit.commands import Argument, Command

    runner = AgentRunner(AgentConfig(model="scripted"), adapter=ScriptedAdapter([]))
    session = AgentSession(runner)
    session.commands.register(
        Command(
            "greet",
            "greet someone",
            lambda ctx, values: {"greeting": f"hello {values['name']}"},
            arguments=(Argument("name", required=True),),
        ),
        source="plugin:greeter",
    )
    token = new_token()
    try:
        async with WebServer(session, token=token, heartbeat=0.2) as server:

            async def send(body: dict[str, object]) -> dict[str, object]:
                raw = json.dumps(body).encode()
                reply = await exchange(server.port, _command(server.port, token, raw))
                answer = reply.json()
                assert isinstance(answer, dict)
                return answer

            greeted = await send({"type": "greet", "name": "web"})
            assert greeted["data"] == {"greeting": "hello web"}
            refused = await send({"type": "greet"})
            assert refused["success"] is False and "'name'" in str(refused["error"])
            listed = await send({"type": "get_commands"})
            names = {entry["name"] for entry in listed["data"]["commands"]}  # type: ignore[index]
            assert {"greet", "prompt", "compact", "help", "get_state"} <= names
            helped = await send({"type": "help", "args": "greet"})
            assert "from: plugin:greeter" in helped["data"]["output"]  # type: ignore[index]
    finally:
        await session.aclose()
