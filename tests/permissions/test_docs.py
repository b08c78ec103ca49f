"""The permissions page: its example runs and its mode table matches the gate."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"


def test_the_example_runs_and_prints_what_the_page_says(tmp_path: Path) -> None:
    code = re.search(r"## Example\n\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert code is not None
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "asked: git push --force - force push" in out.stdout
    assert "result: (would run) git status" in out.stdout
    assert "denied" in out.stdout


def test_the_page_has_the_mode_table() -> None:
    text = DOC.read_text()
    for mode in ("default", "accept_edits", "plan", "bypass"):
        assert f"| `{mode}` |" in text


def test_importing_permissions_loads_no_heavy_modules() -> None:
    code = (
        "import sys, skillkit.permissions; "
        "print([m for m in ('pydantic', 'rich', 'yaml') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
