"""examples/structured_output.py runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_structured_output_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "structured_output.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "stop: Forecast(city='Lyon', high=24, low=13, summary='Sunny') after 2 answers"
    )
    assert lines[1] == "so far: {'city': 'Os'}"
    assert lines[-2] == "so far: {'city': 'Oslo', 'high': 2, 'low': -4, 'summary': 'Snow'}"
    assert lines[-1] == "valid:  city='Oslo' high=2 low=-4 summary='Snow'"
