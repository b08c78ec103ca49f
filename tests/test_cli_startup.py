"""What ``skillkit -p`` loads: a run on the scripted model imports none of the large
modules only some runs need (the start-up budget itself is measured in
``bench/bench_startup.py``, never timed here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HELLO = ROOT / "examples" / "scripts" / "hello.yaml"

NOT_AT_START = (
    "pydantic",  # argument models: the first tool call validates
    "importlib.metadata",  # entry points: only when a package declares some
    "tree_sitter",  # the shell parser: the first command judged
    "skillkit.permissions.classifier",
    "sqlite3",  # a SQLite session store only
    "skillkit.extensions.claude_plugins",  # only with a plugin folder
    "skillkit.mcp.servers",  # only with MCP servers set
    "skillkit.doctor",  # subcommands: only when named
    "skillkit.frontends.batch_cli",
)

pytestmark = pytest.mark.timeout(60)


def test_a_print_run_loads_none_of_the_modules_it_does_not_need(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from skillkit.cli import main\n"
        f"code = main(['-p', 'hello', '--model', 'scripted:{HELLO}'])\n"
        f"print(code, [m for m in {NOT_AT_START!r} if m in sys.modules])\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.splitlines()[-1] == "0 []", out.stdout + out.stderr
