"""The example of docs/control.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "control.md"


def test_control_page_example_runs(tmp_path: Path) -> None:
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    script = tmp_path / "control.py"
    script.write_text(code)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Changed course as asked."
