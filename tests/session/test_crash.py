"""A session survives ``kill -9`` at any moment: the file loads, only the entry being
written can be lost, and the resumed transcript can be sent to a model again."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from skillkit.models import AssistantMessage, UserMessage
from skillkit.session import MessageEntry, SessionStore, read_session
from tests.session.helpers import ROOT, resendable

AGENT = Path(__file__).with_name("scripted_agent.py")
KILLS = 15


def start_agent(home: Path, cwd: Path, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(out, "wb") as handle:
        return subprocess.Popen(
            [sys.executable, str(AGENT), str(home), str(cwd), "100000"],
            stdout=handle,
            stderr=subprocess.DEVNULL,
            env=env,
        )


def wait_for_open(out: Path, process: subprocess.Popen[bytes], timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = out.read_text()
        if text.startswith("OPEN ") and "\n" in text:
            return text.split("\n", 1)[0].removeprefix("OPEN ")
        assert process.poll() is None, "the scripted agent exited early"
        time.sleep(0.01)
    raise AssertionError("the scripted agent did not open its session in time")


def test_kill_9_at_random_moments_loses_at_most_the_entry_in_flight(tmp_path: Path) -> None:
    rng = random.Random(1234)
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir()
    session_id = None
    durable: list[str] = []
    for kill in range(KILLS):
        out = tmp_path / f"out-{kill}.txt"
        process = start_agent(home, cwd, out)
        try:
            opened = wait_for_open(out, process)
            if session_id is None:
                session_id = opened
            assert opened == session_id, "--continue must reopen the same session"
            time.sleep(rng.uniform(0.01, 0.4))
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        reported = out.read_text().split("\n")[1:]
        durable += [line for line in reported[:-1] if line]  # the last line may be torn

        store = SessionStore(home)
        path = store.resolve(session_id)
        data = read_session(path)  # never fails
        assert all("incomplete" in w for w in data.warnings), data.warnings
        ids = {entry.id for entry in data.entries}
        missing = [entry_id for entry_id in durable if entry_id not in ids]
        assert missing == [], f"kill {kill}: entries reported written are gone: {missing}"
        session = store.open(session_id, write=False)
        assert resendable(session.context()) == []

    assert len(durable) > KILLS  # the kills landed while entries were being written
    store = SessionStore(home)
    final = store.open(session_id, write=False)
    users = [
        e
        for e in final.entries
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)
    ]
    assert len(users) >= KILLS  # every run added to the same session
    assert store.list(cwd)[0].id == session_id


SCRIPT = """\
replies:
  - delay: 0.01
    text: "Reading the notes."
    tool_calls:
      - name: read
        arguments: {path: notes.txt}
  - delay: 0.01
    text: "Waiting a little."
    tool_calls:
      - name: bash
        arguments: {command: "sleep 0.05"}
cycle: true
"""


PRINT_KILLS = 12
HELLO = "examples/scripts/hello.yaml"


def confirmed_turns(out: Path) -> int:
    """How many ``turn_end`` events of a killed ``--mode json`` run were followed by
    another event: the session's handlers run right after the sinks, before the next
    event is emitted, so the entries of those turns were written before it was."""
    lines = out.read_bytes().split(b"\n")[:-1]  # the last piece may be cut short
    kinds = [json.loads(line)["type"] for line in lines if line.strip()]
    return sum(1 for i, kind in enumerate(kinds) if kind == "turn_end" and i + 1 < len(kinds))


def test_kill_9_of_skillkit_print_mode_loses_at_most_the_entry_in_flight(
    tmp_path: Path,
) -> None:
    rng = random.Random(99)
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    (cwd / "notes.txt").write_text("remember the milk\n")
    script = tmp_path / "loop.yaml"
    script.write_text(SCRIPT)
    skillkit = Path(sys.executable).with_name("skillkit")
    env = {**os.environ, "HOME": str(home)}
    store = SessionStore(home)
    folder = store.folder(cwd)
    session_id = None
    finished = 0
    for kill in range(PRINT_KILLS):
        out = tmp_path / f"events-{kill}.jsonl"
        with open(out, "wb") as events:
            process = subprocess.Popen(
                [
                    str(skillkit),
                    "-p",
                    f"run {kill}",
                    "-c",
                    "--mode",
                    "json",
                    "--model",
                    f"scripted:{script}",
                    "--allow",
                    "bash(sleep:*)",
                ],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=events,
                stderr=subprocess.DEVNULL,
            )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # until this run's first entries are written
                files = list(folder.glob("*.jsonl")) if folder.exists() else []
                if files and f"run {kill}".encode() in files[0].read_bytes():
                    break
                assert process.poll() is None, "skillkit exited early"
                time.sleep(0.02)
            time.sleep(rng.uniform(0.02, 0.8))
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        (info,) = store.list(cwd)
        session_id = session_id or info.id
        assert info.id == session_id, "-c must go on with the same session"
        data = read_session(Path(info.path))  # never fails
        assert all("incomplete" in w for w in data.warnings), data.warnings
        by_id = {entry.id for entry in data.entries}
        assert all(e.parent_id is None or e.parent_id in by_id for e in data.entries)
        session = store.open(session_id, write=False)
        context = session.context()
        assert resendable(context) == []
        # every turn the run finished before the kill is in the file
        branch = session.branch()
        start = max(
            i
            for i, e in enumerate(branch)
            if isinstance(e, MessageEntry) and e.message == UserMessage(content=f"run {kill}")
        )
        answers = [
            e
            for e in branch[start:]
            if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
        ]
        confirmed = confirmed_turns(out)
        assert len(answers) >= confirmed, f"kill {kill}: a finished turn is missing"
        finished += confirmed

    assert finished > 0  # the kills landed after turns had ended, not only before
    assert session_id is not None
    done = subprocess.run(
        [str(skillkit), "-p", "last", "-c", "--model", f"scripted:{ROOT / HELLO}"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    users = [
        m.content
        for m in store.open(session_id, write=False).context()
        if isinstance(m, UserMessage)
    ]
    assert users == [*(f"run {n}" for n in range(PRINT_KILLS)), "last"]
