"""examples/subagents.py runs offline and shows two children tagged with their parent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(60)
def test_the_example_runs_two_children_and_answers() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "subagents.py")],
        capture_output=True,
        text=True,
        timeout=45,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sorted(lines[:2]) == [
        "geo-1 (child of main) ran capital",
        "geo-2 (child of main) ran capital",
    ]
    assert lines[2:] == ["Paris and Tokyo."]
