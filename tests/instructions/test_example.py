"""examples/instructions.py runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_instructions_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "instructions.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "first turn reads the starter: True",
        "second turn reads the edit: True",
    ]
