"""``kill -9`` of the ``skillkit`` command mid-run, on every store: the session opens,
every turn finished before the kill is there, and the context can be sent again."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillkit.models import AssistantMessage, UserMessage
from skillkit.session import MessageEntry
from skillkit.session.store_protocol import SessionStoreProtocol
from tests.session.helpers import resendable
from tests.session.test_crash import SCRIPT, confirmed_turns

KILLS = 6
pytestmark = pytest.mark.timeout(180)


def written(store: SessionStoreProtocol, cwd: Path, text: str) -> bool:
    for info in store.list(cwd):
        context = store.open(info.id, write=False).context()
        if UserMessage(content=text) in context:
            return True
    return False


def test_kill_9_of_the_command_loses_at_most_the_entry_in_flight_on_every_store(
    url: str, store: SessionStoreProtocol, tmp_path: Path
) -> None:
    rng = random.Random(7)
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    (cwd / "notes.txt").write_text("remember the milk\n")
    script = tmp_path / "loop.yaml"
    script.write_text(SCRIPT)
    skillkit = Path(sys.executable).with_name("skillkit")
    env = {**os.environ, "HOME": str(home)}
    flags = ["--session-store", url, "--model", f"scripted:{script}", "--allow", "bash(sleep:*)"]
    session_id = None
    finished = 0
    for kill in range(KILLS):
        out = tmp_path / f"events-{kill}.jsonl"
        with open(out, "wb") as events:
            process = subprocess.Popen(
                [str(skillkit), "-p", f"run {kill}", "-c", "--mode", "json", *flags],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=events,
                stderr=subprocess.DEVNULL,
            )
        try:
            deadline = time.monotonic() + 30
            while not written(store, cwd, f"run {kill}"):
                assert time.monotonic() < deadline, "the run wrote nothing in time"
                assert process.poll() is None, "skillkit exited early"
                time.sleep(0.02)
            time.sleep(rng.uniform(0.02, 0.8))
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
        (info,) = store.list(cwd)
        session_id = session_id or info.id
        assert info.id == session_id, "-c must go on with the same session"
        session = store.open(session_id, write=False)
        assert all("incomplete" in w for w in session.warnings), session.warnings
        assert all(e.parent_id is None or e.parent_id in session.by_id for e in session.entries)
        assert resendable(session.context()) == []
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
    assert not (home / ".skillkit" / "sessions").exists() or url.startswith("file://")
