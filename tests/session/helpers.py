"""Helpers shared by the session tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skillkit.context import convert_to_llm
from skillkit.models import AgentMessage
from skillkit.tool_pairing import tool_pairing_problems

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def resendable(messages: list[AgentMessage]) -> list[str]:
    """What makes ``messages`` invalid to send to a model again (empty: valid)."""
    return tool_pairing_problems(convert_to_llm(messages))


def run_cli(
    *args: str, home: Path, cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``skillkit`` in a subprocess with ``home`` as its home folder."""
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from skillkit.cli import main; raise SystemExit(main())", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
