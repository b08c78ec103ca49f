"""The contributor example of docs/extending.md runs as written and prints what it says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def test_extending_page_example_prints_what_the_page_says(tmp_path: Path) -> None:
    text = DOC.read_text()
    code = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    expected = text.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "extending.py"
    script.write_text(code)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
