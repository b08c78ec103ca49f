"""examples/sessions.py runs as written."""

from __future__ import annotations

import subprocess
import sys

from tests.session.helpers import ROOT


def test_the_sessions_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "sessions.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "What is the capital of France? - 4 messages",
        "About 2.1 million.",
    ]
