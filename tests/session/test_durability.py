"""Secrets never reach the file, files are private, one writer per session."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import Reply, ScriptedAdapter
from skillkit.models import UserMessage
from skillkit.secrets import Redactor
from skillkit.session import SessionLockedError, SessionStore
from tests.session.helpers import ROOT

SECRET = "sk-live-0123456789abcdefSECRET"


@tool
def leak() -> str:
    """Print the environment."""
    return f"OPENAI_API_KEY={SECRET}"


async def test_secrets_in_messages_and_tool_output_never_reach_the_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=ScriptedAdapter([Reply(tool_calls=[("leak", {})]), f"the key is {SECRET}"]),
        tools=[leak],
        contributors=[session],
        redactor=Redactor({"OPENAI_API_KEY": SECRET}),
    )
    await agent.chat(f"my key is {SECRET}, keep it safe")
    session.append_custom("plugin", {"token": SECRET})
    await agent.aclose()
    raw = session.path.read_bytes()
    assert SECRET.encode() not in raw
    assert raw.count(b"[REDACTED:OPENAI_API_KEY]") == 4
    index = (session.path.parent / "index.json").read_bytes()
    assert SECRET.encode() not in index
    reloaded = store.open(session.id, write=False)
    assert reloaded.entries == session.entries  # what is in memory is what was written


def test_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="private"))
    session.close()
    for path in session.path.parent.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(session.path.parent.stat().st_mode) == 0o700


def test_a_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    with pytest.raises(SessionLockedError, match=f"pid {os.getpid()}"):
        store.open(session.id)
    with pytest.raises(SessionLockedError):
        store.delete(session.id)
    assert store.open(session.id, write=False).id == session.id  # readers are welcome
    session.close()
    store.open(session.id).close()


HOLDER = """
import sys, time
from skillkit.session import SessionStore
session = SessionStore(sys.argv[1]).open(sys.argv[2])
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_process_is_refused_and_a_killed_holder_releases_the_lock(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.append_message(UserMessage(content="hello"))
    session.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), session.id],
        stdout=subprocess.PIPE,
        env=env,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(SessionLockedError, match=f"pid {holder.pid}"):
            store.open(session.id)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    deadline = time.monotonic() + 10
    reopened = None
    while reopened is None:  # the kernel drops the lock with the process
        try:
            reopened = store.open(session.id)
        except SessionLockedError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    reopened.append_message(UserMessage(content="after the crash"))
    reopened.close()
    assert len(store.open(session.id, write=False).entries) == 2


def test_a_read_only_session_refuses_appends(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    session.close()
    with pytest.raises(RuntimeError, match="not open for writing"):
        store.open(session.id, write=False).append_message(UserMessage(content="x"))


def test_a_secret_that_matches_json_syntax_never_breaks_a_line(tmp_path: Path) -> None:
    from skillkit.models import TextPart, ToolResultMessage

    store = SessionStore(tmp_path, redactor=Redactor({"ODD": '}],"is_error":false'}))
    session = store.create(tmp_path)
    written = session.append_message(ToolResultMessage("c1", "read", [TextPart("fine")]))
    session.close()
    assert store.open(session.id, write=False).entries == [written]
    assert written.message == ToolResultMessage("c1", "read", [TextPart("fine")])  # type: ignore[union-attr]
