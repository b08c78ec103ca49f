import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "tools.md"


def test_the_usage_example_in_the_tools_page_runs(tmp_path: Path) -> None:
    example = re.search(r"```python\n(import asyncio.*?)```", DOC.read_text(), re.S)
    assert example is not None
    done = subprocess.run(
        [sys.executable, "-c", example.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "update: hello\nupdate: world\nDone.\n"
