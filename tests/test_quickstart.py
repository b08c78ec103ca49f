"""The README's SDK example runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quickstart_example_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("It is sunny in Paris. (stop, ")
    assert lines[1] == "Still sunny."
    assert lines[2] == "[thinking] The user asks again."  # the label once, not per delta
    assert lines[3] == "Sunny, as before."
    assert result.stdout.count("[thinking]") == 1
