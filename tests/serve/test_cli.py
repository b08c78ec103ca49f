"""``skillkit serve`` as a real process: the token on every route, startup errors as one
line, and a clean stop on Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKILLKIT = Path(sys.executable).with_name("skillkit")
HELLO = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")

pytestmark = pytest.mark.timeout(60)


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    return subprocess.Popen(
        [str(SKILLKIT), "serve", *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _status(url: str, *, method: str = "GET", body: bytes | None = None, **headers: str) -> int:
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_serve_refuses_every_request_without_the_right_token_and_stops_on_ctrl_c(
    tmp_path: Path,
) -> None:
    process = _start(tmp_path, "--port", "0", "--model", HELLO, "--no-session")
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = URL.search(line)
        assert found, line
        port, token = found.group(1), found.group(2)
        base = f"http://127.0.0.1:{port}"
        command = json.dumps({"type": "get_state"}).encode()
        json_type = {"Content-Type": "application/json"}
        for auth in ({}, {"Authorization": "Bearer wrong-token-of-some-length"}):
            for path in ("/", "/events", "/command", "/nowhere"):
                assert _status(base + path, **auth) == 401
                assert _status(base + path + "?token=" + token[::-1], **auth) == 401
            assert (
                _status(base + "/command", method="POST", body=command, **json_type, **auth) == 401
            )
        good = {"Authorization": f"Bearer {token}"}
        assert _status(f"{base}/?token={token}") == 200
        assert _status(base + "/command", method="POST", body=command, **json_type, **good) == 200
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
    assert process.returncode == 0, stderr
    assert stdout == ""  # the address was the only line
    assert token not in stderr


def test_a_port_in_use_is_one_error_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _start(tmp_path, "--port", str(port), "--model", HELLO, "--no-session")
        stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 1
    assert stdout == ""
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"skillkit: error: cannot listen on 127.0.0.1:{port}: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--port", "70000"), "a port is 0..65535"),
        (("--port", "http"), "not a port number"),
        (("--ui-timeout", "0"), "must be a positive number of seconds"),
        (("--ui-timeout", "nan"), "must be a positive number of seconds"),
        (("--model", "scripted:/nowhere/script.yaml"), ""),
    ],
)
def test_bad_flags_are_one_usage_error_line(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    process = _start(tmp_path, *args, "--no-session")
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 2, stderr
    assert stdout == ""
    assert stderr.count("\n") == 1 and stderr.startswith("skillkit: error: ")
    assert message in stderr


WRITE_SCRIPT = """\
replies:
  - text: "Writing."
    tool_calls:
      - name: write
        arguments: {path: hello.txt, content: "hi"}
  - text: "The write was refused."
"""


def test_an_approval_nobody_answers_is_denied_after_the_ui_timeout(tmp_path: Path) -> None:
    script = tmp_path / "write.yaml"
    script.write_text(WRITE_SCRIPT, encoding="utf-8")
    process = _start(
        tmp_path,
        "--port",
        "0",
        "--model",
        f"scripted:{script}",
        "--no-session",
        "--ui-timeout",
        "1",
    )
    try:
        assert process.stdout is not None
        found = URL.search(process.stdout.readline())
        assert found
        port, token = int(found.group(1)), found.group(2)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as events:
            events.sendall(
                f"GET /events?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
            )
            stream = events.makefile("rb")
            while stream.readline() not in (b": connected\n",):
                pass
            prompt = json.dumps({"type": "prompt", "message": "write it"}).encode()
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
            base = f"http://127.0.0.1:{port}"
            assert _status(base + "/command", method="POST", body=prompt, **headers) == 200
            records = []
            while not records or records[-1]["type"] != "agent_end":
                line = stream.readline()
                assert line, "the stream ended early"
                if line.startswith(b"data: "):
                    records.append(json.loads(line[6:]))
        kinds = [record["type"] for record in records]
        request = next(record for record in records if record["type"] == "ui_request")
        closed = next(record for record in records if record["type"] == "ui_request_closed")
        assert request["kind"] == "approval" and request["tool_name"] == "write"
        assert closed == {"type": "ui_request_closed", "id": request["id"], "reason": "timeout"}
        assert kinds.index("ui_request") < kinds.index("ui_request_closed")
        end = next(record for record in records if record["type"] == "tool_execution_end")
        assert end["payload"]["result"]["is_error"] is True
        assert not (tmp_path / "hello.txt").exists()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert process.returncode == 0
