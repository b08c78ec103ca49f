"""``skillkit serve`` as real processes: a run paused on approvals by one server is
listed and approved over the HTTP API of another server opened on the same session,
and the run goes on with its events on the SSE stream."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

SKILLKIT = Path(sys.executable).with_name("skillkit")
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")

pytestmark = pytest.mark.timeout(90)

PAUSING = """
replies:
  - text: "Writing."
    tool_calls:
      - name: write
        arguments: {path: "hello.txt", content: "hello"}
"""

AFTER = """
replies:
  - text: "Written."
"""


class Served:
    """One ``skillkit serve`` process: its commands and its event stream."""

    def __init__(self, port: int, token: str, events: Any) -> None:
        self.port, self.token, self.events = port, token, events

    def command(self, kind: str, **fields: object) -> dict[str, Any]:
        body = json.dumps({"type": kind, **fields}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/command",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
        return answer

    def until(self, kind: str) -> list[dict[str, Any]]:
        """The stream's records up to the first of ``kind``."""
        records: list[dict[str, Any]] = []
        while not records or records[-1]["type"] != kind:
            line = self.events.readline()
            assert line, "the stream ended early"
            if line.startswith(b"data: "):
                records.append(json.loads(line[6:]))
        return records


@contextmanager
def serve(tmp_path: Path, name: str, script: str, *args: str) -> Iterator[Served]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(script)
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    process = subprocess.Popen(
        [str(SKILLKIT), "serve", "--port", "0", "--model", f"scripted:{path}", *args],
        cwd=tmp_path / "work",
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        found = URL.search(process.stdout.readline())
        assert found, process.stderr.read() if process.stderr else ""
        port, token = int(found.group(1)), found.group(2)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as connection:
            connection.sendall(
                f"GET /events?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
            )
            stream = connection.makefile("rb")
            while stream.readline() != b": connected\n":
                pass
            yield Served(port, token, stream)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert process.returncode == 0


def test_a_run_paused_by_one_server_is_approved_over_http_in_another(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with serve(tmp_path, "pausing", PAUSING) as first:
        state = first.command("get_state")["data"]
        session_id = state["session_id"]
        assert first.command("set_approvals", mode="defer")["success"] is True
        assert first.command("prompt", message="write hello")["success"] is True
        end = first.until("agent_end")[-1]
        assert end["payload"]["stop_reason"] == "approval_pending"
    assert not (work / "hello.txt").exists()

    with serve(tmp_path, "after", AFTER, "--session", session_id) as second:
        listed = second.command("approvals")["data"]["pending"]
        assert [(p["call_id"], p["tool"], p["args"]) for p in listed] == [
            ("call_1", "write", {"path": "hello.txt", "content": "hello"})
        ]
        answer = second.command("approve", call_id="call_1", id="a1")
        assert answer == {
            "type": "response",
            "id": "a1",
            "command": "approve",
            "success": True,
            "data": {"resumed": True, "waiting": []},
        }
        records = second.until("agent_end")
        kinds = [r["type"] for r in records]
        assert kinds.index("run_resume") < kinds.index("tool_execution_end")
        assert records[-1]["payload"]["stop_reason"] == "stop"
        assert records[-1]["payload"]["text"] == "Written."
        assert second.command("get_state")["data"]["pending_approvals"] == []
    assert (work / "hello.txt").read_text() == "hello"
