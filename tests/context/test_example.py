"""The context example runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_context_compaction_example_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "context_compaction.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    compactions = [line for line in lines if line.startswith("turn ")]
    assert len(compactions) >= 10
    assert all("full compaction ok" in line for line in compactions)
    assert lines[-3].startswith("Read all 200 files. (stop, ")
    assert lines[-2].startswith("on request: full compaction ok")
    assert lines[-1].startswith("manual compaction: ok=True")
