"""``skillkit -p ... --mode json`` in a subprocess: the header line, then the run's events
in order, one JSON record per line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import skillkit
from skillkit import Event
from skillkit.frontends.agent_session import SCHEMA_VERSION

pytestmark = pytest.mark.timeout(60)

SCRIPT = """
replies:
  - thinking: "Let me look."
    text: "Looking\u2028around."
    tool_calls:
      - {name: ls, arguments: {path: "."}}
  - text: "Two files here."
"""


def run_json(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "a.txt").write_text("a")
    (tmp_path / "home").mkdir(exist_ok=True)
    script = tmp_path / "model.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SKILLKIT_TRUST_PROJECT"}
    env["HOME"] = str(tmp_path / "home")
    command = [sys.executable, "-c", "import sys; from skillkit.cli import main; sys.exit(main())"]
    return subprocess.run(
        [*command, "-p", "what is here?", "--mode", "json", "--model", f"scripted:{script}", *args],
        capture_output=True, cwd=work, env=env, timeout=60,
    )  # fmt: skip


def test_the_header_comes_first_and_names_the_recorded_session(tmp_path: Path) -> None:
    result = run_json(tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split(b"\n")
    assert lines[-1] == b""  # every record ends with a line feed
    header = json.loads(lines[0])
    assert header == {
        "type": "header",
        "mode": "json",
        "skillkit_version": skillkit.__version__,
        "schema_version": SCHEMA_VERSION,
        "session_id": header["session_id"],
    }
    files = list((tmp_path / "home" / ".skillkit" / "sessions").glob("*/*.jsonl"))
    assert len(files) == 1 and header["session_id"] in files[0].read_text()


def test_events_follow_in_the_order_of_the_run(tmp_path: Path) -> None:
    result = run_json(tmp_path, "--no-session")
    header, *rest = result.stdout.split(b"\n")[:-1]
    assert json.loads(header)["session_id"] is None
    events = [Event.from_json(line) for line in rest]  # U+2028 split no record
    types = [event.type for event in events]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    first_turn = types[: types.index("turn_end") + 1]
    assert first_turn[:2] == ["agent_start", "turn_start"]
    order = ["thinking_start", "thinking_end", "text_start", "text_end", "tool_call_start",
             "tool_execution_start", "tool_execution_end", "turn_end"]  # fmt: skip
    positions = [first_turn.index(kind) for kind in order]
    assert positions == sorted(positions)
    assert types.count("turn_start") == types.count("turn_end") == 2
    text = "".join(e.payload.content for e in events if e.type == "text_delta" and e.turn == 1)
    assert text == "Looking\u2028around."
    assert events[-1].payload.text == "Two files here."
